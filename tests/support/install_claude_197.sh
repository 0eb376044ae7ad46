#!/usr/bin/env bash
# Install Claude Code 2.1.197 from the npm registry into a cache folder, once.
#
# The compatibility bench (tests/support/claude_cli.py) runs this pinned CLI next to
# 2.1.332 (bundled in the claude-agent-sdk wheel). The folder is
#   $TT_CLAUDE_CACHE                      when set, else
#   $TT_CACHE/claude-code-2.1.197         when set, else
#   <repo>/.cache/claude-code-2.1.197     (.cache/ is git-ignored).
# Idempotent: when the installed package.json already says 2.1.197 it does nothing.
# Failure (no npm, registry unreachable) is reported and exits non-zero; the tests
# that need this CLI then skip with a reason, except in CI (CI=true), where .ci/run stops
# and such a skip fails the run (tests/support/real_tools.py).
set -euo pipefail

version="2.1.197"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${TT_CLAUDE_CACHE:-${TT_CACHE:-$repo/.cache}/claude-code-$version}"
pkg="$cache/node_modules/@anthropic-ai/claude-code"

# The npm package is a wrapper: its postinstall (install.cjs, local file copies only)
# puts the native binary from @anthropic-ai/claude-code-<platform> over the
# bin/claude.exe placeholder stub. Asking that binary for its version checks both.
installed_version() {
    DISABLE_AUTOUPDATER=1 "$pkg/bin/claude.exe" --version 2>/dev/null | cut -d' ' -f1 || true
}

if [ "$(installed_version)" = "$version" ]; then
    echo "claude-code $version already in $cache"
    exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
    echo "install_claude_197: npm not found" >&2
    exit 1
fi

mkdir -p "$cache"
# Scripts must run: the postinstall is what installs the native binary (see above).
# --no-audit/--no-fund keep the traffic to the package download itself.
npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$version"

if [ "$(installed_version)" != "$version" ]; then
    echo "install_claude_197: $pkg/bin/claude.exe does not report $version after npm install" >&2
    exit 1
fi
echo "claude-code $version installed in $cache"
