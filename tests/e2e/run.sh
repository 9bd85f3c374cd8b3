#!/bin/sh
# `make e2e`: every end-to-end suite under tests/e2e/<program>/run.sh, with the real programs; stops at the first failure.
set -eu
cd "$(dirname "$0")/../.."
found=0
for suite in tests/e2e/*/run.sh; do
  [ -f "$suite" ] || continue
  found=$((found + 1))
  echo "==> $suite"
  sh "$suite"
done
[ "$found" -gt 0 ] || { echo "no end-to-end suite under tests/e2e/"; exit 1; }
echo "e2e: $found suites passed"
