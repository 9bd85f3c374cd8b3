/** The mdmem daemon over loopback HTTP (mem0's REST paths): bounded requests, its token, a quiet "down". */

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/** The daemon cannot be reached (not running, timed out, or failing): callers carry on without memory. */
export class MdmemDown extends Error {}

/** The daemon answered and refused the request (4xx): its one-line `detail` says why. */
export class MdmemRefused extends Error {}

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
        + "once to create it, or set the plugin's tokenFile to what `mdmem token --path` prints");
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
      const why = err?.name === "TimeoutError" ? `no answer within ${this.settings.timeoutMs} ms`
        : (err?.cause?.code || err?.message || String(err));
      throw new MdmemDown(`mdmem at ${this.settings.baseUrl} is not reachable (${why}); start it with `
        + "`mdmem serve --http 127.0.0.1:8765`");
    }
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    if (res.ok) return data;
    const detail = data?.detail || `HTTP ${res.status}`;
    if (res.status === 401 || res.status >= 500) throw new MdmemDown(`mdmem refused ${method} ${path}: ${detail}`);
    throw new MdmemRefused(detail);
  }

  /** Hits of one space (agentId) or, with agentId null, of the notes outside every space. */
  async search(query, agentId, limit) {
    const body = { query, top_k: limit };
    if (agentId) body.agent_id = agentId;
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
