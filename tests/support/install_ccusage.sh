#!/usr/bin/env bash
# Install ccusage (npm, real) into $TT_CACHE/ccusage (default <repo>/.cache/ccusage), once: the oracle for `tt stats`
# token totals (tests/catalog/test_stats.py). 20.0.24 is the newest release with a native linux
# binary. npm 11 refuses `--prefix DIR` without a package.json there, hence the stub.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dir="${TT_CACHE:-$repo/.cache}/ccusage"
if [ -x "$dir/node_modules/.bin/ccusage" ]; then
    echo "ccusage already in $dir"
    exit 0
fi
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"private":true}' > package.json
if ! command -v npm >/dev/null 2>&1; then
    echo "install_ccusage: npm not found" >&2
    exit 1
fi
npm install --no-audit --no-fund --loglevel=error ccusage@20.0.24
if [ ! -x "$dir/node_modules/.bin/ccusage" ]; then
    echo "install_ccusage: $dir/node_modules/.bin/ccusage missing after npm install" >&2
    exit 1
fi
echo "ccusage installed in $dir"
