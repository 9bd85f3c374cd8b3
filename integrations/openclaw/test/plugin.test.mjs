// The plugin's own logic under `node --test` (run by tests/e2e/openclaw/run.sh): recall block, capture, client limits.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { MdmemClient, MdmemDown, MdmemRefused, resolveSettings } from "../client.js";
import plugin from "../index.js";
import { CLOSE, OPEN, formatRecall, mergeHits, stripRecalled, turnMessages } from "../recall.js";

const hit = (id, memory, score, uri = "spaces/main/journal/2026-11-25.md") => ({
  id, memory, score, created_at: "2026-11-25T10:00:00+00:00", uri, start_line: 7, end_line: 7, metadata: null,
});

test("the recall block cites each memory and never cuts one", () => {
  const block = formatRecall([hit("a", "x".repeat(200), 1), hit("b", "用户对花生过敏。", 0.5)], 120);
  assert.ok(block.startsWith(OPEN) && block.endsWith(CLOSE));
  assert.ok(!block.includes("xxx"), "a memory longer than the room left is skipped, not cut");
  assert.match(block, /- \[2026-11-25\] 用户对花生过敏。 \(source: spaces\/main\/journal\/2026-11-25\.md#L7-L7\)/);
  assert.equal(formatRecall([], 1500), "");
});

test("merged hits are best first, the agent's own first on a tie", () => {
  const merged = mergeHits([hit("a", "own", 0.5)], [hit("s", "shared", 0.5), hit("t", "top", 0.9)], 2);
  assert.deepEqual(merged.map((h) => h.id), ["t", "a"]);
});

test("capture keeps the turn's statements without the recalled block or OpenClaw's time stamp", () => {
  const messages = [
    { role: "user", content: "old turn, already kept" },
    { role: "assistant", content: [{ type: "text", text: "ok" }] },
    { role: "user", content: `[Wed 2026-11-25 02:05 UTC] ${OPEN}\n- old memory\n${CLOSE}\n\nI moved to Lisbon in May.` },
    { role: "user", content: [{ type: "text", text: "我下周三去杭州出差。" }] },
    { role: "user", content: "Where do I live now?" },
    { role: "assistant", content: [{ type: "text", text: "In Lisbon." }] },
  ];
  assert.deepEqual(turnMessages(messages, false), [
    { role: "user", content: "I moved to Lisbon in May." },
    { role: "user", content: "我下周三去杭州出差。" },
  ]);
  assert.equal(turnMessages(messages, true).at(-1).content, "In Lisbon.");
  assert.deepEqual(turnMessages([{ role: "user", content: "ok" }], false), []);
  assert.equal(stripRecalled(`${OPEN}\nx\n${CLOSE}\nhello`), "hello");
});

test("a URL off loopback is refused, so the token never leaves the machine", () => {
  assert.throws(() => resolveSettings({ baseUrl: "http://example.com:8765" }), /loopback/);
  assert.equal(resolveSettings({}, {}).baseUrl, "http://127.0.0.1:8765");
});

async function listen(handler) {
  const server = createServer(handler);
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

test("a daemon that does not answer is 'down' within timeoutMs; a refusal carries its detail", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mdmem-plugin-"));
  writeFileSync(join(dir, "token"), "secret\n");
  const seen = [];
  const { server, url } = await listen((req, res) => {
    seen.push(req.headers.authorization);
    if (req.url === "/search") return;  // never answers
    res.writeHead(400, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ detail: "query must be a non-empty string" }));
  });
  try {
    const client = new MdmemClient(resolveSettings({ baseUrl: url, tokenFile: join(dir, "token"), timeoutMs: 300 }));
    const started = Date.now();
    await assert.rejects(client.search("tea", "main", 5), MdmemDown);
    assert.ok(Date.now() - started < 3000);
    await assert.rejects(client.add([{ content: "" }], "main"), (err) => err instanceof MdmemRefused
      && err.message === "query must be a non-empty string");
    assert.deepEqual(seen, ["Bearer secret", "Bearer secret"]);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("with mdmem stopped, recall and capture return nothing and warn once; a tool says unavailable", async () => {
  const { server, url } = await listen(() => {});
  server.close();  // a port nobody listens on
  const hooks = {};
  const tools = {};
  const warnings = [];
  plugin.register({
    pluginConfig: { baseUrl: url, token: "t", timeoutMs: 500 },
    logger: { warn: (m) => warnings.push(m), info: () => {} },
    registerTool: (factory, { names }) => { tools[names[0]] = factory({ agentId: "main" }); },
    registerMemoryCapability: () => {},
    on: (name, fn) => { hooks[name] = fn; },
  });
  assert.equal(await hooks.before_prompt_build({ prompt: "where do I live" }, { agentId: "main" }), undefined);
  await hooks.agent_end({ success: true, messages: [{ role: "user", content: "I live in Lisbon now." }] }, {});
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /not reachable/);
  const out = await tools.memory_search.execute("call-1", { query: "Lisbon" });
  assert.equal(out.details.status, "unavailable");
  assert.deepEqual(Object.keys(tools).sort(), ["memory_forget", "memory_get", "memory_search", "memory_store"]);
});

test("capture asks for triggers unless set otherwise; memory_store always stores what the agent chose", async () => {
  const bodies = [];
  const { server, url } = await listen((req, res) => {
    let raw = "";
    req.on("data", (c) => { raw += c; });
    req.on("end", () => {
      bodies.push(JSON.parse(raw || "{}"));
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ results: [{ id: "a1", memory: "x", event: "ADD" }] }));
    });
  });
  try {
    for (const pluginConfig of [{ baseUrl: url, token: "t" }, { baseUrl: url, token: "t", capture: "" }]) {
      const hooks = {};
      const tools = {};
      plugin.register({
        pluginConfig, logger: { warn: () => {}, info: () => {} },
        registerTool: (factory, { names }) => { tools[names[0]] = factory({ agentId: "main" }); },
        registerMemoryCapability: () => {},
        on: (name, fn) => { hooks[name] = fn; },
      });
      await hooks.agent_end({ success: true, messages: [{ role: "user", content: "I live in Lisbon now." }] }, {});
      await tools.memory_store.execute("call-1", { text: "Prefers window seats" });
    }
    assert.deepEqual(bodies.map((b) => b.capture), ["triggers", "raw", undefined, "raw"]);
    assert.equal(resolveSettings({}, {}).capture, "triggers");
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
