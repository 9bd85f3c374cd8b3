/** OpenClaw memory-slot plugin: mdmem's Markdown memory as memory_search/get/store/forget, auto-recall and capture. */

import { MdmemClient, MdmemDown, MdmemRefused, Notices, resolveSettings } from "./client.js";
import { recentTurns, stripRecalled, turnMessages } from "./recall.js";

const DEFAULT_AGENT = "main";  // OpenClaw's agent id when a run names none
const MAX_QUERY_CHARS = 2000;

function text(payload) {
  return { content: [{ type: "text", text: JSON.stringify(payload, null, 2) }], details: payload };
}

function agentOf(ctx) {
  const id = typeof ctx?.agentId === "string" ? ctx.agentId.trim() : "";
  return id || DEFAULT_AGENT;
}

/** Hit in the shape the agent reads: where it lives, so memory_get and the citation can name it. */
function hitView(hit) {
  const m = hit.uri ? hit : hit.metadata || {}; // where it lives: top-level fields (older mdmem: in metadata)
  return {
    id: hit.id, text: hit.memory, score: hit.score, date: hit.created_at?.slice(0, 10) ?? null,
    path: m.uri ?? null, startLine: m.start_line ?? null, endLine: m.end_line ?? null,
    source: hit.agent_id ? "agent" : "notes",
  };
}

export function createPlugin(api) {
  const settings = resolveSettings(api.pluginConfig ?? {});
  const client = new MdmemClient(settings);
  const health = new Notices(api.logger);

  // the agent's space and the workspace's notes in one ranking, made by the daemon
  async function search(query, agentId, limit) {
    return await client.search(query, agentId, limit, settings.rootNotes);
  }

  // a tool's failure is an answer the model can relay, never a thrown error that ends the turn
  async function guarded(what, work) {
    try {
      const out = await work();
      health.ok();
      return text(out);
    } catch (err) {
      if (!(err instanceof MdmemDown || err instanceof MdmemRefused)) throw err;
      health.failed(err, what);
      return text({ status: err instanceof MdmemDown ? "unavailable" : "error", disabled: err instanceof MdmemDown,
                    error: err.message });
    }
  }

  const tools = {
    memory_search: (ctx) => ({
      name: "memory_search",
      label: "Memory Search",
      description: "Search long-term memory (the agent's mdmem notes and the workspace's Markdown notes; "
        + "Chinese and English) before answering about prior work, decisions, dates, people, preferences or todos. "
        + "Returns hits with id, text, date and path#lines; read one whole with memory_get.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", description: "What to look for, in the user's language." },
          maxResults: { type: "integer", minimum: 1, maximum: 50 },
        },
        required: ["query"],
        additionalProperties: false,
      },
      execute: (_id, params) => guarded("memory_search", async () => {
        const query = stripRecalled(params?.query);
        if (!query) return { status: "error", error: "query must be a non-empty string" };
        const hits = await search(query, agentOf(ctx), params?.maxResults ?? settings.recallLimit);
        return { status: "ok", results: hits.map(hitView) };
      }),
    }),
    memory_get: (ctx) => ({
      name: "memory_get",
      label: "Memory Get",
      description: "Read one memory as its Markdown note holds it now, by the id memory_search returned.",
      parameters: {
        type: "object",
        properties: { id: { type: "string", description: "A memory id from memory_search." } },
        required: ["id"],
        additionalProperties: false,
      },
      execute: (_id, params) => guarded("memory_get", async () => {
        if (typeof params?.id !== "string" || !params.id.trim()) {
          return { status: "error", error: "id must be a memory id from memory_search" };
        }
        const rec = await client.get(params.id.trim());
        if (rec.user_id && rec.user_id !== agentOf(ctx)) return { status: "not_found", id: params.id };
        return { status: "ok", memory: hitView({ ...rec, agent_id: rec.user_id }) };
      }),
    }),
    memory_store: (ctx) => ({
      name: "memory_store",
      label: "Memory Store",
      description: "Save one fact, preference, decision or event to long-term memory (a dated line in the "
        + "agent's Markdown notes). A restatement of a stored memory reinforces it instead of adding a copy.",
      parameters: {
        type: "object",
        properties: { text: { type: "string", description: "The memory, as one self-contained sentence." } },
        required: ["text"],
        additionalProperties: false,
      },
      execute: (_id, params) => guarded("memory_store", async () => {
        const body = stripRecalled(params?.text);
        if (!body) return { status: "error", error: "text must be the memory to keep, e.g. \"Prefers green tea\"" };
        const [res] = await client.add([{ content: body }], agentOf(ctx), "raw");  // stored as the agent chose
        return { status: "ok", id: res?.id ?? null, event: res?.event ?? null };
      }),
    }),
    memory_forget: (ctx) => ({
      name: "memory_forget",
      label: "Memory Forget",
      description: "Remove one of the agent's memories from its note by memoryId. With only a query it lists "
        + "the candidates (nothing is removed); call again with the memoryId the user confirms.",
      parameters: {
        type: "object",
        properties: {
          memoryId: { type: "string", description: "The id of the memory to remove." },
          query: { type: "string", description: "Find candidates to remove." },
        },
        additionalProperties: false,
      },
      execute: (_id, params) => guarded("memory_forget", async () => {
        const agentId = agentOf(ctx);
        if (typeof params?.memoryId === "string" && params.memoryId.trim()) {
          const rec = await client.get(params.memoryId.trim());
          if (rec.user_id !== agentId) {  // shared notes and other agents' memories are edited by people, not here
            return { status: "error", error: "that memory is not in this agent's memory; edit the note itself" };
          }
          await client.forget(params.memoryId.trim());
          return { status: "ok", removed: params.memoryId.trim() };
        }
        const query = stripRecalled(params?.query);
        if (!query) return { status: "error", error: "give memoryId, or a query to list candidates" };
        const hits = await client.search(query, agentId, 5);
        return { status: "candidates", candidates: hits.map(hitView) };
      }),
    }),
  };
  return { settings, client, health, search, tools };
}

function promptSection({ availableTools }) {
  if (!availableTools?.has?.("memory_search")) return [];
  return [
    "## Memory Recall",
    "Relevant long-term memories arrive before the user's message under \"Relevant long-term memory:\"; they come from "
      + "Markdown notes "
      + "and may be outdated. Before answering about prior work, decisions, dates, people, preferences or todos "
      + "that are not there, run memory_search (memory_get reads one hit by its id). "
      + "Save a durable fact the user states with memory_store; remove one with memory_forget.",
    "Citations: include Source: <path#line> when it helps the user verify a memory.",
    "",
  ];
}

const plugin = {
  id: "mdmem",
  name: "mdmem memory",
  description: "Long-term memory in Markdown notes, searched by the mdmem daemon over loopback HTTP",
  kind: "memory",
  register(api) {
    const p = createPlugin(api);
    for (const [name, make] of Object.entries(p.tools)) api.registerTool((ctx) => make(ctx), { names: [name] });
    // the slot owner's prompt section replaces memory-core's, which tells the model to read memory files by path
    api.registerMemoryCapability?.({ promptBuilder: promptSection });

    if (p.settings.autoRecall) {
      api.on("before_prompt_build", async (event, ctx) => {
        // a pasted document is not a question: its opening is enough to find what it is about
        const query = stripRecalled(typeof event?.currentUserMessage === "string" ? event.currentUserMessage
          : event?.prompt).slice(0, MAX_QUERY_CHARS);
        if (!query) return undefined;
        try {
          // the daemon's block, injected as it comes: the same block every mdmem client gets
          const answer = await p.client.recall(query, agentOf(ctx), {
            shared: p.settings.rootNotes, context: recentTurns(event?.messages), limit: p.settings.recallLimit,
            maxChars: p.settings.recallMaxChars,
          });
          p.health.ok();
          return answer?.text ? { prependContext: answer.text } : undefined;
        } catch (err) {
          if (!(err instanceof MdmemDown || err instanceof MdmemRefused)) throw err;
          p.health.failed(err, "recall");
          return undefined;
        }
      });
    }

    if (p.settings.autoCapture) {
      api.on("agent_end", async (event, ctx) => {
        if (!event?.success) return;
        const said = turnMessages(event.messages, p.settings.captureAssistant);
        if (!said.length) return;
        try {
          await p.client.add(said, agentOf(ctx), p.settings.capture);
          p.health.ok();
        } catch (err) {
          if (!(err instanceof MdmemDown || err instanceof MdmemRefused)) throw err;
          p.health.failed(err, "capture");
        }
      });
    }
  },
};

// a plain entry object (what definePluginEntry returns) keeps the plugin free of an import of the openclaw package
export default plugin;
