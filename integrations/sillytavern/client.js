/** mdmem's HTTP API from the browser: every call has a deadline and never throws; one error rule for every call. */

/**
 * POST a JSON body to mdmem; resolves to {ok, status, data, kind}: kind is null when mdmem answered 2xx, else the
 * failure's kind: 'off' (no URL set), 'down' (not reachable), 'timeout', 'token' (401), 'server' (5xx),
 * 'refused' (another 4xx: its `detail` says why).
 * @param {{url: string, token: string}} settings
 * @param {string} path e.g. '/v1/recall/'
 * @param {object} body
 * @param {number} timeoutMs the chat never waits longer than this for mdmem
 */
export async function post(settings, path, body, timeoutMs) {
    const base = String(settings.url || '').trim().replace(/\/+$/, '');
    if (!base) return { ok: false, status: 0, data: null, kind: 'off' };
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
        const res = await fetch(base + path, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'Authorization': `Bearer ${String(settings.token || '').trim()}` },
            body: JSON.stringify(body),
            signal: abort.signal,
            cache: 'no-store',
        });
        let data = null;
        try { data = await res.json(); } catch { data = null; }
        const kind = res.ok ? null : res.status === 401 ? 'token' : res.status >= 500 ? 'server' : 'refused';
        return { ok: res.ok, status: res.status, data, kind };
    } catch {
        // connection refused, CORS refusal, or our own abort at the deadline
        return { ok: false, status: 0, data: null, kind: abort.signal.aborted ? 'timeout' : 'down' };
    } finally {
        clearTimeout(timer);
    }
}

/** A one-line reason for the settings panel's status line. */
export function reason(answer) {
    if (!answer || answer.kind === 'down' || answer.kind === 'off') return 'unreachable';
    if (answer.kind === 'timeout') return 'no answer in time';
    if (answer.ok) return 'ok';
    const detail = answer.data && typeof answer.data.detail === 'string' ? answer.data.detail : '';
    return `HTTP ${answer.status}${detail ? `: ${detail}` : ''}`;
}

/**
 * The one error rule (the OpenClaw plugin's client.js keeps the same): a call that fails (daemon down, timeout,
 * 5xx, 401, refused) gives no memory and never stops the chat; the first failure of each kind since mdmem last
 * answered gives one visible notice and one log line, later ones of that kind a debug line only; the next answer
 * logs that mdmem answers again and re-arms every kind.
 */
export class Notices {
    /** @param {{notify: (kind: string, text: string) => void, log: (level: string, text: string) => void}} sinks */
    constructor(sinks) {
        this.sinks = sinks;
        this.shown = new Set();
    }

    /** Whether the answer can be used; a failure is told by the rule. `what`: the call, for the log line. */
    usable(answer, what) {
        if (answer?.ok) {
            if (this.shown.size) this.sinks.log('info', '[mdmem] the daemon answers again');
            this.shown.clear();
            return true;
        }
        const kind = answer?.kind || 'down';
        if (kind === 'off') return false; // not set up: nothing failed
        const line = `[mdmem] ${what} skipped (${kind}): ${reason(answer)}`;
        if (this.shown.has(kind)) {
            this.sinks.log('debug', line);
            return false;
        }
        this.shown.add(kind);
        this.sinks.notify(kind, line);
        this.sinks.log('warn', line);
        return false;
    }
}
