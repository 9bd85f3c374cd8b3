// The memory browser in headless Chromium: every view used as a person would, each effect checked in the Markdown.
import { createRequire } from 'node:module';
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { check, until } from '../checks.mjs';

const require = createRequire(path.join(process.env.DRIVER, 'package.json'));
const puppeteer = require('puppeteer-core');
const { MDMEM_URL, MDMEM_HOME, LOGIN_CMD, FAIL_SHOT, SHOT_DIR, PROJECT_NOTE, EXPORT } = process.env;
const TOKEN = fs.readFileSync(path.join(MDMEM_HOME, '.http-token'), 'utf8').trim();
const FACT = "Erin's dog is called Pepper";
const EDITED = "Erin's dog is called Pepper and is eight";
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
const BY_HAND = 'Erin planted tulips by the gate';
const MOVED = 'Erin lives in Oslo';
const MOVED_NOW = 'Erin lives in Bergen now';
const DECIDED = 'The build uses ninja, not make';
const DECIDED_NOW = 'The build uses meson now';
const projectNote = () => fs.readFileSync(PROJECT_NOTE, 'utf8');

const notes = () => fs.readdirSync(path.join(MDMEM_HOME, 'spaces'), { recursive: true })
    .filter(f => f.endsWith('.md')).map(f => path.join(MDMEM_HOME, 'spaces', f));
const allNotes = () => notes().map(f => fs.readFileSync(f, 'utf8')).join('\n');
async function add(text, space) {
    const answer = await fetch(`${MDMEM_URL}/memories`, { method: 'POST', headers: {
        Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: text }], user_id: space }) });
    check(answer.ok, `added "${text.slice(0, 30)}" to ${space}`);
}
const link = () => execSync(LOGIN_CMD, { encoding: 'utf8' }).trim();
const texts = (page, sel) => page.$$eval(sel, nodes => nodes.map(n => n.textContent));
async function shot(page, name) {
    if (!SHOT_DIR) return;
    await page.evaluate(() => document.getElementById('notice').replaceChildren()); // sticky: mid-page in a full shot
    await page.screenshot({ path: path.join(SHOT_DIR, `ui-${name}.png`), fullPage: true });
}
async function tab(page, label) {
    const [button] = await page.$$(`xpath/.//nav//button[normalize-space(.)="${label}"]`);
    await button.click();
}
async function itemWith(page, text) {
    return until(`a memory showing "${text}"`, 20, async () => {
        for (const li of await page.$$('ol.items > li:has(.text)')) {
            if ((await li.$eval('.text', n => n.textContent)).includes(text)) return li;
        }
        return null;
    });
}
async function press(li, label) {
    const [button] = await li.$$(`xpath/.//button[normalize-space(.)="${label}"]`);
    await button.click();
}
// a memory edited from `text` to `now`, its history, then forgotten and put back by keyboard, each seen in note()
async function correct(page, text, now, note, where) {
    await press(await itemWith(page, text), 'Edit');
    await page.waitForSelector('textarea'); // focused: its text is all selected and typed over
    await page.keyboard.down('Control'); await page.keyboard.press('a'); await page.keyboard.up('Control');
    await page.keyboard.type(now);
    await press(await page.$('ol.items > li:has(textarea)'), 'Save');
    await until(`the edit reaches ${where}`, 20, async () => note().includes(now));
    const edited = await itemWith(page, now);
    await press(edited, 'History');
    await until('history lists the update', 20, async () => (await edited.$$eval('ol li', n => n.map(x => x.textContent))).some(t => t.includes('UPDATE')));
    await press(await itemWith(page, now), 'Forget');
    await until(`forget removes the lines from ${where}`, 20, async () => !note().includes(now));
    await until('the list drops it', 20, async () => !(await texts(page, 'ol.items .text')).some(t => t.includes(now)));
    await until('the keyboard lands on Undo', 10, async () => page.evaluate(() => document.activeElement?.textContent === 'Undo'));
    await page.keyboard.press('Enter'); // undone by keyboard alone
    await until(`undo puts the lines back in ${where}`, 20, async () => note().includes(now));
    await itemWith(page, now);
}

await add(FACT, 'erin');
await add(HOSTILE, 'erin');
await add('Frank collects old maps', 'frank');

const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
let page;
try {
    // without a login the page only says how to get one
    const stranger = await browser.createBrowserContext();
    const lost = await stranger.newPage();
    await lost.goto(`${MDMEM_URL}/ui/`);
    await until('the page without a login names `mdmem ui`', 10, async () => (await lost.$eval('#view', n => n.textContent)).includes('mdmem ui'));
    check((await lost.$$('nav button')).length === 0, 'no views without a login');
    const url = link();
    await lost.goto(url);
    await until('the login link opens the views', 10, async () => (await lost.$$('nav button')).length === 6);
    const spent = await (await browser.createBrowserContext()).newPage();
    await spent.goto(url);
    check((await spent.content()).includes('spent or expired'), 'the same link a second time is refused');
    await stranger.close();

    page = await browser.newPage();
    await page.setViewport({ width: 360, height: 740 });
    await page.goto(link());
    await page.waitForSelector('#q');
    check(page.url() === `${MDMEM_URL}/ui/`, 'the login link lands on /ui/ (the code is not left in the address)');
    const paint = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime);
    console.log(`first contentful paint: ${Math.round(paint)} ms (login link to painted page, loopback)`);

    // search, with each hit's signals on demand
    await page.select('#q-space', 'erin');
    await page.type('#q', 'Pepper dog');
    // results follow the typing, no Enter needed; those of a shorter prefix may show first, then give way
    await until('the results answer the whole query', 20, async () => page.$eval('ol.items', n => n.getAttribute('data-query') === 'Pepper dog'));
    const hit = await itemWith(page, FACT);
    await press(hit, 'Why it ranked');
    check((await hit.$eval('pre', n => n.textContent)).includes('{'), 'a hit shows its signals on demand');
    await page.select('#q-type', 'preference');
    await until('a type filter keeps only that type', 20, async () => (await texts(page, 'ol.items > li')).join(' ').includes('Nothing found'));
    await page.select('#q-type', 'episodic');
    await itemWith(page, FACT);
    await shot(page, 'search');

    // what the prompt would get
    await tab(page, 'What the prompt gets');
    await page.waitForSelector('#r-q');
    await page.type('#r-q', "what is Erin's dog called");
    await page.select('#r-space', 'erin');
    await page.keyboard.press('Enter');
    await until('the recall block names Pepper', 20, async () => (await texts(page, '#view pre')).some(t => t.includes('Pepper')));
    await shot(page, 'recall');

    // memories: spaces, hostile text as text
    await tab(page, 'Memories');
    await page.waitForSelector('#m-space');
    await page.select('#m-space', 'frank');
    await itemWith(page, 'old maps');
    check(!(await texts(page, 'ol.items .text')).some(t => t.includes('Pepper')), 'switching space shows only its memories');
    await page.select('#m-space', 'erin');
    await itemWith(page, '<script>');
    check(await page.evaluate(() => window.__pwned === undefined && !document.querySelector('#view img, #view script')),
        'a memory holding HTML and script is shown as text, nothing runs');

    // edit, history, forget and undo, each seen in the Markdown: a global memory, then one of the project's store
    await correct(page, FACT, EDITED, allNotes, 'the note');
    await page.select('#m-store', 'project');
    await page.select('#m-space', '');
    await correct(page, DECIDED, DECIDED_NOW, projectNote, "the project's note");
    check(!allNotes().includes(DECIDED_NOW), 'nothing of it lands in the global store');
    await page.select('#m-store', 'global');
    await page.select('#m-space', 'erin');

    // supersede: the new value beside the old one, which stays struck through in the note
    await add(MOVED, 'erin');
    await press(await itemWith(page, MOVED), 'Supersede');
    const value = await page.waitForSelector('textarea');
    await value.type(MOVED_NOW);
    await press(await page.$('ol.items > li:has(textarea)'), 'Save');
    await until('the note strikes the old value through and holds the new one', 20, async () =>
        allNotes().includes(`~~${MOVED}~~`) && allNotes().includes(MOVED_NOW));
    await itemWith(page, MOVED_NOW);

    // an editor's save shows up without a reload
    const note = notes().find(f => fs.readFileSync(f, 'utf8').includes(EDITED));
    const line = fs.readFileSync(note, 'utf8').split('\n').find(l => l.includes(EDITED));
    fs.appendFileSync(note, `${line.replace(EDITED, BY_HAND)}\n`);
    await itemWith(page, BY_HAND);
    check(true, "a line saved in an editor appears on the page without a reload");
    check(await page.evaluate(() => document.documentElement.scrollWidth <= 360), 'no sideways scrolling at 360 px');
    await shot(page, 'memories');

    // health
    await tab(page, 'Health');
    await until('health lists the global store', 20, async () => (await texts(page, 'tbody th')).includes('global'));
    fs.writeFileSync(path.join(MDMEM_HOME, 'broken.md'), Buffer.from([0x61, 0xed, 0xa0, 0x80]));
    await until('health names a skipped note and why', 20, async () => (await texts(page, '#view li')).some(t => t.includes('broken.md') && t.includes('UTF-8')));
    check(await page.evaluate(() => document.documentElement.scrollWidth <= 360), 'health fits 360 px (its table scrolls in its box)');
    check((await texts(page, '#view h2')).includes('Models') && (await page.$$('#view progress')).length >= 2,
        'health shows the models and their fill');
    const [doctor] = await page.$$('xpath/.//button[normalize-space(.)="Run the checks"]');
    await doctor.click();
    await until("doctor's checks are listed", 60, async () => (await texts(page, '#view li')).some(t => t.includes('sqlite-vec')));
    check(await page.evaluate(() => document.documentElement.scrollWidth <= 360), "doctor's checks fit 360 px (a store's path wraps)");
    await shot(page, 'health');

    // import: a preview first, nothing written until confirmed
    await tab(page, 'Import');
    await page.waitForSelector('#i-path');
    await page.type('#i-path', EXPORT);
    await page.keyboard.press('Enter');
    await until('the preview says what would be added', 20, async () => (await texts(page, '#view li')).some(t => t.startsWith('Would add')));
    await until('the preview lists each memory it would write', 20, async () => (await texts(page, '#i-memories .text')).some(t => t.includes('vegetarian')));
    check(!fs.existsSync(path.join(MDMEM_HOME, 'spaces', 'alice')), 'a preview writes nothing');
    await shot(page, 'import');
    await page.click('#i-confirm');
    await until('the import writes the notes', 20, async () => allNotes().includes('vegetarian'));
    check(await page.evaluate(() => document.documentElement.scrollWidth <= 360), 'import fits 360 px');

    // Chinese, following the browser's language
    const zh = await browser.newPage();
    await zh.evaluateOnNewDocument(() => Object.defineProperty(navigator, 'language', { get: () => 'zh-CN' }));
    await zh.goto(link());
    await zh.waitForSelector('nav button');
    check((await texts(zh, 'nav button')).join(' ') === '搜索 提示词会得到什么 记忆 状态 导入 审核', 'the views speak Chinese');
    await zh.setViewport({ width: 360, height: 740 });
    await zh.waitForSelector('#q-space');
    await zh.select('#q-space', 'erin');
    await zh.type('#q', 'Pepper');
    await until('a Chinese page finds too', 20, async () => await zh.$eval('ol.items', n => n.getAttribute('data-query')) === 'Pepper'
        && (await texts(zh, 'ol.items .meta')).some(t => t.includes('得分')));
    await shot(zh, 'search-zh');
    console.log('e2e ui: all checks passed');
} catch (err) {
    if (page && FAIL_SHOT) await page.screenshot({ path: FAIL_SHOT }).catch(() => {});
    throw err;
} finally {
    await browser.close();
}
