#!/usr/bin/env bash
# Vendors the API reference page's script and styles (Stoplight Elements,
# from the npm registry) under server/assets/vendor/stoplight-elements,
# with its licences, so that /v1/docs works with no internet.
#
#   scripts/update-docs-assets.sh [VERSION]     (default: the pinned one)
#
# Then run `go test -run TestDocsOffline ./server`, look at the page
# (scripts/docs-screenshot.sh), and commit the folder.
set -euo pipefail
cd "$(dirname "$0")/.."

dest=server/assets/vendor/stoplight-elements
version="${1:-$(cat "$dest/VERSION")}"
command -v npm >/dev/null || { echo "update-docs-assets: npm is needed (apt-get install -y npm)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@stoplight/elements@$version" >/dev/null)
tar -xzf "$tmp"/stoplight-elements-"$version".tgz -C "$tmp"
got=$(node -p "require('$tmp/package/package.json').version" 2>/dev/null || sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$tmp/package/package.json" | head -n 1)
[ "$got" = "$version" ] || { echo "update-docs-assets: asked for $version, the package says $got"; exit 1; }

rm -rf "$dest"
mkdir -p "$dest"
for f in web-components.min.js styles.min.css LICENSE web-components.min.js.LICENSE.txt; do
  cp "$tmp/package/$f" "$dest/$f"
done
echo "$version" > "$dest/VERSION"
# The page must load nothing from elsewhere: a stylesheet that imports a
# font from a CDN would break it offline.
if grep -Eq '@import|url\(["'\'']?https?:' "$dest/styles.min.css"; then
  echo "update-docs-assets: styles.min.css loads something from the network; check it before committing"
  exit 1
fi
echo "update-docs-assets: @stoplight/elements $version in $dest"
ls -l "$dest"
