#!/bin/sh
# The memory browser in headless Chromium against a real `mdmem serve --http`: login link, search and its filters, recall preview,
# edit, supersede, forget and undo, history, spaces, an editor's save appearing, health and doctor, import (preview, then
# confirm), script shown as text, Chinese, 360 px.
set -eu
cd "$(dirname "$0")/../../.."
ROOT=$(pwd)
CACHE=$ROOT/tests/e2e/.cache
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || { echo "no Python at $PY: run make venv first (or set PYTHON)"; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "node and npm are needed: apt-get install -y nodejs npm"; exit 1; }
. tests/e2e/browser.sh

WORK=$(mktemp -d)
PID=""
cleanup() {
  if [ -n "$PID" ]; then
    kill "$PID" 2>/dev/null || true
    i=0; while kill -0 "$PID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$PID" 2>/dev/null || true
  fi
  [ -n "${KEEP_E2E:-}" ] && echo "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
HOME_DIR=$WORK/home
PROJECT=$WORK/proj  # the daemon serves a project's store too: its memories are edited from the page as well
mkdir -p "$HOME_DIR" "$WORK/run" "$PROJECT/.mdmem/agent"
cp tests/fixtures/imports/mem0/get_all.json "$WORK/mem0-export.json"  # the import view's screenshot shows its path
printf -- '---\ntype: decision\n---\n\n# Decisions\n\n- 2026-01-05: The build uses ninja, not make\n' >"$PROJECT/.mdmem/agent/decisions.md"
export XDG_RUNTIME_DIR=$WORK/run HF_HUB_OFFLINE=1
"$PY" -m indexer --home "$HOME_DIR" --project "$PROJECT" serve --http "127.0.0.1:$PORT" >"$WORK/mdmem.log" 2>&1 &
PID=$!
"$PY" - "$HOME_DIR" "$PORT" <<'PYEOF' || { echo "mdmem did not answer on $PORT; log:"; tail -20 "$WORK/mdmem.log"; exit 1; }
import pathlib, sys, time, urllib.request
home, port = pathlib.Path(sys.argv[1]), sys.argv[2]
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    try:
        token = (home / ".http-token").read_text().strip()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/ping/", headers={"Authorization": f"Bearer {token}"})
        urllib.request.urlopen(req, timeout=2).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(1)
PYEOF
MDMEM_URL="http://127.0.0.1:$PORT" MDMEM_HOME="$HOME_DIR" PROJECT_NOTE="$PROJECT/.mdmem/agent/decisions.md" EXPORT="$WORK/mem0-export.json" DRIVER="$CACHE/driver" \
  LOGIN_CMD="$PY -m indexer --home $HOME_DIR ui --no-browser --http 127.0.0.1:$PORT" \
  FAIL_SHOT="$CACHE/ui-failure.png" SHOT_DIR="${UI_SHOTS:-}" timeout 300 node "${UI_SUITE:-tests/e2e/ui/e2e_ui.mjs}"
