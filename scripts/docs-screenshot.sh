#!/usr/bin/env bash
# Shows that /v1/docs works with no internet: starts `leadline serve` on
# loopback and takes a headless Chromium screenshot of the reference page
# with the network off, into docs/api-reference-offline.png.
#
#   scripts/docs-screenshot.sh [OUT.png]
#
# Needs chromium (apt-get install -y chromium). The network is off twice
# over: as root the server and the browser run in a network namespace of
# their own with only loopback (unshare -n), and the browser resolves no
# host but 127.0.0.1 and sends anything else to a dead proxy on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/api-reference-offline.png}"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "docs-screenshot: chromium is needed (apt-get install -y chromium)"; exit 1; }

if [ "${LEADLINE_DOCS_NETNS:-}" = "" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && unshare -n true 2>/dev/null; then
  # Again, inside a namespace whose only interface is loopback.
  exec unshare -n env LEADLINE_DOCS_NETNS=1 bash -c 'ip link set lo up && exec "$0" "$@"' "$0" "$@"
fi

tmp=$(mktemp -d)
cleanup() {
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/leadline" ./cmd/leadline
. scripts/listened.sh
LEADLINE_SECRET_KEY= "$tmp/leadline" serve --addr 127.0.0.1:0 --runner=false --db "$tmp/docs.db" >"$tmp/serve.log" 2>&1 &
pid=$!
url=$(listened "$tmp/serve.log" 'leadline serving' "$pid") || { cat "$tmp/serve.log"; exit 1; }

"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --disable-default-apps --disable-extensions --no-default-browser-check \
  --user-data-dir="$tmp/profile" \
  --host-resolver-rules="MAP * ~NOTFOUND , EXCLUDE 127.0.0.1" \
  --proxy-server="http://127.0.0.1:9" --proxy-bypass-list="127.0.0.1" \
  --window-size=1280,900 --virtual-time-budget=15000 --hide-scrollbars \
  --screenshot="$tmp/shot.png" "$url/v1/docs#/" >"$tmp/chromium.log" 2>&1 || {
  cat "$tmp/chromium.log"; exit 1; }
mkdir -p "$(dirname "$out")"
cp "$tmp/shot.png" "$out"
echo "docs-screenshot: $out ($(wc -c <"$out") bytes), with the network off"
