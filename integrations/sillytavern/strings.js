/** The panel's words in English and Chinese; SillyTavern's own language choice picks one. */

const EN = {
    title: 'mdmem long-term memory',
    enabled: 'Enabled',
    url: 'mdmem URL',
    token: 'Token (mdmem token)',
    scope: 'Memory per',
    scope_character: 'character / group',
    scope_chat: 'chat',
    budget: 'Memory block size (characters)',
    capture: 'Keep from each message',
    capture_triggers: 'the sentences that state facts',
    capture_raw: 'every message',
    capture_server: 'as mdmem is set ([capture])',
    position: 'Insert',
    position_system: 'after the system prompt',
    position_chat: 'in the chat at depth',
    rewrite: 'When nothing is found, let the connected model rewrite the question',
    rewrite_prompt: 'Rewrite prompt ({{question}}, {{context}})',
    test: 'Test connection',
    status_ok: 'mdmem answered',
    status_never: 'not called yet',
    search_help: 'Search this character\'s long-term memory in mdmem, e.g. /mdmem-search sister',
    no_results: 'No memory found.',
    off: 'mdmem is off or unreachable.',
    fail_down: 'mdmem is not reachable: chatting without long-term memory. Start it with mdmem serve --http.',
    fail_timeout: 'mdmem did not answer in time: chatting without long-term memory.',
    fail_token: 'mdmem refused the token: paste what `mdmem token` prints into the extension\'s settings.',
    fail_server: 'mdmem failed (server error): chatting without long-term memory; see its log.',
    fail_refused: 'mdmem refused a request; the settings panel\'s status line says why.',
};

const ZH = {
    title: 'mdmem 长期记忆',
    enabled: '启用',
    url: 'mdmem 地址',
    token: '令牌（mdmem token）',
    scope: '记忆范围',
    scope_character: '每个角色 / 群组',
    scope_chat: '每个聊天',
    budget: '记忆块大小（字符）',
    capture: '每条消息保存',
    capture_triggers: '陈述事实的句子',
    capture_raw: '整条消息',
    capture_server: '按 mdmem 的设置（[capture]）',
    position: '插入位置',
    position_system: '系统提示之后',
    position_chat: '聊天中，深度',
    rewrite: '找不到记忆时，让已连接的模型改写问题',
    rewrite_prompt: '改写提示（{{question}}、{{context}}）',
    test: '测试连接',
    status_ok: 'mdmem 已响应',
    status_never: '尚未调用',
    search_help: '在 mdmem 中搜索当前角色的长期记忆，例如 /mdmem-search 姐姐',
    no_results: '没有找到记忆。',
    off: 'mdmem 未启用或无法连接。',
    fail_down: '无法连接 mdmem：本次对话不使用长期记忆。请用 mdmem serve --http 启动它。',
    fail_timeout: 'mdmem 未及时响应：本次对话不使用长期记忆。',
    fail_token: 'mdmem 拒绝了令牌：请把 `mdmem token` 输出的令牌填入扩展设置。',
    fail_server: 'mdmem 出错（服务器错误）：本次对话不使用长期记忆，请查看其日志。',
    fail_refused: 'mdmem 拒绝了请求；设置面板的状态行说明了原因。',
};

/** Chinese when SillyTavern (or else the browser) is set to it. */
export function words() {
    let lang = '';
    try { lang = localStorage.getItem('language') || ''; } catch { /* storage blocked: the browser decides */ }
    lang = (lang || navigator.language || 'en').toLowerCase();
    return lang.startsWith('zh') ? ZH : EN;
}
