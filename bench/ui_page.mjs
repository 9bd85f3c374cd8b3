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
    const lastSearch = [];
    for (const query of queries) {
        await page.evaluate(() => { const q = document.querySelector('#q'); q.value = '';
            document.querySelector('ol.items').removeAttribute('data-query'); });
        // from the last input (a key, or a Chinese character typed as text, which sends no keydown) to the frame
        // after the list holds this query's results
        const drawn = page.evaluate((q) => new Promise((resolve) => {
            const input = document.querySelector('#q');
            const list = document.querySelector('ol.items');
            let start = 0;
            input.addEventListener('input', () => { start = performance.now(); });
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
        // the search that answered the whole query: its own time on the wire, the rest is waiting and drawing
        lastSearch.push(await page.evaluate(() => {
            const asked = performance.getEntriesByType('resource').filter(e => e.name.endsWith('/v1/ui/search'));
            return asked[asked.length - 1].responseEnd - asked[asked.length - 1].startTime;
        }));
    }
    console.log(JSON.stringify({ first_paint_ms: firstPaint, typing_ms: typing, last_search_ms: lastSearch }));
} finally {
    await browser.close();
}
