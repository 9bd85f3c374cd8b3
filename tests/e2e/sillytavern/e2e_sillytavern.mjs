// Drives the real SillyTavern in headless Chromium with the mdmem extension: fill the panel, chat, find the turn in
// the character's Markdown, find the recalled memory in the next prompt the model got, then chat with mdmem stopped.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { check, sleep, until } from '../checks.mjs';

const require = createRequire(path.join(process.env.DRIVER, 'package.json'));
const puppeteer = require('puppeteer-core');

const { ST_URL, MDMEM_URL, MDMEM_HOME, MDMEM_PID, PROMPTS, SHOT } = process.env;
const REPLY = 'I will remember that.'; // what tests/e2e/stub_model.py answers
const HEADER = 'Relevant long-term memory:';
const FACT = 'My sister Alice lives in Lisbon and keeps bees on her roof.';
const FACT_ZH = '我的表哥小明在杭州开了一家茶馆。';

function notes(dir) {
    if (!fs.existsSync(dir)) return '';
    return fs.readdirSync(dir, { recursive: true }).filter(f => f.endsWith('.md'))
        .map(f => fs.readFileSync(path.join(dir, f), 'utf8')).join('\n');
}
function prompts() {
    if (!fs.existsSync(PROMPTS)) return [];
    return fs.readFileSync(PROMPTS, 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l))
        .filter(r => r.path.endsWith('/chat/completions')).map(r => r.body.messages);
}

const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'], protocolTimeout: 60000,
});
const page = await browser.newPage();
page.setDefaultTimeout(30000);
const errors = [];
page.on('pageerror', err => errors.push(String(err.stack || err)));
page.on('console', msg => { if (msg.text().includes('[mdmem]') || msg.type() === 'error') errors.push(msg.text()); });

async function chatLength() { return page.evaluate(() => SillyTavern.getContext().chat.length); }
async function slash(command) {
    return page.evaluate(async c => (await SillyTavern.getContext().executeSlashCommandsWithOptions(c))?.pipe ?? '', command);
}
/** Type a message, press send, wait for the stub's reply; returns the prompt the model got and the seconds taken. */
async function say(text, requests = 1) {
    const before = await chatLength();
    const asked = prompts().length;
    await page.type('#send_textarea', text);
    const started = Date.now();
    await page.click('#send_but');
    await until(`the reply to "${text}" in the chat`, 30, () => page.evaluate((n, reply) => {
        const chat = SillyTavern.getContext().chat;
        return chat.length >= n + 2 && chat[chat.length - 1].mes === reply && !chat[chat.length - 1].is_user
            && $('#send_but').is(':visible');
    }, before, REPLY));
    const seconds = (Date.now() - started) / 1000;
    const sent = prompts();
    check(sent.length === asked + requests, `${requests} model request(s) for "${text}"`);
    return { messages: sent[sent.length - 1], seconds, all: sent.slice(asked) };
}

try {
    const token = fs.readFileSync(path.join(MDMEM_HOME, '.http-token'), 'utf8').trim();
    await page.setViewport({ width: 1280, height: 1000 });
    await page.goto(ST_URL, { waitUntil: 'domcontentloaded' });
    await until('SillyTavern connected to the stub model', 60, () => page.evaluate(
        () => typeof SillyTavern !== 'undefined' && SillyTavern.getContext().onlineStatus !== 'no_connection'));

    // the settings panel, filled in as a user would, then photographed
    await until('the extensions drawer open', 30, async () => { // its click handler is bound late in start-up
        if (await page.$eval('#rm_extensions_block', el => el.classList.contains('openDrawer'))) return true;
        await page.click('#extensions-settings-button .drawer-toggle');
        await sleep(500);
        return false;
    });
    // installed as a user does: Extensions > Install extension > the repository's git URL
    await page.click('#third_party_extension_button');
    await page.waitForSelector('.popup-input', { visible: true });
    await page.type('.popup-input', process.env.EXTENSION_GIT);
    await page.click('.popup-button-ok');
    await page.waitForSelector('#mdmem_settings .inline-drawer-toggle', { visible: true });
    check(true, 'the extension installed from its git URL and its panel is shown');
    await page.click('#mdmem_settings .inline-drawer-toggle');
    await page.waitForSelector('#mdmem_url', { visible: true });
    await page.$eval('#mdmem_url', el => { el.value = ''; });
    await page.type('#mdmem_url', MDMEM_URL);
    await page.type('#mdmem_token', token);
    await page.click('#mdmem_test');
    await until('the panel says mdmem answered', 10, () => page.$eval('#mdmem_status', el => /answered|已响应/.test(el.textContent)));
    const saved = await page.evaluate(() => SillyTavern.getContext().extensionSettings.mdmem);
    check(saved.url === MDMEM_URL && saved.token === token && saved.enabled, 'the panel keeps URL, token and on/off in the settings');
    if (SHOT) {
        const panel = await page.$('#mdmem_settings');
        await panel.screenshot({ path: SHOT });
        console.log(`screenshot: ${SHOT}`);
    }
    await page.click('#extensions-settings-button .drawer-toggle');

    // a chat turn: with the default capture (the sentences that state facts) the user's fact lands in
    // Seraphina's Markdown and the reply, which states none, does not
    await slash('/go Seraphina');
    await until('Seraphina\'s chat open', 20, () => page.evaluate(() => SillyTavern.getContext().name2 === 'Seraphina'
        && SillyTavern.getContext().chat.length >= 1));
    const first = await say(FACT);
    check(!first.messages.some(m => String(m.content).includes(HEADER)), 'no memory block while the space is empty');
    const space = path.join(MDMEM_HOME, 'spaces', 'Seraphina');
    const md = await until('the turn in spaces/Seraphina/*.md', 15,
        () => { const t = notes(space); return t.includes('Lisbon') ? t : ''; });
    check(!md.includes(REPLY), 'the reply states no fact: not kept (capture: triggers)');
    check(/\*\*(user|User):\*\* My sister Alice lives in Lisbon/.test(md), 'the user message is in the character\'s journal');
    await say(FACT_ZH);
    await until('the Chinese turn in the character\'s Markdown', 15, () => notes(space).includes('杭州'));
    const written = notes(space);
    check(written.split('Lisbon').length === 2, 'each message written once (idempotent)');

    // a new chat with the same character: the next prompt holds the memory, after the system prompt
    await page.click('#options_button');
    await page.click('#option_start_new_chat');
    await page.waitForSelector('.popup-button-ok', { visible: true });
    await page.click('.popup-button-ok');
    await until('a new chat with only the greeting', 20, async () => (await chatLength()) === 1);
    const recalled = await say('Where does my sister live?');
    const at = recalled.messages.findIndex(m => String(m.content).includes(HEADER));
    check(at > 0, `the prompt holds "${HEADER}" (message ${at})`);
    const memory = String(recalled.messages[at].content);
    check(memory.includes('Lisbon'), 'the recalled memory names Lisbon');
    check(recalled.messages[0].role === 'system' && !recalled.messages[0].content.includes(HEADER)
        && recalled.messages[0].content.length > 20, 'the system prompt is kept, the memory comes after it');
    check(memory.length <= 1100, `the block is bounded (${memory.length} chars)`);
    const zh = await say('我表哥在哪里开店？');
    check(zh.messages.some(m => String(m.content).includes(HEADER) && String(m.content).includes('杭州')),
        'a Chinese question recalls the Chinese memory');
    const found = await slash('/mdmem-search sister');
    check(found.includes('Lisbon'), `/mdmem-search answers (${found.split('\n')[0]})`);
    console.log(`measured: reply with recall ${recalled.seconds.toFixed(2)} s`);

    // memory per chat: this chat's own space is empty, so the opt-in rewrite by the connected model runs first
    await page.evaluate(() => {
        Object.assign(SillyTavern.getContext().extensionSettings.mdmem, { scope: 'chat', rewrite: true });
    });
    const rewrite = await say('What was the name of the bee keeper?', 2);
    check(rewrite.all[0].some(m => String(m.content).includes('Rewrite the last question')
        && String(m.content).includes('What was the name of the bee keeper?')), 'the rewrite prompt went to the model');
    check(!rewrite.messages.some(m => String(m.content).includes(HEADER)), 'a chat-scoped space starts empty');
    check(rewrite.seconds < 10, `the reply after a rewrite came in ${rewrite.seconds.toFixed(2)} s`);
    await say('My brother Tom works at the harbour in Porto.', 2); // a question states no fact: this one does (the space is still empty: the rewrite runs)
    await until('the turn in the chat\'s own space', 15, () => fs.readdirSync(path.join(MDMEM_HOME, 'spaces'))
        .some(d => d.startsWith('Seraphina ') && notes(path.join(MDMEM_HOME, 'spaces', d)).includes('harbour')));
    await page.evaluate(() => {
        Object.assign(SillyTavern.getContext().extensionSettings.mdmem, { scope: 'character', rewrite: false });
        SillyTavern.getContext().saveSettingsDebounced();
    });

    // a group chat has its own space, named after the group
    const group = '林间小队';
    await page.evaluate(async name => {
        const res = await fetch('/api/groups/create', { method: 'POST', headers: SillyTavern.getContext().getRequestHeaders(),
            body: JSON.stringify({ name, members: ['default_Seraphina.png'], avatar_url: 'img/ai4.png', allow_self_responses: false,
                activation_strategy: 0, generation_mode: 0, disabled_members: [], chat_metadata: {}, fav: false,
                auto_mode_delay: 5 }) }); // what SillyTavern's own "create group" sends
        if (!res.ok) throw new Error(`group create: HTTP ${res.status}`);
    }, group);
    await page.evaluate(() => localStorage.setItem('language', 'zh-cn')); // and SillyTavern set to Chinese
    await page.reload({ waitUntil: 'domcontentloaded' });
    // start-up ends with its loader gone (then APP_READY): a chat opened before that lost the typed message
    await until('SillyTavern back with the extension', 60, () => page.evaluate(() => typeof SillyTavern !== 'undefined'
        && SillyTavern.getContext().onlineStatus !== 'no_connection' && !!document.querySelector('#mdmem_settings')
        && !document.querySelector('#loader') && !document.querySelector('#preloader')));
    const zhPanel = await page.$eval('#mdmem_settings', el => el.textContent);
    check(zhPanel.includes('长期记忆') && zhPanel.includes('测试连接'), 'the panel speaks Chinese when SillyTavern does');
    await slash(`/go ${group}`);
    await until('the group chat open', 20, () => page.evaluate(() => !!SillyTavern.getContext().groupId
        && SillyTavern.getContext().chat.length >= 1));
    await say('我们的营地在北边的瀑布旁边。');
    const groupNotes = await until(`the turn in spaces/${group}/`, 15,
        () => notes(path.join(MDMEM_HOME, 'spaces', group)));
    check(groupNotes.includes('瀑布') && !notes(space).includes('瀑布'), 'the group\'s turn is in the group\'s space only');

    // mdmem stopped: the chat goes on, nothing recalled, one notice for the failure (not one per message)
    await page.evaluate(() => {
        const warn = toastr.warning.bind(toastr);
        window.mdmemToasts = [];
        toastr.warning = (text, ...rest) => { window.mdmemToasts.push(String(text)); return warn(text, ...rest); };
    });
    process.kill(Number(MDMEM_PID), 'SIGTERM');
    await until('mdmem stopped', 60, () => { try { process.kill(Number(MDMEM_PID), 0); return false; } catch { return true; } });
    const down = await say('Tell me about the bees.');
    check(!down.messages.some(m => String(m.content).includes(HEADER)), 'no memory block with mdmem down');
    check(down.seconds < 10, `the reply came in ${down.seconds.toFixed(2)} s with mdmem down`);
    const again = await say('And the roof?');
    check(!again.messages.some(m => String(m.content).includes(HEADER)) && again.seconds < 10,
        'a second message with mdmem down: still no block, still answered');
    const toasts = await page.evaluate(() => window.mdmemToasts.filter(t => /mdmem/i.test(t)));
    check(toasts.length === 1, `one notice for mdmem being down, not one per message (${toasts.join(' | ')})`);
    const status = await page.$eval('#mdmem_status', el => el.textContent);
    check(status.includes('unreachable'), `the panel's status line says why (${status})`);
    check(!errors.some(e => e.includes('Failed running interceptor')), 'the interceptor never threw');
    console.log('sillytavern e2e: passed');
} catch (err) {
    console.error(String(err.stack || err));
    console.error(`page errors: ${errors.slice(-10).join(' | ')}`);
    if (process.env.FAIL_SHOT) await page.screenshot({ path: process.env.FAIL_SHOT }).catch(() => {});
    process.exitCode = 1;
} finally {
    await browser.close();
}
