#!/bin/sh
# SillyTavern 1.12.6 (unmodified source) on loopback, driven in headless Chromium, with the mdmem extension
# installed, a recording stub model and `mdmem serve --http`: a chat turn lands in the character's Markdown, the
# next prompt holds it, and with mdmem stopped the chat still works. Installs are cached in tests/e2e/.cache/.
# SILLYTAVERN_SHOT=docs/sillytavern-settings.png refreshes the README's picture of the settings panel.
set -eu
cd "$(dirname "$0")/../../.."
ROOT=$(pwd)
HERE=tests/e2e/sillytavern
CACHE=$ROOT/tests/e2e/.cache
TARBALL=${SILLYTAVERN_TARBALL:-../shared/vendor/sillytavern-1.12.6.tar.xz}
SHA256=f060b7303d9e2da2ad1ec9f99ae315f55b37d3406cf5d3dcf4f578139b1e1dd2
PY=${PYTHON:-$ROOT/.venv/bin/python}
ST=$CACHE/SillyTavern-1.12.6

[ -f "$TARBALL" ] || { echo "SillyTavern source missing: $TARBALL (set SILLYTAVERN_TARBALL to sillytavern-1.12.6.tar.xz)"; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "node and npm are needed: apt-get install -y nodejs npm"; exit 1; }
[ -x "$PY" ] || { echo "no Python at $PY: run make venv first (or set PYTHON)"; exit 1; }

# SillyTavern: checked, unpacked and its dependencies installed once per tarball
mkdir -p "$CACHE"
if [ "$(cat "$ST/.mdmem-ready" 2>/dev/null)" != "$SHA256" ]; then
  echo "$SHA256  $TARBALL" | sha256sum -c --quiet - || { echo "$TARBALL: sha256 is not $SHA256; fetch tag 1.12.6 again"; exit 1; }
  rm -rf "$ST" && tar -xJf "$TARBALL" -C "$CACHE"
  command -v git >/dev/null || { echo "git is needed (SillyTavern installs extensions with it): apt-get install -y git"; exit 1; }
  (cd "$ST" && timeout 600 npm ci --no-audit --no-fund --loglevel=error)
  # loopback only, no browser launch, no downloads at start (a fresh machine reaches only the registries)
  (cd "$ST" && node -e '
    const fs = require("fs"), yaml = require("yaml");
    const c = yaml.parse(fs.readFileSync("config.yaml", "utf8"));
    Object.assign(c, {listen: false, whitelistMode: true, basicAuthMode: false, autorun: false,
      enableExtensionsAutoUpdate: false, enableDownloadableTokenizers: false});
    c.extras = Object.assign(c.extras || {}, {disableAutoDownload: true});
    fs.writeFileSync("config.yaml", yaml.stringify(c));')
  echo "$SHA256" > "$ST/.mdmem-ready"
fi

# Chromium from Debian (root installs it; otherwise say how) and the browser driver, reinstalled when the lock changes
. tests/e2e/browser.sh

WORK=$(mktemp -d)
PIDS=""
cleanup() {
  for pid in $PIDS; do kill "$pid" 2>/dev/null || true; done
  for pid in $PIDS; do
    i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null || true
  done
  [ -n "${KEEP_E2E:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() {  # URL SECONDS WHAT: any HTTP answer will do; none in time fails with a line and the log's tail
  "$PY" - "$1" "$2" <<'PYEOF' || { echo "$3 did not answer at $1 in $2 s; log: $WORK/$3.log"; tail -20 "$WORK/$3.log"; exit 1; }
import sys, time, urllib.error, urllib.request
url, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    try:
        urllib.request.urlopen(url, timeout=2).close()
        sys.exit(0)
    except urllib.error.HTTPError:
        sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(1)
PYEOF
}
STUB_PORT=$(free_port); MDMEM_PORT=$(free_port); ST_PORT=$(free_port)
DATA=$WORK/st-data
MDMEM_HOME=$WORK/mdmem-home
mkdir -p "$MDMEM_HOME" "$WORK/run"

"$PY" tests/e2e/stub_model.py "$STUB_PORT" "$WORK/prompts.jsonl" >"$WORK/stub.log" 2>&1 &
PIDS="$PIDS $!"

# SillyTavern's first start writes the user's settings.json; then the stub is made the connected model
(cd "$ST" && exec node server.js --dataRoot "$DATA" --port "$ST_PORT" --listen false --autorun false) >"$WORK/sillytavern.log" 2>&1 &
ST_PID=$!; PIDS="$PIDS $ST_PID"
wait_for "http://127.0.0.1:$ST_PORT/" 120 sillytavern
i=0; until [ -f "$DATA/default-user/settings.json" ] || [ $i -gt 100 ]; do sleep 0.2; i=$((i + 1)); done
kill "$ST_PID"; i=0; while kill -0 "$ST_PID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
node -e '
  const fs = require("fs"), [file, port] = process.argv.slice(1), s = JSON.parse(fs.readFileSync(file, "utf8"));
  s.firstRun = false; s.main_api = "openai";
  Object.assign(s.oai_settings ||= {}, {chat_completion_source: "custom", custom_url: `http://127.0.0.1:${port}/v1`,
    custom_model: "stub-model", stream_openai: false});
  (s.power_user ||= {}).auto_connect = true;
  fs.writeFileSync(file, JSON.stringify(s, null, 4));' "$DATA/default-user/settings.json" "$STUB_PORT"
# the extension as a git repository (this checkout's files), for SillyTavern's own "Install extension" to clone
SRC=$WORK/mdmem
mkdir -p "$SRC/integrations" && cp manifest.json "$SRC/" && cp -r integrations/sillytavern "$SRC/integrations/"
git -C "$SRC" init -q && git -C "$SRC" add -A
git -C "$SRC" -c user.name=e2e -c user.email=e2e@localhost -c commit.gpgsign=false commit -qm "the extension"
(cd "$ST" && exec node server.js --dataRoot "$DATA" --port "$ST_PORT" --listen false --autorun false) >"$WORK/sillytavern.log" 2>&1 &
PIDS="$PIDS $!"

XDG_RUNTIME_DIR=$WORK/run HF_HUB_OFFLINE=1 "$PY" -m indexer --home "$MDMEM_HOME" serve --http "127.0.0.1:$MDMEM_PORT" \
  --allow-origin "http://127.0.0.1:$ST_PORT" >"$WORK/mdmem.log" 2>&1 &
MDMEM_PID=$!; PIDS="$PIDS $MDMEM_PID"
wait_for "http://127.0.0.1:$STUB_PORT/v1/models" 30 stub
wait_for "http://127.0.0.1:$MDMEM_PORT/memories" 120 mdmem
wait_for "http://127.0.0.1:$ST_PORT/" 60 sillytavern

ST_URL="http://127.0.0.1:$ST_PORT" MDMEM_URL="http://127.0.0.1:$MDMEM_PORT" MDMEM_HOME="$MDMEM_HOME" \
MDMEM_PID=$MDMEM_PID EXTENSION_GIT="file://$SRC" PROMPTS="$WORK/prompts.jsonl" DRIVER="$CACHE/driver" SHOT="${SILLYTAVERN_SHOT:-$CACHE/sillytavern-settings.png}" FAIL_SHOT="$CACHE/sillytavern-failure.png" \
  timeout 300 node "$HERE/e2e_sillytavern.mjs"
