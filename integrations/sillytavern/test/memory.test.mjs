// The extension's choices without a browser (node --test): which space, which messages, what recall is asked,
// and the one error rule of its client.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Notices, post } from '../client.js';
import { cleanSpace, keyOf, lastTurn, lastUserText, recallBody, recentMessages, rewritePrompt, spaceOf }
    from '../memory.js';

const msg = (name, mes, extra = {}) => ({ name, mes, is_user: name === 'Mira', send_date: `d-${mes.length}`, ...extra });
const chat = [
    msg('Seraphina', 'Welcome to the glade.'),
    msg('Mira', 'My sister Alice lives in Lisbon.'),
    msg('Seraphina', 'I will remember that.'),
    msg('Mira', '（旁白：这条是隐藏的）', { is_system: true }),
    msg('Mira', '我表哥在杭州开茶馆。'),
    msg('Seraphina', '好的，我记住了。'),
];

test('a character chat writes to the character, a group chat to the group, chat scope adds the chat', () => {
    const character = { characters: [{ name: 'Seraphina' }], characterId: 0, chatId: 'Seraphina - 2026-11-25@02h12m' };
    assert.equal(spaceOf(character, 'character'), 'Seraphina');
    assert.equal(spaceOf(character, 'chat'), 'Seraphina 2026-11-25@02h12m');
    const group = { groupId: '17', groups: [{ id: 17, name: '冒险小队' }], characters: [], chatId: '2026-11-25-a' };
    assert.equal(spaceOf(group, 'character'), '冒险小队');
    assert.equal(spaceOf({ characters: [] }, 'character'), '', 'nothing open: no space, no memory');
});

test('space names follow mdmem\'s rules: no slashes, control characters or leading dot, 64 characters', () => {
    assert.equal(cleanSpace('../AC/DC\n'), 'AC DC');
    assert.equal(cleanSpace('x'.repeat(80)).length, 64);
});

test('the last turn is the last user message and the replies after it, hidden messages left out', () => {
    assert.deepEqual(lastTurn(chat).map(m => m.mes), ['我表哥在杭州开茶馆。', '好的，我记住了。']);
    assert.deepEqual(lastTurn(chat.slice(0, 1)), [], 'a greeting alone is no turn');
    assert.equal(lastUserText(chat), '我表哥在杭州开茶馆。');
    assert.notEqual(keyOf('c', chat[1]), keyOf('c', { ...chat[1], mes: 'My sister Alice lives in Porto.' }));
    assert.equal(keyOf('c', chat[1]), keyOf('c', { ...chat[1] }));
});

test('recall asks for the question with the messages before it, in the block size set', () => {
    assert.deepEqual(recentMessages(chat, 2), [
        { name: 'Mira', content: 'My sister Alice lives in Lisbon.' },
        { name: 'Seraphina', content: 'I will remember that.' },
    ], 'hidden messages are not context, the question is not its own context');
    const body = recallBody(lastUserText(chat), 'Seraphina', chat, { top_k: 5, budget: 9000, recent: 6 });
    assert.deepEqual(Object.keys(body), ['query', 'user_id', 'limit', 'max_chars', 'context']);
    assert.equal(body.query, '我表哥在杭州开茶馆。');
    assert.equal(body.max_chars, 4000, 'the budget stays within the panel\'s range');
    assert.equal(body.context.length, 3);
    assert.equal(recallBody('hi', 'S', [msg('Mira', 'hi')], { recent: 6 }).context, undefined, 'a first message has none');
    assert.equal(rewritePrompt('Q={{question}} C={{context}}', '她住哪', 'ctx'), 'Q=她住哪 C=ctx');
});

const ANSWERED_MS = 30000;

test('each failure has its kind; one notice per kind until mdmem answers again', async () => {
    const statuses = [500, 500, 401, 200, 500, 400];
    const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
            const status = statuses.shift();
            if (status === undefined) return; // never answers: the deadline
            res.writeHead(status, { 'Content-Type': 'application/json' });
            res.end(JSON.stringify(status === 200 ? { text: '' } : { detail: `failing with ${status}` }));
        });
    });
    await new Promise(ok => server.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${server.address().port}`;
    const shown = [];
    const logged = [];
    const notices = new Notices({ notify: kind => shown.push(kind), log: (level, text) => logged.push([level, text]) });
    try {
        const kinds = [];
        for (let i = 0; i < 7; i++) {
            // an answer gets a deadline no loaded machine misses (300 ms did: the first answer came late, 'timeout');
            // only the last request, never answered, waits for its deadline
            const answer = await post({ url, token: 't' }, '/v1/recall/', { query: 'q' }, i < 6 ? ANSWERED_MS : 300);
            kinds.push(answer.kind);
            assert.equal(notices.usable(answer, 'recall'), answer.ok);
        }
        assert.deepEqual(kinds, ['server', 'server', 'token', null, 'server', 'refused', 'timeout']);
        assert.deepEqual(shown, ['server', 'token', 'server', 'refused', 'timeout'], 'a repeat is not shown again');
        assert.deepEqual(logged.map(([level]) => level), ['warn', 'debug', 'warn', 'info', 'warn', 'warn', 'warn']);
    } finally {
        server.closeAllConnections();
        server.close();
    }
    const down = await post({ url, token: 't' }, '/v1/recall/', {}, ANSWERED_MS);
    assert.equal(down.kind, 'down');
    assert.equal((await post({ url: '' }, '/v1/recall/', {}, 300)).kind, 'off');
    assert.equal(notices.usable({ ok: false, kind: 'off' }, 'recall'), false);
    assert.deepEqual(shown.at(-1), 'timeout', 'an extension without a URL set notifies nothing');
});
