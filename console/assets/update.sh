#!/usr/bin/env bash
# Vendors the console's two libraries from the npm registry, at the
# versions pinned below, with their licences, under console/assets/vendor:
# htmx (htmx.org) and Chart.js (chart.js). The console serves them from
# the binary; nothing loads from another host.
#
#   console/assets/update.sh            (the pinned versions)
#   HTMX=2.0.11 CHARTJS=4.6.1 console/assets/update.sh
#
# Then run `go test ./console/...` (the browser tests fail on any console
# error or CSP violation) and commit the folder.
set -euo pipefail
cd "$(dirname "$0")"

HTMX="${HTMX:-2.0.11}"
CHARTJS="${CHARTJS:-4.6.1}"
command -v npm >/dev/null || { echo "update.sh: npm is needed (apt-get install -y npm)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fetch PACKAGE VERSION: unpacks the package into $tmp/PACKAGE and checks
# that it is the version asked for.
fetch() {
  local pkg=$1 version=$2
  (cd "$tmp" && npm pack --silent "$pkg@$version" >/dev/null)
  mkdir -p "$tmp/$pkg"
  tar -xzf "$tmp/$pkg-$version.tgz" -C "$tmp/$pkg"
  local got
  got=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$tmp/$pkg/package/package.json" | head -n 1)
  [ "$got" = "$version" ] || { echo "update.sh: asked for $pkg $version, the package says $got"; exit 1; }
}

fetch htmx.org "$HTMX"
rm -rf vendor/htmx && mkdir -p vendor/htmx
cp "$tmp/htmx.org/package/dist/htmx.min.js" vendor/htmx/htmx.min.js
cp "$tmp/htmx.org/package/LICENSE" vendor/htmx/LICENSE
echo "$HTMX" > vendor/htmx/VERSION

fetch chart.js "$CHARTJS"
rm -rf vendor/chartjs && mkdir -p vendor/chartjs
# The source map is not vendored: its comment is dropped so that a
# browser's developer tools do not ask the server for it.
sed '/^\/\/# sourceMappingURL=/d' "$tmp/chart.js/package/dist/chart.umd.min.js" > vendor/chartjs/chart.umd.min.js
cp "$tmp/chart.js/package/LICENSE.md" vendor/chartjs/LICENSE.md
echo "$CHARTJS" > vendor/chartjs/VERSION

echo "update.sh: htmx.org $HTMX and chart.js $CHARTJS in $(pwd)/vendor"
ls -l vendor/*
