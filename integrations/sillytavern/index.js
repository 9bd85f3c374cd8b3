/** SillyTavern extension: each chat turn goes to mdmem, and what mdmem recalls goes into the next prompt. */

import { Notices, post, reason } from './client.js';
import { keyOf, lastTurn, lastUserText, recallBody, rewritePrompt, spaceOf } from './memory.js';
import { words } from './strings.js';

const NAME = 'mdmem';
// SillyTavern's scripts folder, found from where this file is served: copied, it is extensions/third-party/mdmem/;
// installed from the repository's git URL, extensions/third-party/mdmem/integrations/sillytavern/
const SCRIPTS = new URL('.', import.meta.url).href.replace(/\/extensions\/.*$/, '/');
const PROMPT_KEY = 'mdmem_memory';
const IN_PROMPT = 0; // extension_prompt_types.IN_PROMPT: right after the main (system) prompt
const IN_CHAT = 1; // extension_prompt_types.IN_CHAT: among the messages, `depth` from the end
const WRITE_TIMEOUT_MS = 1500; // a write never holds the chat: it is not awaited, and gives up after this
const SEARCH_TIMEOUT_MS = 1500; // a local hybrid search answers in well under 100 ms
// the daemon's recall: the question, then with the recent messages when it is weak; its first call after a start
// loads the ranking model, which took over 3 s on a busy 2-core machine
const RECALL_TIMEOUT_MS = 5000;
const REWRITE_TIMEOUT_MS = 2500; // the connected model's rewrite, only when both searches found nothing
const MAX_WRITTEN = 2000; // keys remembered per page load; mdmem itself reinforces a restated memory

const DEFAULTS = {
    enabled: true,
    url: 'http://127.0.0.1:8765',
    token: '',
    scope: 'character',
    budget: 1000,
    top_k: 5,
    position: 'system',
    depth: 2,
    recent: 6,
    rewrite: false,
    // what a turn becomes (docs/CAPTURE.md): triggers stored half the lines of raw and recalled as much on LoCoMo;
    // '' leaves it to mdmem's [capture] setting
    capture: 'triggers',
    rewrite_prompt: 'Rewrite the last question of this conversation as a short search query for the facts it needs. '
        + 'Answer with the query only.\n\nConversation:\n{{context}}\n\nQuestion: {{question}}',
};

const T = words();
const written = new Set();
let lastStatus = T.status_never;
// the one error rule (client.js): a toast per failure kind until mdmem answers again, and a console line
const notices = new Notices({
    notify: kind => globalThis.toastr?.warning(T[`fail_${kind}`] || T.fail_refused, T.title, { preventDuplicates: true }),
    log: (level, text) => console[level](text),
});

const ctx = () => SillyTavern.getContext();

function settings() {
    const all = ctx().extensionSettings;
    all[NAME] = Object.assign({}, DEFAULTS, all[NAME] || {});
    return all[NAME];
}

function note(answer) {
    lastStatus = `${answer && answer.ok ? T.status_ok : reason(answer)} (${new Date().toLocaleTimeString()})`;
    $('#mdmem_status').text(lastStatus);
}

/** Write the last turn's messages not written yet, with who said them; fire and forget. */
function writeTurn() {
    const s = settings();
    const c = ctx();
    const space = spaceOf(c, s.scope);
    if (!s.enabled || !space || !s.url) return;
    const chatId = String(c.getCurrentChatId?.() || c.chatId || '');
    const fresh = lastTurn(c.chat).filter(m => !written.has(keyOf(chatId, m)));
    if (!fresh.length) return;
    const body = {
        messages: fresh.map(m => ({ role: m.is_user ? 'user' : 'assistant', name: m.name, content: m.mes.trim() })),
        user_id: space,
        agent_id: spaceOf(c, 'character'),
        metadata: { source: 'sillytavern', chat: chatId, time: new Date().toISOString() },
        ...(s.capture ? { capture: s.capture } : {}),
    };
    if (written.size > MAX_WRITTEN) written.clear();
    const keys = fresh.map(m => keyOf(chatId, m));
    for (const key of keys) written.add(key); // at once: the reply's save comes while this write may still run
    post(s, '/memories', body, WRITE_TIMEOUT_MS).then(answer => {
        note(answer);
        if (!notices.usable(answer, 'write')) for (const key of keys) written.delete(key); // the next save tries again
    });
}

/** mdmem's block for the question (its recall route), '' when nothing fits, null when mdmem failed. */
async function recallBlock(s, body) {
    const answer = await post(s, '/v1/recall/', body, RECALL_TIMEOUT_MS);
    note(answer);
    if (!notices.usable(answer, 'recall')) return null;
    return typeof answer.data?.text === 'string' ? answer.data.text : '';
}

async function rewritten(s, question, context) {
    const quiet = ctx().generateQuietPrompt(rewritePrompt(s.rewrite_prompt, question, context), false, true);
    const late = new Promise(resolve => setTimeout(() => resolve(''), REWRITE_TIMEOUT_MS));
    try {
        return String(await Promise.race([quiet, late]) || '').trim();
    } catch {
        return '';
    }
}

/**
 * The block for the chat as it stands, as mdmem builds it (the question, and the recent messages for a weak one);
 * when it is empty and the opt-in rewrite is on, the connected model's rewrite of the question is asked once more.
 */
async function recall(chat) {
    const s = settings();
    const space = spaceOf(ctx(), s.scope);
    const question = lastUserText(chat);
    if (!s.enabled || !space || !s.url || !question) return '';
    const body = recallBody(question, space, chat, s);
    const text = await recallBlock(s, body);
    if (text !== '' || !s.rewrite) return text || ''; // null: mdmem failed, no second try this turn
    const context = (body.context || []).map(m => `${m.name}: ${m.content}`).join('\n');
    const query = await rewritten(s, question, context);
    return query ? (await recallBlock(s, { ...body, query })) || '' : '';
}

function inject(text) {
    const s = settings();
    const chatDepth = s.position === 'chat';
    ctx().setExtensionPrompt(PROMPT_KEY, text, chatDepth ? IN_CHAT : IN_PROMPT, chatDepth ? Number(s.depth) || 0 : 0);
}

/** The generate interceptor: runs before each prompt is built; any failure leaves the prompt as it was. */
globalThis.mdmem_recall = async function (chat) {
    inject('');
    try {
        inject(await recall(chat));
    } catch (err) {
        console.warn('[mdmem] recall skipped', err); // never thrown into SillyTavern: the prompt goes on without it
    }
    writeTurn(); // after its own recall: a message just sent is never recalled into its own prompt
};

async function searchCommand(args, query) {
    const s = settings();
    const space = spaceOf(ctx(), s.scope);
    const q = String(query || '').trim();
    if (!s.enabled || !space || !q) return s.enabled ? T.no_results : T.off;
    const answer = await post(s, '/search', { query: q, user_id: space, top_k: Number(args?.limit) || s.top_k }, SEARCH_TIMEOUT_MS * 2);
    note(answer);
    if (!notices.usable(answer, 'search')) return T.off;
    const lines = (answer.data?.results || []).map(r => `- ${r.memory}`);
    return lines.length ? lines.join('\n') : T.no_results;
}

async function registerCommand() {
    const [{ SlashCommand }, { ARGUMENT_TYPE, SlashCommandArgument, SlashCommandNamedArgument }] = await Promise.all([
        import(`${SCRIPTS}slash-commands/SlashCommand.js`), import(`${SCRIPTS}slash-commands/SlashCommandArgument.js`)]);
    ctx().SlashCommandParser.addCommandObject(SlashCommand.fromProps({
        name: 'mdmem-search',
        callback: searchCommand,
        returns: 'the memories found, one per line',
        namedArgumentList: [SlashCommandNamedArgument.fromProps({
            name: 'limit', description: 'how many memories', typeList: [ARGUMENT_TYPE.NUMBER], defaultValue: '5',
        })],
        unnamedArgumentList: [SlashCommandArgument.fromProps({
            description: 'what to search for', typeList: [ARGUMENT_TYPE.STRING], isRequired: true,
        })],
        helpString: T.search_help,
    }));
}

function panel() {
    const s = settings();
    const esc = v => String(v).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
    const html = `
<div id="mdmem_settings" class="mdmem-settings">
  <div class="inline-drawer">
    <div class="inline-drawer-toggle inline-drawer-header"><b>${T.title}</b>
      <div class="inline-drawer-icon fa-solid fa-circle-chevron-down down"></div></div>
    <div class="inline-drawer-content">
      <label class="checkbox_label"><input id="mdmem_enabled" type="checkbox" ${s.enabled ? 'checked' : ''}>${T.enabled}</label>
      <div class="mdmem-field"><label for="mdmem_url">${T.url}</label><input id="mdmem_url" class="text_pole" value="${esc(s.url)}"></div>
      <div class="mdmem-field"><label for="mdmem_token">${T.token}</label><input id="mdmem_token" class="text_pole" type="password" value="${esc(s.token)}"></div>
      <div class="mdmem-field"><label for="mdmem_scope">${T.scope}</label><select id="mdmem_scope" class="text_pole">
        <option value="character">${T.scope_character}</option><option value="chat">${T.scope_chat}</option></select></div>
      <div class="mdmem-field"><label for="mdmem_capture">${T.capture}</label><select id="mdmem_capture" class="text_pole">
        <option value="triggers">${T.capture_triggers}</option><option value="raw">${T.capture_raw}</option><option value="">${T.capture_server}</option></select></div>
      <div class="mdmem-field"><label for="mdmem_budget">${T.budget}</label><input id="mdmem_budget" class="text_pole" type="number" min="200" max="4000" step="100" value="${esc(s.budget)}"></div>
      <div class="mdmem-field"><label for="mdmem_position">${T.position}</label><div class="mdmem-pair"><select id="mdmem_position" class="text_pole">
        <option value="system">${T.position_system}</option><option value="chat">${T.position_chat}</option></select>
        <input id="mdmem_depth" class="text_pole" type="number" min="0" max="100" value="${esc(s.depth)}" title="depth"></div></div>
      <label class="checkbox_label"><input id="mdmem_rewrite" type="checkbox" ${s.rewrite ? 'checked' : ''}>${T.rewrite}</label>
      <div class="mdmem-field"><label for="mdmem_rewrite_prompt">${T.rewrite_prompt}</label>
      <textarea id="mdmem_rewrite_prompt" class="text_pole">${esc(s.rewrite_prompt)}</textarea></div>
      <div class="mdmem-test"><div id="mdmem_test" class="menu_button">${T.test}</div><span id="mdmem_status" class="mdmem-status">${esc(lastStatus)}</span></div>
    </div>
  </div>
</div>`;
    $('#extensions_settings2').append(html);
    $('#mdmem_scope').val(s.scope);
    $('#mdmem_capture').val(s.capture);
    $('#mdmem_position').val(s.position);
    const bind = (id, key, read) => $(id).on('input change', function () {
        settings()[key] = read(this);
        ctx().saveSettingsDebounced();
    });
    bind('#mdmem_enabled', 'enabled', el => el.checked);
    bind('#mdmem_url', 'url', el => el.value.trim());
    bind('#mdmem_token', 'token', el => el.value.trim());
    bind('#mdmem_scope', 'scope', el => el.value);
    bind('#mdmem_capture', 'capture', el => el.value);
    bind('#mdmem_budget', 'budget', el => Number(el.value) || DEFAULTS.budget);
    bind('#mdmem_position', 'position', el => el.value);
    bind('#mdmem_depth', 'depth', el => Number(el.value) || 0);
    bind('#mdmem_rewrite', 'rewrite', el => el.checked);
    bind('#mdmem_rewrite_prompt', 'rewrite_prompt', el => el.value);
    $('#mdmem_test').on('click', async () => {
        note(await post(settings(), '/search', { query: 'ping', user_id: spaceOf(ctx(), settings().scope) || 'mdmem' },
            SEARCH_TIMEOUT_MS * 2));
    });
}

jQuery(() => {
    settings();
    panel();
    registerCommand().catch(err => console.debug('[mdmem] no slash command', err));
    const { eventSource, eventTypes } = ctx();
    // 1.12 has no chat-saved event: a chat is saved after each sent and received message, so write then (a sent
    // one once the generation's recall is done, by the interceptor)
    eventSource.on(eventTypes.MESSAGE_RECEIVED, writeTurn);
    eventSource.on(eventTypes.MESSAGE_EDITED, writeTurn); // the corrected text of the last turn is kept too
    eventSource.on(eventTypes.CHAT_CHANGED, () => inject('')); // another chat's memories never linger
});
