/** The mdmem daemon over loopback HTTP (mem0's REST paths): bounded requests, its token, a quiet "down". */

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/** The daemon cannot be used (kind: "down" not running, "timeout", "server" a 5xx, "token" a 401): callers carry
 * on without memory. */
export class MdmemDown extends Error {
  constructor(message, kind = "down") {
    super(message);
    this.kind = kind;
  }
}

/** The daemon answered and refused the request (a 4xx other than 401): its one-line `detail` says why. */
export class MdmemRefused extends Error {
  constructor(message) {
    super(message);
    this.kind = "refused";
  }
}

/**
 * The one error rule (the SillyTavern extension's client.js keeps the same): a call that fails (daemon down,
 * timeout, 5xx, 401, refused) gives no memory and never stops the turn; the first failure of each kind since mdmem
 * last answered gives one visible notice (OpenClaw shows a plugin's warnings) and one log line, later ones of that
 * kind a debug line only; the next answer logs that mdmem answers again and re-arms every kind.
 */
export class Notices {
  constructor(logger) {
    this.logger = logger;
    this.shown = new Set();
  }

  failed(err, what) {
    const kind = err?.kind || "down";
    if (this.shown.has(kind)) {
      this.logger?.debug?.(`mdmem: ${what} skipped again (${kind}): ${err.message}`);
      return;
    }
    this.shown.add(kind);
    this.logger?.warn?.(`mdmem: ${what} ${kind === "refused" ? "refused" : "skipped"}: ${err.message}`);
  }

  ok() {
    if (this.shown.size) this.logger?.info?.("mdmem: the daemon answers again");
    this.shown.clear();
  }
}

function expandHome(path) {
  return path === "~" || path.startsWith("~/") ? join(homedir(), path.slice(1)) : path;
}

/** The plugin's settings with defaults; a non-loopback URL is refused so the token never leaves the machine. */
export function resolveSettings(raw = {}, env = process.env) {
  const baseUrl = String(raw.baseUrl || env.MDMEM_URL || "http://127.0.0.1:8765").replace(/\/+$/, "");
  let host;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    throw new Error(`mdmem: baseUrl ${JSON.stringify(baseUrl)} is not a URL; use e.g. http://127.0.0.1:8765`);
  }
  if (!LOOPBACK.has(host)) {
    throw new Error(`mdmem: baseUrl must be on loopback (127.0.0.1, localhost or [::1]), not ${host}`);
  }
  const home = env.MDMEM_HOME ? expandHome(env.MDMEM_HOME) : join(homedir(), ".mdmem");
  return {
    baseUrl,
    token: raw.token || env.MDMEM_TOKEN || null,
    tokenFile: expandHome(raw.tokenFile || join(home, ".http-token")),
    autoRecall: raw.autoRecall !== false,
    autoCapture: raw.autoCapture !== false,
    captureAssistant: raw.captureAssistant === true,
    // what a turn becomes (docs/CAPTURE.md): triggers stored half the lines of raw and recalled as much on LoCoMo;
    // "" leaves it to mdmem's [capture] setting
    capture: typeof raw.capture === "string" ? raw.capture : "triggers",
    rootNotes: raw.rootNotes !== false,
    recallLimit: Number.isInteger(raw.recallLimit) ? raw.recallLimit : 5,
    recallMaxChars: Number.isInteger(raw.recallMaxChars) ? raw.recallMaxChars : 1500,
    timeoutMs: Number.isInteger(raw.timeoutMs) ? raw.timeoutMs : 5000,
  };
}

export class MdmemClient {
  constructor(settings) {
    this.settings = settings;
  }

  // read on every call: deleting the token file and restarting the daemon rotates it without restarting OpenClaw
  token() {
    if (this.settings.token) return this.settings.token;
    try {
      return readFileSync(this.settings.tokenFile, "utf8").trim();
    } catch (err) {
      throw new MdmemDown(`no mdmem token at ${this.settings.tokenFile} (${err.code}); start \`mdmem serve --http\` `
        + "once to create it, or set the plugin's tokenFile to what `mdmem token --path` prints", "token");
    }
  }

  async request(method, path, body) {
    const url = `${this.settings.baseUrl}${path}`;
    let res;
    try {
      res = await fetch(url, {
        method,
        headers: { Authorization: `Bearer ${this.token()}`, "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
    } catch (err) {
      if (err instanceof MdmemDown) throw err;
      const late = err?.name === "TimeoutError";
      const why = late ? `no answer within ${this.settings.timeoutMs} ms` : (err?.cause?.code || err?.message || String(err));
      throw new MdmemDown(`mdmem at ${this.settings.baseUrl} is not reachable (${why}); start it with `
        + "`mdmem serve --http 127.0.0.1:8765`", late ? "timeout" : "down");
    }
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    if (res.ok) return data;
    const detail = data?.detail || `HTTP ${res.status}`;
    if (res.status === 401) {
      throw new MdmemDown(`mdmem refused the token (${detail}); set the plugin's tokenFile to what \`mdmem token --path\` prints`,
        "token");
    }
    if (res.status >= 500) throw new MdmemDown(`mdmem failed ${method} ${path}: ${detail}`, "server");
    throw new MdmemRefused(detail);
  }

  /**
   * The daemon's recall block for a question: the agent's space and (shared) the workspace's notes outside every
   * space in one ranking; context: the recent messages [{role, content}] a weak question is searched with.
   * Answers the route's object ({text, memories, tier, ...}); its `text` is what goes into the prompt, as it is.
   */
  async recall(query, agentId, { shared = true, context = [], limit, maxChars } = {}) {
    const body = { query, agent_id: agentId, shared, limit, max_chars: maxChars };
    if (context.length) body.context = context;
    return await this.request("POST", "/v1/recall/", body);
  }

  /** Hits of one space (agentId) or, with agentId null, of the notes outside every space; shared: both, in the
   * daemon's one ranking. */
  async search(query, agentId, limit, shared = false) {
    const body = { query, top_k: limit };
    if (agentId) body.agent_id = agentId;
    if (shared) body.shared = true;
    const data = await this.request("POST", "/search", body);
    return data?.results ?? [];
  }

  /** The messages become dated memories in the agent's space as `capture` says (raw: each message; triggers: the
   * sentences that state facts; omitted: mdmem's [capture] setting); `role` empty stores the text alone. */
  async add(messages, agentId, capture = "") {
    const data = await this.request("POST", "/memories", { messages, agent_id: agentId, ...(capture ? { capture } : {}) });
    return data?.results ?? [];
  }

  async get(id) {
    return await this.request("GET", `/memories/${encodeURIComponent(id)}`);
  }

  async forget(id) {
    return await this.request("DELETE", `/memories/${encodeURIComponent(id)}`);
  }
}
