/** What goes into the prompt (the recalled block) and what is kept of a turn (its own words, not our block). */

export const OPEN = "<mdmem-memory>";
export const CLOSE = "</mdmem-memory>";
const BLOCK = new RegExp(`${OPEN}[\\s\\S]*?${CLOSE}\\s*`, "g");
// OpenClaw stamps the user's text with "[Wed 2026-11-25 02:00 UTC] "; the stamp is transport, not what was said
const STAMP = /^\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2}[^\]]*\]\s*/;

/** The text without recalled blocks, so a memory is never captured again from its own recall. */
export function stripRecalled(text) {
  return String(text ?? "").replace(BLOCK, "").replace(STAMP, "").trim();
}

function day(hit) {
  return typeof hit.created_at === "string" ? hit.created_at.slice(0, 10) : null;
}

function source(hit) {
  const m = hit.uri ? hit : hit.metadata || {}; // top-level fields (older mdmem: in metadata)
  return m.uri ? `${m.uri}#L${m.start_line}-L${m.end_line}` : null;
}

/** Hits of the agent's space and of the shared notes, best first, one line each, none cut, within maxChars. */
export function formatRecall(hits, maxChars) {
  const seen = new Set();
  const lines = [];
  let used = 0;
  for (const hit of hits) {
    const text = String(hit.memory || "").replace(/\s+/g, " ").trim();
    if (!text || seen.has(hit.id) || seen.has(text)) continue;
    const when = day(hit);
    const where = source(hit);
    const line = `- ${when ? `[${when}] ` : ""}${text}${where ? ` (source: ${where})` : ""}`;
    if (used + line.length + 1 > maxChars) continue;  // a memory is never cut: the next smaller one may fit
    seen.add(hit.id);
    seen.add(text);
    lines.push(line);
    used += line.length + 1;
  }
  if (!lines.length) return "";
  return [OPEN, "Relevant long-term memory (from mdmem; notes the user keeps, oldest facts may be outdated):",
    ...lines, CLOSE].join("\n");
}

/** Merge two best-first lists by score; on a tie the agent's own memory goes first. */
export function mergeHits(own, shared, limit) {
  return [...own.map((h, i) => [h, 0, i]), ...shared.map((h, i) => [h, 1, i])]
    .sort((a, b) => (b[0].score ?? 0) - (a[0].score ?? 0) || a[1] - b[1] || a[2] - b[2])
    .slice(0, limit)
    .map(([h]) => h);
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((part) => part && part.type === "text" && typeof part.text === "string")
    .map((part) => part.text).join("\n");
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
