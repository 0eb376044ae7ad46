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

from tests.damage import API_KINDS, prompt_too_long
from tests.model.test_api_rules import tt_resume_strict
from tests.model.test_api_rules_claude import Outcome, _code, _short, measure, resume_strict
from tests.support.claude_cli import find_cli
from tests.support.sessions import generate_session
from transcript_tools.repair.files import repair_file


def too_long(session: object) -> tuple[Outcome, Outcome, str]:
    """prompt-too-long: not in API_KINDS (the fix compacts, so the blocks of the history are
    summarised, not all sent): the CLI alone, after tt repair, and tt resume's cell (it
    appends a compaction, then the CLI resumes the file it leaves)."""
    import uuid

    d = prompt_too_long(session.transcript.read_bytes())  # type: ignore[attr-defined]
    alone = resume_strict(session, d.data)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory(prefix="tt-api-bench-") as scratch:
        p = Path(scratch) / "s.jsonl"
        p.write_bytes(d.data)
        repair_file(p, in_place=True, now="2026-12-01T12:00:00.000Z", new_id=lambda: str(uuid.uuid4()))
        repaired = resume_strict(session, p.read_bytes())  # type: ignore[arg-type]
        (Path(scratch) / "r").mkdir()
        refused, code, _ = tt_resume_strict(d.data, Path(scratch) / "r")
        if refused or code:
            return alone, repaired, f"**refused** (exit {code})"
        left = next((Path(scratch) / "r").glob("*.jsonl")).read_bytes()
        then = resume_strict(session, left)  # type: ignore[arg-type]
    return alone, repaired, f"accepted (a compaction appended; the CLI then: {_cell(then)})"


def _cell(o: Outcome) -> str:
    if o.accepted:
        return f"accepted, {len(o.messages)} messages"
    if o.error.startswith("no request"):
        return f'**fails before sending**: "{_short(o.error.split("the CLI said: ", 1)[-1])}"'
    return f"**400** {_code(_short(o.error))}"


def main() -> None:
    rows: dict[tuple[str, str], object] = {}
    long_rows: dict[str, tuple[Outcome, Outcome, str]] = {}
    with tempfile.TemporaryDirectory(prefix="tt-api-bench-") as scratch:
        for version in ("2.1.332", "2.1.197"):
            cli = find_cli(version)
            if cli is None:
                sys.exit(f"Claude Code {version} is not installed")
            session = generate_session(cli, Path(scratch) / version)
            for kind in sorted(API_KINDS):
                rows[(kind, version)] = measure(session, kind)
            long_rows[version] = too_long(session)
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
    a, b = long_rows["2.1.332"], long_rows["2.1.197"]
    tt = f"2.1.332: {a[2]} / 2.1.197: {b[2]}"
    print(
        f"| prompt-too-long | {_cell(a[0])} | {_cell(b[0])} | {_cell(a[1])} / {_cell(b[1])} (a summary and the recent turns) | {tt} |"
    )


if __name__ == "__main__":
    main()
