"""``tt redact``: find secrets in a session and replace them with typed placeholders.

Report first: without ``-o`` or ``--in-place`` nothing is written (``--dry-run`` says so
explicitly), and the report names file:line, the kind and the JSON path of each finding,
never the secret. A session id (or prefix) covers the main file and its subagent files
(``-o fixed.jsonl`` writes them to ``fixed/subagents/``, `session_out`); a path, just that file.
The work is `redact.files.redact_session`'s (the API's path too); this module parses and
renders.

Exit codes: 0 nothing found (or written), 1 secrets found (report only), 2 usage,
3 not found, 4 unreadable, 6 write failed or the file changed meanwhile.
"""

from __future__ import annotations

import click

from ..edge import claude_dir as store
from ..redact.files import redact_session, session_files
from .common import console, continue_option, emit_json, json_option, one_output, require_transcript


@click.command("redact")
@click.argument("target", required=False)
@continue_option
@click.option(
    "-o",
    "--output",
    "output",
    metavar="PATH",
    help="Write the redacted copy here (never overwrites); a session's subagent files go beside it, in PATH-without-.jsonl/subagents/. An existing folder (or PATH/) holds the copy under the input's name.",
)
@click.option(
    "--in-place", is_flag=True, help="Replace the file(s) atomically (keeps <file>.bak unless --no-backup)."
)
@click.option("--dry-run", is_flag=True, help="Report only; write nothing (the default).")
@click.option(
    "--no-backup", is_flag=True, help="With --in-place: keep no .bak (it would still hold the secrets)."
)
@click.option("--force", is_flag=True, help="With --in-place: write even if the file changed meanwhile.")
@click.option("--no-subagents", is_flag=True, help="For a session, leave its subagent files out.")
@json_option
def redact_command(
    target: str | None,
    latest: bool,
    output: str | None,
    in_place: bool,
    dry_run: bool,
    no_backup: bool,
    force: bool,
    no_subagents: bool,
    as_json: bool,
) -> int:
    """Find secrets in TARGET (a file, a session id or an id prefix) and replace each with
    a placeholder such as [REDACTED:aws-access-key].

    API keys and tokens of common providers, private keys, passwords in URLs, secret
    assignments (.env style), JWTs and high-entropy strings are searched in message text,
    tool inputs, tool results and toolUseResult. Reports by default; writes with -o or
    --in-place. Exit 1 when a report found secrets.
    """
    one_output(output, in_place, dry_run)
    if (no_backup or force) and not in_place:
        raise click.UsageError("--no-backup and --force only apply with --in-place")
    if target is None and not latest:
        raise click.UsageError("name a file or a session id (or -c, the latest session here)")
    ref = store.resolve(target, latest=latest)
    target = target if target is not None else str(ref.session_id or ref.path)
    require_transcript(ref.path)  # other JSON, random bytes: exit 4, as every command
    files = session_files(target, ref, not no_subagents)
    results = redact_session(files, output=output, in_place=in_place, backup=not no_backup, force=force)
    written = output is not None or in_place
    total = sum(len(r.findings) for r in results)
    if as_json:
        emit_json({"files": [r.to_dict() for r in results], "findings": total, "written": written})
    else:
        from ..views.redact import render_redact

        render_redact(console(), results, written=written)
    return 1 if total and not written else 0
