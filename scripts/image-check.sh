#!/usr/bin/env bash
# What the Dockerfile's image does, checked without a container engine:
# the binary is built by the Dockerfile's own `go build` line, must be
# static (the distroless image has no libc), and must serve from a data
# folder owned by the image's non-root user (65532) with the image's
# environment and command, answering the image's HEALTHCHECK.
#
#   scripts/image-check.sh
#
# Everything listens on loopback. Run by .ci/run; docs/DEPLOY.md.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "image-check: $*"; [ -f "$tmp/serve.log" ] && tail -n 20 "$tmp/serve.log"; exit 1; }

# The build stage's command, as the Dockerfile spells it, with /out here.
build=$(sed -n 's/^RUN \(CGO_ENABLED=0 .*go build .*\) \\$/\1/p' Dockerfile)
[ -n "$build" ] || fail "no 'RUN CGO_ENABLED=0 … go build …' line in the Dockerfile"
eval "${build//\/out\//$tmp/out/}"
bin="$tmp/out/leadline"
[ -x "$bin" ] || fail "the Dockerfile's build line made no $bin"
if ldd "$bin" >/dev/null 2>&1; then
  fail "the binary is dynamically linked; the image has no libc"
fi

# The image's user, data folder, environment and command.
uid=65532
mkdir -p "$tmp/data"
chown "$uid:$uid" "$tmp/data"
chmod 755 "$tmp" "$tmp/out"
expect() { grep -q -- "$1" Dockerfile || fail "the Dockerfile no longer says $1; update this script"; }
expect 'USER 65532:65532'
expect 'ENV LEADLINE_DB=/data/leadline.db'
expect 'CMD \["serve", "--metrics-addr", "0.0.0.0:9090"\]'
expect 'CMD \["/usr/local/bin/leadline", "healthcheck", "--url", "http://127.0.0.1:8080/healthz"\]'

# The kernel picks the ports (scripts/listened.sh).
. scripts/listened.sh
(cd "$tmp/data" && exec setpriv --reuid=$uid --regid=$uid --clear-groups \
  env -i LEADLINE_DB="$tmp/data/leadline.db" LEADLINE_ADDR="127.0.0.1:0" \
  "$bin" serve --metrics-addr "127.0.0.1:0") >"$tmp/serve.log" 2>&1 &
pid=$!
url=$(listened "$tmp/serve.log" 'leadline serving' "$pid") || fail "serve did not start"
murl=$(listened "$tmp/serve.log" 'leadline metrics at' "$pid") || fail "serve printed no metrics address"

for _ in $(seq 1 100); do
  if "$bin" healthcheck --url "$url/healthz" >/dev/null 2>&1; then
    break
  fi
  kill -0 "$pid" 2>/dev/null || fail "serve stopped"
  sleep 0.2
done
"$bin" healthcheck --url "$url/healthz" || fail "healthcheck failed"
owner=$(stat -c %u "$tmp/data/leadline.db")
[ "$owner" = "$uid" ] || fail "the database belongs to uid $owner, not the image's user"
[ -f "$tmp/data/leadline.db.key" ] || fail "no secret key beside the database"
# Read the whole answer first: grep -q stops at the first match, and curl,
# writing on into a closed pipe, would fail the pipeline.
curl -fsS "$murl/metrics" >"$tmp/metrics.txt" || fail "the metrics address did not answer"
grep -q '^leadline_' "$tmp/metrics.txt" || fail "no leadline metrics on the metrics address"
echo "image-check: static binary, serving as uid $uid from the data folder, healthy"
