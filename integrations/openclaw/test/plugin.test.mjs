// The plugin's own logic under `node --test` (run by tests/e2e/openclaw/run.sh): the daemon's recall block injected
// as it comes, capture without it, the one error rule, client limits.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { MdmemClient, MdmemDown, MdmemRefused, resolveSettings } from "../client.js";
import plugin from "../index.js";
import { recentTurns, stripRecalled, turnMessages } from "../recall.js";

const BLOCK = "Relevant long-term memory:\n- [2026-11-25 10:00] I moved to Lisbon (source: spaces/main/journal/x.md#L7)";

test("capture keeps the turn's statements without the recalled block or OpenClaw's time stamp", () => {
  const messages = [
    { role: "user", content: "old turn, already kept" },
    { role: "assistant", content: [{ type: "text", text: "ok" }] },
    { role: "user", content: `[Wed 2026-11-25 02:05 UTC] ${BLOCK}\n\nI moved to Lisbon in May.` },
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
  assert.equal(stripRecalled("<mdmem-memory>\nx\n</mdmem-memory>\nhello"), "hello", "an older plugin's block too");
  assert.equal(stripRecalled(`Relevant long-term memory (dated last week):\n- a\n- b\n\nhello`), "hello");
  assert.deepEqual(recentTurns(messages, 2), [
    { role: "user", content: "Where do I live now?" }, { role: "assistant", content: "In Lisbon." }]);
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

function reply(res, status, body) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
}

test("a daemon that does not answer is 'down' within timeoutMs; a refusal carries its detail", async () => {
  const dir = mkdtempSync(join(tmpdir(), "mdmem-plugin-"));
  writeFileSync(join(dir, "token"), "secret\n");
  const seen = [];
  const { server, url } = await listen((req, res) => {
    seen.push(req.headers.authorization);
    if (req.url === "/search") return;  // never answers
    reply(res, 400, { detail: "query must be a non-empty string" });
  });
  try {
    const client = new MdmemClient(resolveSettings({ baseUrl: url, tokenFile: join(dir, "token"), timeoutMs: 300 }));
    const started = Date.now();
    await assert.rejects(client.search("tea", "main", 5), (err) => err instanceof MdmemDown && err.kind === "timeout");
    assert.ok(Date.now() - started < 3000);
    // an answered request gets a deadline no loaded machine misses (300 ms is only for the one never answered)
    const patient = new MdmemClient(resolveSettings({ baseUrl: url, tokenFile: join(dir, "token"), timeoutMs: 30000 }));
    await assert.rejects(patient.add([{ content: "" }], "main"), (err) => err instanceof MdmemRefused
      && err.message === "query must be a non-empty string");
    // the timed-out request may give up before the server reads it on a busy machine: only the token is checked
    assert.ok(seen.length >= 1 && seen.every((h) => h === "Bearer secret"), seen.join());
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

function registered(url) {
  const hooks = {};
  const tools = {};
  const logs = { warn: [], info: [], debug: [] };
  plugin.register({
    pluginConfig: { baseUrl: url, token: "t", timeoutMs: 30000 },  // every fake daemon here answers (or refuses the connection)
    logger: { warn: (m) => logs.warn.push(m), info: (m) => logs.info.push(m), debug: (m) => logs.debug.push(m) },
    registerTool: (factory, { names }) => { tools[names[0]] = factory({ agentId: "main" }); },
    registerMemoryCapability: () => {},
    on: (name, fn) => { hooks[name] = fn; },
  });
  return { hooks, tools, logs };
}

test("recall injects the daemon's block as it comes, asked for the agent's space and the shared notes", async () => {
  const asked = [];
  const { server, url } = await listen((req, res) => {
    let raw = "";
    req.on("data", (c) => { raw += c; });
    req.on("end", () => {
      asked.push({ path: req.url, body: JSON.parse(raw) });
      reply(res, 200, { text: BLOCK, memories: [{ id: "m1" }], tier: "query", query_truncated: null });
    });
  });
  try {
    const { hooks } = registered(url);
    const history = [{ role: "user", content: "My sister visited." }, { role: "assistant", content: "Nice!" }];
    const out = await hooks.before_prompt_build({ prompt: "where does she live?", messages: history }, { agentId: "ops" });
    assert.deepEqual(out, { prependContext: BLOCK });
    assert.equal(asked[0].path, "/v1/recall/");
    assert.deepEqual(asked[0].body, { query: "where does she live?", agent_id: "ops", shared: true, limit: 5,
                                      max_chars: 1500, context: history });
  } finally {
    server.close();
  }
});

test("the error rule: no block, the turn goes on, one notice per failure kind until mdmem answers again", async () => {
  const answers = [500, 500, 401, 401, 200, 500];
  const { server, url } = await listen((req, res) => {
    req.resume();
    req.on("end", () => {
      const status = answers.shift();
      reply(res, status, status === 200 ? { text: "" } : { detail: `failing with ${status}` });
    });
  });
  try {
    const { hooks, logs } = registered(url);
    for (let i = 0; i < 6; i += 1) {
      assert.equal(await hooks.before_prompt_build({ prompt: `question ${i}` }, {}), undefined);
    }
    assert.equal(logs.warn.length, 3, logs.warn.join("\n"));
    assert.match(logs.warn[0], /failed .*failing with 500/);
    assert.match(logs.warn[1], /refused the token/);
    assert.match(logs.warn[2], /failing with 500/, "an answer in between re-arms the notice");
    assert.deepEqual(logs.info, ["mdmem: the daemon answers again"]);
    assert.equal(logs.debug.length, 2, "a repeated failure is a debug line, not another notice");
  } finally {
    server.close();
  }
});

test("with mdmem stopped, recall and capture return nothing and warn once; a tool says unavailable", async () => {
  const { server, url } = await listen(() => {});
  server.close();  // a port nobody listens on
  const { hooks, tools, logs } = registered(url);
  assert.equal(await hooks.before_prompt_build({ prompt: "where do I live" }, { agentId: "main" }), undefined);
  await hooks.agent_end({ success: true, messages: [{ role: "user", content: "I live in Lisbon now." }] }, {});
  assert.equal(logs.warn.length, 1);
  assert.match(logs.warn[0], /not reachable/);
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
