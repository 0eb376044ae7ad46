"""What real Claude Code sends when it resumes a damaged session, and the same session
after ``tt repair``: the table for the README.

For each damage kind (`tests.damage`), applied to a freshly generated real session (the
compatibility bench's script, run by the real CLI against the local stand-in), the CLI
resumes (1) the damaged file and (2) the file ``tt repair --in-place`` made of it, and we
count the conversation blocks it sends that the undamaged session sends too, minus
those of records the damage physically destroyed, and whether they come in order (see
``tests/repair/test_repair_claude.py``, which asserts every cell of the README's table).

    python benchmarks/repair_vs_claude.py [--versions 2.1.332 2.1.197] [--json out.json]

Needs the real CLIs (``pip install -e '.[test]'``; ``tests/support/install_claude_197.sh``).
Offline: the only API is the stand-in on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.damage import KINDS
from tests.repair.test_repair_claude import (
    ON_SESSION,
    Row,
    damaged_cell,
    generate_thinking_session,
    repaired_cell,
    rows,
)
from tests.support.claude_cli import find_cli
from tests.support.sessions import generate_session
from transcript_tools.model.diagnostics import CODES


def table(results: dict[str, list[Row]]) -> str:
    """The README's table, cell by cell as `tests/repair/test_repair_claude.py` asserts it."""
    versions = list(results)
    head = (
        "| damage (validate code) | tt repair fix | "
        + " | ".join(f"CC {v} damaged | CC {v} repaired" for v in versions)
        + " |"
    )
    sep = "|---|---|" + "---|---|" * len(versions)
    out = [head, sep]
    by_kind = {v: {r.kind: r for r in rs} for v, rs in results.items()}
    for kind in KINDS:
        cells = []
        fixes = ""
        for v in versions:
            r = by_kind[v].get(kind)
            if r is None:
                cells += ["-", "-"]
                continue
            fixes = ", ".join(r.fixes) or CODES[kind].fix or ""
            cells += [damaged_cell(r), repaired_cell(r) if not r.repaired_diff else "differs (see stderr)"]
        out.append(f"| {kind} | {fixes} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versions", nargs="*", default=["2.1.332", "2.1.197"])
    ap.add_argument("--json", type=Path, help="also write the rows as JSON here")
    a = ap.parse_args()
    results: dict[str, list[Row]] = {}
    with tempfile.TemporaryDirectory(prefix="tt-repair-vs-claude-") as tmp:
        root = Path(tmp)
        for v in a.versions:
            cli = find_cli(v)
            if cli is None:
                print(f"Claude Code {v} not installed; skipped", file=sys.stderr)
                continue
            session = generate_session(cli, root / f"session-{v}")
            got = list(rows(session, ON_SESSION, root / f"scratch-{v}"))
            thinking = generate_thinking_session(cli, root / f"thinking-{v}")
            got += list(rows(thinking, ["split-message-noncontiguous"], root / f"scratch-thinking-{v}"))
            results[v] = got
            for r in got:
                print(
                    f"{v} {r.kind}: damaged {damaged_cell(r)}, repaired {repaired_cell(r)}", file=sys.stderr
                )
                if r.repaired_diff:
                    print(r.repaired_diff, file=sys.stderr)
    print(table(results))
    if a.json:
        a.json.write_text(json.dumps({v: [asdict(r) for r in rs] for v, rs in results.items()}, indent=2))


if __name__ == "__main__":
    main()
