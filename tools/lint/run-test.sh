#!/usr/bin/env bash
# ctest's lint tests (label lint): runs tools/lint/SCRIPT on what tools/lint/install.sh put in
# NPM_DIR (TOOL: a path under NPM_DIR/node_modules), or says how to get it. It fetches nothing.
#   tools/lint/run-test.sh SCRIPT TOOL NPM_DIR WORK_DIR
set -euo pipefail
script="$1" tool="$2" npm_dir="$3" work="$4"
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v node >/dev/null; then
  echo "lint test: node is missing: apt-get install nodejs npm, then tools/lint/install.sh $npm_dir (./run_labs.sh test does both)" >&2
  exit 1
fi
if [ ! -e "$npm_dir/node_modules/$tool" ]; then
  echo "lint test: $npm_dir/node_modules/$tool is not installed: run tools/lint/install.sh $npm_dir (./run_labs.sh test does it before ctest)" >&2
  exit 1
fi
exec node "$here/$script" "$npm_dir/node_modules/$tool" "$work"
