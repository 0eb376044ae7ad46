#!/usr/bin/env bash
# Install ccusage (npm, real) into <repo>/.cache/ccusage, once: the oracle for `tt stats`
# token totals (tests/test_stats.py). 20.0.24 is the newest release with a native linux
# binary. npm 11 refuses `--prefix DIR` without a package.json there, hence the stub.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dir="$repo/.cache/ccusage"
if [ -x "$dir/node_modules/.bin/ccusage" ]; then
    echo "ccusage already in $dir"
    exit 0
fi
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"private":true}' > package.json
npm install --no-audit --no-fund --loglevel=error ccusage@20.0.24
