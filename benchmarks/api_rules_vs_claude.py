"""The README table "Requests the API refuses, against the real client": each shape of
damage (tests/damage.py API_KINDS) on a session each pinned CLI has just written,
resumed by that CLI against the strict stand-in alone and after ``tt repair``, and
``tt resume``'s conversation of the damaged file judged by the same rules.

    python benchmarks/api_rules_vs_claude.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.damage import API_KINDS
from tests.model.test_api_rules_claude import measure
from tests.support.claude_cli import find_cli
from tests.support.sessions import generate_session


def main() -> None:
    rows: dict[tuple[str, str], object] = {}
    with tempfile.TemporaryDirectory(prefix="tt-api-bench-") as scratch:
        for version in ("2.1.332", "2.1.197"):
            cli = find_cli(version)
            if cli is None:
                sys.exit(f"Claude Code {version} is not installed")
            session = generate_session(cli, Path(scratch) / version)
            for kind in sorted(API_KINDS):
                rows[(kind, version)] = measure(session, kind)
    print(
        "| shape | CC 2.1.332 alone | CC 2.1.197 alone | after `tt repair`: 2.1.332 / 2.1.197 | `tt resume` on the damaged file |"
    )
    print("|---|---|---|---|---|")
    for kind in sorted(API_KINDS):
        a, b = rows[(kind, "2.1.332")], rows[(kind, "2.1.197")]
        tt = "accepted" if a.tt_resume and b.tt_resume else "**refused**"  # type: ignore[attr-defined]
        print(
            f"| {kind} | {a.cell_alone()} | {b.cell_alone()} | {a.cell_repaired()} / {b.cell_repaired()} | {tt} |"
        )  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
