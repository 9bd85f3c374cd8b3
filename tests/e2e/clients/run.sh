#!/bin/sh
# The JS clients' own tests (the SillyTavern extension's and the OpenClaw plugin's): Node's built-ins only, a fake
# daemon on loopback standing in for mdmem where the error rule is tested. Node is needed, so they run in `make e2e`.
set -eu
cd "$(dirname "$0")/../../.."
command -v node >/dev/null || { echo "node is not installed (apt-get install nodejs): the JS clients' tests need it"; exit 1; }
node --test integrations/sillytavern/test/memory.test.mjs integrations/openclaw/test/plugin.test.mjs
