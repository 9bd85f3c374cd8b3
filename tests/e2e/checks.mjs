// What every browser suite under tests/e2e/ checks with: a named check, and a probe polled up to a deadline.
export const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

export function check(ok, what) {
    if (!ok) throw new Error(`FAILED: ${what}`);
    console.log(`ok: ${what}`);
}

export async function until(what, seconds, probe) {
    const end = Date.now() + seconds * 1000;
    for (;;) {
        const value = await probe();
        if (value) return value;
        if (Date.now() > end) throw new Error(`FAILED: ${what} (waited ${seconds} s)`);
        await sleep(200);
    }
}
