// The extension's choices without a browser (node --test): which space, which messages, which queries, which block.
import test from 'node:test';
import assert from 'node:assert/strict';
import { block, cleanSpace, HEADER, keyOf, lastTurn, lastUserText, recentText, rewritePrompt, spaceOf }
    from '../../../integrations/sillytavern/memory.js';

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

test('the recent-messages query keeps the newest lines within its size', () => {
    const text = recentText(chat, 6);
    assert.ok(!text.includes('隐藏'), 'hidden messages are not context');
    assert.ok(text.endsWith('Seraphina: 好的，我记住了。'));
    assert.ok(recentText([...chat, msg('Mira', 'y'.repeat(5000))], 6).length <= 1200);
});

test('the block: header, best first, top k, within the budget, without what the prompt already holds', () => {
    const results = [
        { memory: 'My sister Alice lives in Lisbon.', created_at: '2026-11-25T02:12:00+00:00' },
        { memory: 'Alice keeps bees on her roof.', created_at: '2026-11-24T10:00:00+00:00' },
        { memory: 'I will remember that.' },
        { memory: 'z'.repeat(3000) },
    ];
    const out = block(results, { topK: 5, budget: 800, seen: recentText(chat, 6) });
    const lines = out.split('\n');
    assert.equal(lines[0], HEADER);
    assert.equal(lines[1], '- Alice keeps bees on her roof. (2026-11-24)', 'what the chat already says is left out');
    assert.ok(out.length <= 800 && lines[2].endsWith('…'));
    assert.equal(block(results, { topK: 1 }).split('\n').length, 2);
    assert.equal(block([], {}), '');
    assert.equal(rewritePrompt('Q={{question}} C={{context}}', '她住哪', 'ctx'), 'Q=她住哪 C=ctx');
});
