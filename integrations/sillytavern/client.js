/** mdmem's HTTP API from the browser: every call has a deadline and answers null on any failure, never throws. */

/**
 * POST a JSON body to mdmem; resolves to the parsed answer, or null (down, slow, refused, bad JSON).
 * @param {{url: string, token: string}} settings
 * @param {string} path e.g. '/search'
 * @param {object} body
 * @param {number} timeoutMs the chat never waits longer than this for mdmem
 * @returns {Promise<{ok: boolean, status: number, data: any} | null>}
 */
export async function post(settings, path, body, timeoutMs) {
    const base = String(settings.url || '').trim().replace(/\/+$/, '');
    if (!base) return null;
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
        return { ok: res.ok, status: res.status, data };
    } catch {
        return null; // connection refused, timeout, CORS refusal: the caller goes on without memory
    } finally {
        clearTimeout(timer);
    }
}

/** A one-line reason for the settings panel's status line (never shown in the chat). */
export function reason(answer) {
    if (answer === null) return 'unreachable';
    if (answer.ok) return 'ok';
    const detail = answer.data && typeof answer.data.detail === 'string' ? answer.data.detail : '';
    return `HTTP ${answer.status}${detail ? `: ${detail}` : ''}`;
}
