/** What to write and what to ask: spaces, the last turn, the recall queries and the bounded prompt block. */

export const HEADER = 'Relevant long-term memory:';
const MAX_SPACE = 64; // mdmem's limit on a space name
const MAX_QUERY = 1200; // the recent-messages fallback query: enough for 4-6 turns, short enough to stay on topic

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

/** The text of the user's latest message (the first recall query). */
export function lastUserText(chat) {
    for (let i = chat.length - 1; i >= 0; i--) {
        if (said(chat[i]) && chat[i].is_user) return chat[i].mes.trim();
    }
    return '';
}

/** The recent messages as "Name: text" lines, newest kept, at most `maxChars` (the second recall query). */
export function recentText(chat, count, maxChars = MAX_QUERY) {
    const lines = chat.filter(said).slice(-Math.max(1, count)).map(m => `${m.name || ''}: ${m.mes.trim()}`);
    const kept = [];
    let size = 0;
    for (let i = lines.length - 1; i >= 0; i--) {
        const line = lines[i].length > maxChars ? lines[i].slice(-maxChars) : lines[i];
        if (size + line.length + 1 > maxChars && kept.length) break;
        kept.unshift(line);
        size += line.length + 1;
    }
    return kept.join('\n');
}

const squash = s => String(s || '').toLowerCase().replace(/\s+/g, ' ').trim();

/**
 * The prompt block: a header and one line per memory, best first, at most `topK` lines and `budget` characters.
 * Memories the prompt already holds word for word (the recent messages) are left out.
 */
export function block(results, { topK = 5, budget = 1000, seen = '' } = {}) {
    const already = squash(seen);
    const lines = [];
    let size = HEADER.length;
    for (const r of results || []) {
        if (lines.length >= topK) break;
        const text = String(r?.memory || '').replace(/\s+/g, ' ').trim();
        if (!text || (already && already.includes(squash(text)))) continue;
        const day = typeof r.created_at === 'string' ? r.created_at.slice(0, 10) : '';
        let line = `- ${text}${day ? ` (${day})` : ''}`;
        const room = budget - size - 1;
        if (room < 40) break; // a line cut to a stub says nothing
        if (line.length > room) line = line.slice(0, room - 1) + '…';
        lines.push(line);
        size += line.length + 1;
    }
    return lines.length ? [HEADER, ...lines].join('\n') : '';
}

/** The rewrite prompt with its {{question}} and {{context}} filled in. */
export function rewritePrompt(template, question, context) {
    return String(template).replaceAll('{{question}}', question).replaceAll('{{context}}', context);
}
