#!/bin/sh
# The memory browser's review tab in headless Chromium against a real `mdmem serve --http` (the ui suite's harness).
set -eu
cd "$(dirname "$0")/../../.."
UI_SUITE=tests/e2e/ui/e2e_review.mjs exec sh tests/e2e/ui/run.sh
