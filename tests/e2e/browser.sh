# Chromium from Debian (a Chinese font too: the memory browser's Chinese view) and the browser driver (puppeteer-core,
# pinned by tests/e2e/sillytavern/package-lock.json), installed once into $CACHE/driver: sourced by each suite's
# run.sh that drives a page, from the repository root.
if ! command -v chromium >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "chromium is missing: sudo apt-get install -y --no-install-recommends chromium fonts-liberation"; exit 1; }
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends chromium fonts-liberation fonts-wqy-microhei >/dev/null
fi
if ! cmp -s tests/e2e/sillytavern/package-lock.json "$CACHE/driver/package-lock.json"; then
  rm -rf "$CACHE/driver" && mkdir -p "$CACHE/driver"
  cp tests/e2e/sillytavern/package.json tests/e2e/sillytavern/package-lock.json "$CACHE/driver/"
  (cd "$CACHE/driver" && timeout 300 npm ci --no-audit --no-fund --loglevel=error)
fi
