// bench/ui_bench.py's page half: first contentful paint from a login link, then keystroke -> results drawn, in
// headless Chromium (Debian's) driven by the e2e suites' puppeteer-core. Prints one JSON line.
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.DRIVER, 'package.json'));
const puppeteer = require('puppeteer-core');
const queries = JSON.parse(process.env.QUERIES);
const keyMs = Number(process.env.KEY_MS);

const browser = await puppeteer.launch({ executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    await page.goto(process.env.LOGIN_URL);
    await page.waitForSelector('#q');
    const firstPaint = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0].startTime);
    await page.select('#q-space', 'alice');
    const typing = [];
    for (const query of queries) {
        await page.evaluate(() => { const q = document.querySelector('#q'); q.value = '';
            document.querySelector('ol.items').removeAttribute('data-query'); });
        // from the last keydown to the frame after the list holds this query's results
        const drawn = page.evaluate((q) => new Promise((resolve) => {
            const input = document.querySelector('#q');
            const list = document.querySelector('ol.items');
            let start = 0;
            input.addEventListener('keydown', () => { start = performance.now(); });
            const seen = new MutationObserver(() => {
                if (input.value === q && list.getAttribute('data-query') === q) {
                    seen.disconnect();
                    requestAnimationFrame(() => resolve(performance.now() - start));
                }
            });
            seen.observe(list, { attributes: true, childList: true });
        }), query);
        await page.type('#q', query, { delay: keyMs });
        typing.push(await drawn);
    }
    console.log(JSON.stringify({ first_paint_ms: firstPaint, typing_ms: typing }));
} finally {
    await browser.close();
}
