"""Does ``tt compact --keep-tokens N`` keep N tokens of what a resume sends? The README's table.

The real Claude Code 2.1.332 writes a session (tests/support/budget.py's script, run
against the local stand-in: tool calls and plain turns, and the attachment records every
run writes: prompt snapshots, skill/agent listings, environment ...), which is grown to
``--mb`` MB (`grow.py`); for each budget, ``tt compact FILE --keep-tokens N -o DIR``
writes a new session and the real CLI resumes it against the local stand-in. The table
gives the tokens of the kept messages in the request the CLI sent (summary, probe,
``role: "system"`` messages and ``<system-reminder>`` renderings excluded; tt's tokenizer)
and their ratio to the budget. See tests/support/budget.py for the counting rule.

    python benchmarks/bench_compact_budget.py [--mb 4.5] [--budgets 10000 20000 40000] [--json out.json]

Needs the real Claude Code 2.1.332 (bundled with claude-agent-sdk). Offline: the only API
is the stand-in on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.budget import measure
from tests.support.claude_cli import find_cli


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mb", type=float, default=4.5, help="size of the grown session (default 4.5 MB)")
    ap.add_argument("--budgets", type=int, nargs="+", default=[10_000, 20_000, 40_000])
    ap.add_argument("--version", default="2.1.332", help="the Claude Code version that resumes")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    a = ap.parse_args()
    cli = find_cli(a.version)
    if cli is None:
        raise SystemExit(f"Claude Code {a.version} is not installed")
    with tempfile.TemporaryDirectory(prefix="tt-bench-budget-") as tmp:
        rows = measure(cli, a.budgets, Path(tmp), mb=a.mb)
    print(f"Session: written by Claude Code {cli.version}, grown to {a.mb} MB; resumed by the same CLI")
    print("| --keep-tokens | messages kept | tt's estimate of them | sent after the resume | sent / budget |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.budget:,} | {r.kept_messages} | {r.planned:,} | {r.sent:,} | {r.ratio:.2f} |")
    if a.json:
        a.json.write_text(json.dumps([asdict(r) | {"ratio": r.ratio} for r in rows], indent=2))


if __name__ == "__main__":
    main()
