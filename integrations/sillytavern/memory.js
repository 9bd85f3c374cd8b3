/** What to write and what to ask: spaces, the last turn and the recall route's request (the block is mdmem's). */

const MAX_SPACE = 64; // mdmem's limit on a space name

/** mdmem's rules for a space name: no slashes, control characters or leading dot, at most 64 characters. */
export function cleanSpace(name) {
    const clean = String(name || '').replace(/[/\\\u0000-\u001f\u007f]/g, ' ').replace(/\s+/g, ' ').trim()
        .replace(/^\.+/, '');
    return clean.slice(0, MAX_SPACE).trim();
}

/**
 * The space of the open chat: the character's (or the group's) name; with scope 'chat', that name and the chat's.
 * Empty when nothing is open (no memory then).
 */
export function spaceOf(ctx, scope) {
    let owner = '';
    if (ctx.groupId) {
        owner = ctx.groups?.find(g => String(g.id) === String(ctx.groupId))?.name || '';
    } else if (ctx.characterId !== undefined && ctx.characters?.[ctx.characterId]) {
        owner = ctx.characters[ctx.characterId].name || '';
    }
    if (!owner) return '';
    if (scope !== 'chat') return cleanSpace(owner);
    const chat = String(ctx.chatId || (typeof ctx.getCurrentChatId === 'function' ? ctx.getCurrentChatId() : '') || '');
    const tail = chat.startsWith(owner) ? chat.slice(owner.length).replace(/^[\s-]+/, '') : chat;
    return cleanSpace(tail ? `${owner} ${tail}` : owner);
}

const said = m => m && !m.is_system && typeof m.mes === 'string' && m.mes.trim() !== '';

/** The last user message and the replies after it: the turn a save writes (hidden messages never). */
export function lastTurn(chat) {
    let start = -1;
    for (let i = chat.length - 1; i >= 0; i--) {
        if (said(chat[i]) && chat[i].is_user) { start = i; break; }
    }
    if (start < 0) return [];
    return chat.slice(start).filter(said);
}

/** A message's identity for "written already": the chat, when it was sent, and its text. */
export function keyOf(chatId, m) {
    let h = 0;
    for (const ch of `${m.name}\u0000${m.mes}`) h = (Math.imul(h, 31) + ch.codePointAt(0)) | 0;
    return `${chatId}|${m.send_date || ''}|${h}`;
}

/** The text of the user's latest message (the recall question). */
export function lastUserText(chat) {
    for (let i = chat.length - 1; i >= 0; i--) {
        if (said(chat[i]) && chat[i].is_user) return chat[i].mes.trim();
    }
    return '';
}

/** The messages before the user's latest one, newest last, at most `count` (the recall route's context). */
export function recentMessages(chat, count) {
    const kept = chat.filter(said);
    let last = kept.length - 1;
    while (last >= 0 && !kept[last].is_user) last--;
    const before = last >= 0 ? kept.slice(0, last) : kept;
    return before.slice(-Math.max(0, count)).map(m => ({ name: m.name || (m.is_user ? 'user' : 'assistant'),
        content: m.mes.trim() }));
}

/**
 * The recall route's body for the open chat: the question, the chat's space, its recent messages and the block's
 * size; the block that comes back is injected as it is.
 */
export function recallBody(question, space, chat, s) {
    const body = { query: question, user_id: space, limit: Math.max(1, Number(s.top_k) || 5),
        max_chars: Math.min(Math.max(Number(s.budget) || 1000, 200), 4000) };
    const context = recentMessages(chat, Number(s.recent) || 0);
    if (context.length) body.context = context;
    return body;
}

/** The rewrite prompt with its {{question}} and {{context}} filled in. */
export function rewritePrompt(template, question, context) {
    return String(template).replaceAll('{{question}}', question).replaceAll('{{context}}', context);
}
