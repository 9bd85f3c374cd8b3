/** What a turn gives the daemon's recall (its recent messages) and what is kept of a turn (its own words, not the
 * recalled block). The block itself is the daemon's (POST /v1/recall/): it is injected as it comes. */

// the daemon's block: its header line (naming a time window when the question does) and one "- " line per memory
const BLOCK = /Relevant long-term memory[^\n]*:\n(?:- [^\n]*(?:\n|$))+\s*/g;
const OLD_BLOCK = /<mdmem-memory>[\s\S]*?<\/mdmem-memory>\s*/g;  // what plugin versions before 0.2 injected
// OpenClaw stamps the user's text with "[Wed 2026-11-25 02:00 UTC] "; the stamp is transport, not what was said
const STAMP = /^\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2}[^\]]*\]\s*/;
const CONTEXT_TURNS = 6;  // the recent messages sent with a question; the daemon keeps its own budget of them

/** The text without recalled blocks, so a memory is never captured again from its own recall. */
export function stripRecalled(text) {
  return String(text ?? "").replace(OLD_BLOCK, "").replace(BLOCK, "").replace(STAMP, "").trim();
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((part) => part && part.type === "text" && typeof part.text === "string")
    .map((part) => part.text).join("\n");
}

/** The conversation before the question, newest last, as the recall route reads it ([{role, content}]). */
export function recentTurns(messages, count = CONTEXT_TURNS) {
  const said = (Array.isArray(messages) ? messages : [])
    .filter((m) => m?.role === "user" || m?.role === "assistant")
    .map((m) => ({ role: m.role, content: stripRecalled(textOf(m.content)) }))
    .filter((m) => m.content);
  return said.slice(-count);
}

// a question asks for memory rather than telling one, and "ok"/"好的" tell nothing; both would crowd out facts
const QUESTION = /[?？]\s*$/u;
const MIN_CHARS = 6;

function worthKeeping(text) {
  return [...text].length >= MIN_CHARS && !QUESTION.test(text);
}

/** The last turn's messages worth keeping: the user's words (and the replies when asked), recalled blocks removed. */
export function turnMessages(messages, withAssistant) {
  const list = Array.isArray(messages) ? messages : [];
  let start = list.findLastIndex((m) => m?.role === "user");
  if (start < 0) return [];
  while (start > 0 && list[start - 1]?.role === "user") start -= 1;  // several user messages in one turn
  const out = [];
  for (const m of list.slice(start)) {
    if (m?.role !== "user" && !(withAssistant && m?.role === "assistant")) continue;
    const text = stripRecalled(textOf(m.content));
    if (m.role === "user" && !worthKeeping(text)) continue;
    if (text) out.push({ role: m.role, content: text });
  }
  return out;
}
