"""The Python API: one function per ``tt`` verb, taking paths or values and returning the
report the command line renders (the same objects its ``--json`` output is made of).

Shaped after the Agent SDK's session functions (claude-agent-sdk 0.2.189:
``list_sessions``, ``fork_session``, ``rename_session``, ``tag_session``,
``delete_session``), so a user of the SDK finds them where they expect:

- the first argument names a session: a path, a session id or a unique id prefix
  (`claude_dir.resolve`: an id is looked up in every project); ``directory``, as the SDK's,
  narrows that to one project (its working directory, or its folder) and its worktrees;
- ``list_sessions()`` and ``search_sessions()`` without ``directory`` cover every
  project, as the SDK's ``list_sessions()`` does;
- verbs that write take ``dry_run`` and report the same either way; nothing is written
  unless a function's name or an argument asks for it (``output``, ``in_place``).

Invariants: this module is an edge (it reads and writes files through the verbs' file
sides) but it never prints, never exits and never asks: errors are `errors.TTError`
subclasses, each with the exit code the CLI would give. It imports the verbs' modules
only inside each function, so ``import transcript_tools`` stays as cheap as before.
The clock is read only where a verb needs it and can be passed in (``now``).
"""

from __future__ import annotations

import uuid as _uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .edge.reader import MAX_TRANSCRIPT_READ_BYTES

if TYPE_CHECKING:
    from datetime import datetime

    from .bundle.core import Manifest
    from .bundle.files_import import Imported
    from .catalog.files import Row
    from .catalog.search import SessionHits
    from .catalog.stats import Stats
    from .compact.report import Result as CompactResult
    from .compact.summarizers import Summarizer
    from .doctor.core import Diagnosis
    from .edge.claude_dir import SessionRef
    from .fork.core import Fork
    from .manage.core import DeletePlan
    from .model.request import ModelRequest
    from .redact.files import FileResult as RedactResult
    from .repair.files import FileReport
    from .rewind.core import RewindPlan
    from .rewind.files import FileResult as RewindFileResult
    from .validate.core import Report

__all__ = [
    "ExportResult",
    "ForkResult",
    "RecordResult",
    "ResumeRequest",
    "RewindResult",
    "compact_session",
    "delete_session",
    "doctor_session",
    "export_session",
    "fork_session",
    "get_session_stats",
    "import_session",
    "list_sessions",
    "redact_session",
    "rename_session",
    "repair_session",
    "resume_request",
    "rewind_session",
    "search_sessions",
    "tag_session",
    "validate_session",
]


def _ref(session: str | Path, directory: str | Path | None) -> SessionRef:
    """The session named: a path as it is; an id or prefix under the config dir, and with
    ``directory`` only among that project's folders (its git worktrees' included)."""
    from .edge import claude_dir as store

    ref = store.resolve(str(session))
    if directory is None or Path(str(session)).expanduser().is_file():
        return ref
    from .catalog.files_scope import project_dirs
    from .model.errors import NotFound

    folders = {d.resolve() for d in project_dirs(str(directory))}
    if ref.path.parent.resolve() not in folders:
        raise NotFound(
            f"no session {str(session)!r} in the project of {directory}",
            hint="leave directory out to look in every project",
        )
    return ref


def _checked(session: str | Path, directory: str | Path | None, verb: str | None = None) -> SessionRef:
    """`_ref`, refusing what the command line refuses before it starts: a file that is no
    transcript (`NotATranscript`, the CLI's exit 4) and, for a ``verb`` that works on a
    session, a subagent's transcript (`UsageError`). A new user's binary file got a
    different answer from each function (a usage error, not found, a report of nothing)."""
    from .validate.files_kind import require_session_file, require_transcript

    ref = _ref(session, directory)
    if verb is None:
        require_transcript(ref.path)
    else:
        require_session_file(ref.path, verb)
    return ref


def _one_output(output: str | Path | None, in_place: bool) -> None:
    if output is not None and in_place:
        from .model.errors import UsageError

        raise UsageError("give output or in_place, not both")


def _iso(now: datetime | None) -> str:
    """Claude Code's timestamp form (`writer.iso_now`), of ``now`` or of the clock."""
    from .edge.writer import iso, iso_now

    return iso_now() if now is None else iso(now)


# --- validate, repair, redact ---------------------------------------------------------


def validate_session(
    session: str | Path,
    *,
    directory: str | Path | None = None,
    subagents: bool = True,
    schema: bool = True,
    max_bytes: int = MAX_TRANSCRIPT_READ_BYTES,
) -> list[Report]:
    """Check a session (``tt validate``): one `validate.core.Report` per file, the main
    transcript first, then its subagent files (``subagents=False``: the main file only).

    A report's ``errors`` and ``warnings`` count its diagnostics; ``not_transcript`` says
    why a file is no transcript at all. Reads only."""
    from .edge.claude_dir import main_and_subagent_files
    from .validate.files import validate_path

    ref = _ref(session, directory)
    return [validate_path(p, cap=max_bytes, schema=schema) for p in main_and_subagent_files(ref, subagents)]


def doctor_session(session: str | Path, *, directory: str | Path | None = None) -> Diagnosis:
    """Why a session is missing from /resume (``tt doctor``): its `doctor.core.Diagnosis`,
    whose findings say whether the interactive picker lists it (``picker``), whether the
    SDK's ``list_sessions`` does (``listed``) and whether ``claude --resume <id>`` loads it
    (``loads``), each with its fix; no finding: listed and loadable. Reads only."""
    from .doctor.files import doctor_file

    return doctor_file(_ref(session, directory).path)


def repair_session(
    session: str | Path,
    *,
    directory: str | Path | None = None,
    output: str | Path | None = None,
    in_place: bool = False,
    backup: bool = True,
    force: bool = False,
    subagents: bool = True,
    drop_orphans: bool = False,
    strip_thinking: bool = False,
    max_image_bytes: int | None = None,
    max_bytes: int = MAX_TRANSCRIPT_READ_BYTES,
    now: datetime | None = None,
) -> list[FileReport]:
    """Repair a session (``tt repair``): one `repair.files.FileReport` per file (main
    transcript first, then its subagents), each listing the fixes and what damage remains.

    Without ``output`` or ``in_place`` it is a dry run: the plan, nothing written.
    ``output`` names the repaired copy (its subagents go to ``<output stem>/subagents/``,
    Claude Code's layout); ``in_place`` replaces the files atomically, keeping a ``.bak``
    unless ``backup=False``. What a repair removes always goes to a quarantine file."""
    from .repair.core import RepairOptions
    from .repair.files_session import repair_session as _repair

    _one_output(output, in_place)
    ref = _checked(session, directory)
    opts = RepairOptions(
        drop_orphans=drop_orphans,
        strip_thinking=strip_thinking,
        max_image_bytes=max_image_bytes,
        cap=max_bytes,
    )
    dry = output is None and not in_place
    stamp = _iso(now)
    reports, _outs = _repair(
        ref,
        opts,
        subagents=subagents,
        output=None if output is None else str(output),
        in_place=in_place,
        dry_run=dry,
        force=force,
        backup=backup,
        now=lambda: stamp,
        new_id=lambda: str(_uuid.uuid4()),
        main_parent=True,
        hint="use in_place=True, or choose another output",
    )
    return reports


def redact_session(
    session: str | Path,
    *,
    directory: str | Path | None = None,
    output: str | Path | None = None,
    in_place: bool = False,
    backup: bool = True,
    force: bool = False,
    subagents: bool = True,
) -> list[RedactResult]:
    """Find secrets in a session (``tt redact``): one `redact.files.FileResult` per file,
    each finding named by line, kind and JSON path (never the secret itself).

    Without ``output`` or ``in_place`` it only reports. ``output`` writes a redacted copy
    (subagents beside it, as `repair_session`); ``in_place`` replaces the files atomically.
    A path names just that file; a session id, the session and its subagent files."""
    from .redact.files import redact_session as _redact
    from .redact.files import session_files

    _one_output(output, in_place)
    ref = _checked(session, directory)
    return _redact(
        session_files(str(session), ref, subagents),
        output=None if output is None else str(output),
        in_place=in_place,
        backup=backup,
        force=force,
        hint="use in_place=True, or choose another output",
    )


# --- compact, fork, rewind, resume ----------------------------------------------------


def compact_session(
    session: str | Path,
    *,
    directory: str | Path | None = None,
    output: str | Path | None = None,
    in_place: bool = False,
    backup: bool = True,
    force: bool = False,
    dry_run: bool = False,
    keep_tokens: int | None = None,
    keep: Sequence[str] = (),
    keep_first_request: bool = True,
    prune: Sequence[str] = (),
    summarizer: Summarizer | None = None,
    model: str | None = None,
    even_if_larger: bool = False,
    drop_unsent: bool = False,
    max_bytes: int = MAX_TRANSCRIPT_READ_BYTES,
    now: datetime | None = None,
) -> CompactResult:
    """Make a session small and resumable (``tt compact``): all but the most recent
    messages (``keep_tokens`` of them) become one summary; returns `compact.report.Result`
    (tokens before and after, what was kept, summarised and pruned, where it was written).

    By default the result is a new session beside the original (``output``: elsewhere;
    ``in_place``: appended to the session itself, as Claude Code's ``/compact``). The
    summary is tt's offline extractive one unless a ``summarizer`` is given
    (`summarizers.AnthropicSummarizer` asks a model). ``model`` is the model the tokens are
    counted for (thinking blocks another model wrote are not sent to it); by default, as
    ``tt compact``, the model a resume would continue on at ``now`` (default: the clock).
    ``prune`` shrinks inside the kept messages first (``tool-output``, ``thinking``,
    ``images``); ``drop_unsent`` (``--prune progress``) writes the whole conversation without
    the records a resume never sends when nothing is worth summarising."""
    from .compact.files import Target, compact_file
    from .compact.plan import DEFAULT_KEEP_TOKENS, PRUNE_KINDS, PlanOptions
    from .compact.summarizers import Extractive
    from .edge.tokenizer import TokenCounter
    from .model.errors import UsageError

    _one_output(output, in_place)
    unknown = set(prune) - set(PRUNE_KINDS)
    if unknown:
        raise UsageError(
            f"prune: unknown kind(s) {', '.join(sorted(unknown))}; choose from {', '.join(PRUNE_KINDS)}"
        )
    ref = _checked(session, directory)
    mode = "dry-run" if dry_run else "in-place" if in_place else "new"
    target = Target(mode, Path(output).expanduser() if output is not None else None, force, backup=backup)
    options = PlanOptions(
        keep_tokens=DEFAULT_KEEP_TOKENS if keep_tokens is None else keep_tokens, prune=frozenset(prune)
    )
    if model is None:
        from .compact.files import resumes_on

        model = resumes_on(ref.path, _clock(now))
    return compact_file(
        ref.path,
        summarizer or Extractive(),
        target,
        options,
        keep=keep,
        keep_first_request=keep_first_request,
        max_bytes=max_bytes,
        even_if_larger=even_if_larger,
        drop_unsent=drop_unsent,
        counter=TokenCounter(model=model),
    )


def _clock(now: datetime | None) -> Any:
    from .edge.clock import system_clock
    from .model.lifecycle import Clock

    clock = system_clock()
    return clock if now is None else Clock(now, clock.local_midnight)


@dataclass(frozen=True)
class ForkResult:
    """What `fork_session` made (``tt fork --json``): the new session's id and file, the
    subagent copies, and the in-memory repairs the source needed. ``fork`` is the pure
    `fork.core.Fork` (its lines, the cut and whether it moved)."""

    session_id: str
    path: Path
    fork: Fork = field(repr=False)
    source_path: Path
    subagents: list[Path]
    repairs: list[dict[str, Any]]
    written: bool

    def to_dict(self) -> dict[str, Any]:
        from .fork.files import fork_report

        return fork_report(self.fork, self.path, self.source_path, self.subagents, self.repairs, self.written)


def fork_session(
    session: str | Path,
    *,
    directory: str | Path | None = None,
    up_to_message_id: str | None = None,
    title: str | None = None,
    output: str | Path | None = None,
    dry_run: bool = False,
    max_bytes: int = MAX_TRANSCRIPT_READ_BYTES,
    now: datetime | None = None,
) -> ForkResult:
    """Branch a session into a new one with fresh ids (``tt fork``; the SDK's
    ``fork_session``): whole, or ending at ``up_to_message_id`` (a uuid or unique prefix, or
    ``"N"`` = the Nth message from the end). The fork goes beside the original, so
    ``claude --resume`` lists it, or to ``output``; its title defaults to the original's
    plus " (fork)". The original is only read; a cut that would part a tool call from its
    result moves, and ``result.fork.cut.moved`` says so."""
    from .fork.files import fork_session as _fork

    if title is not None and not title.strip():
        from .model.errors import UsageError

        raise UsageError("the title is empty")
    ref = _checked(session, directory, "fork")
    f = _fork(
        ref.path,
        now=_iso(now),
        source_session_id=ref.session_id,
        at=up_to_message_id,
        title=title,
        output=None if output is None else str(output),
        make_parents=True,
        dry_run=dry_run,
        max_bytes=max_bytes,
    )
    return ForkResult(f.session_id, f.path, f.fork, f.source_path, f.subagents, f.repairs, f.written)


@dataclass(frozen=True)
class RewindResult:
    """What `rewind_session` planned and did: the `rewind.core.RewindPlan` (one change per
    tracked file, with the reason a file is left alone) and, unless a dry run, the result
    of each change (`rewind.files.FileResult`)."""

    session_id: str
    plan: RewindPlan
    applied: list[RewindFileResult] = field(default_factory=list)


def rewind_session(
    session: str | Path,
    at: str,
    *,
    directory: str | Path | None = None,
    cwd: str | Path | None = None,
    dry_run: bool = True,
    allow_outside: bool = False,
    backup: bool = True,
    max_bytes: int = MAX_TRANSCRIPT_READ_BYTES,
) -> RewindResult:
    """Restore the files a session changed to their state at message ``at`` (``tt rewind
    --files``), from Claude Code's file checkpoints. ``at`` is a uuid (or prefix) or ``"N"``,
    the Nth message from the end. A dry run (the default: pass ``dry_run=False`` to write)
    only plans; each file's current content is kept as ``<file>.tt-rewind.bak`` unless
    ``backup=False`` (as ``tt rewind`` does unless ``--no-backup``).
    Files outside ``cwd`` (default: the session's own) are left alone unless
    ``allow_outside``. To branch the conversation there instead, use `fork_session`."""
    from .edge.loader import load_session
    from .model.errors import UsageError
    from .rewind.core import resolve_target
    from .rewind.files import apply_plan, plan_files

    ref = _checked(session, directory, "rewind")
    s = load_session(ref.path, max_bytes=max_bytes).session
    sid = ref.session_id or s.session_id
    if sid is None:
        raise UsageError(f"{ref.path}: no session id; cannot find its file-history backups")
    target = resolve_target(s, at)
    plan, backups = plan_files(
        ref.path,
        s,
        sid,
        target,
        cwd=str(cwd) if cwd is not None else None,
        allow_outside=allow_outside,
        hints=("pass cwd=", "pass cwd="),
    )
    applied = [] if dry_run else apply_plan(plan, backups, keep=backup)
    return RewindResult(sid, plan, applied)


@dataclass(frozen=True)
class ResumeRequest:
    """The Messages API request a resume would send (``tt resume --dry-run``): ``request``
    is a `request.ModelRequest` (``request.params()`` is the JSON body), ``model_note``
    says why the model is not the session's own, ``repairs`` what was mended in memory
    (the file is unchanged), ``start`` the byte reading began at (the last compact
    boundary's line, or 0)."""

    path: Path
    session_id: str | None
    request: ModelRequest
    model_note: str | None
    repairs: list[str]
    start: int


def resume_request(
    session: str | Path,
    prompt: str | None = None,
    *,
    directory: str | Path | None = None,
    model: str | None = None,
    system_prompt: str | None = None,
    cwd: str | Path | None = None,
    allowed_tools: Sequence[str] = (),
    disallowed_tools: Sequence[str] = (),
    max_tokens: int | None = None,
    now: datetime | None = None,
    max_bytes: int = MAX_TRANSCRIPT_READ_BYTES,
) -> ResumeRequest:
    """Build the request ``tt resume`` would send to continue a session with ``prompt``,
    without sending it (no credentials needed). The history is read as Claude Code reads
    it (from the last compact boundary, damage mended in memory); the model is the
    session's unless ``model`` is given or Claude Code would switch at ``now`` (default:
    the clock) because the session's model is retired or remapped."""
    from .model import conversation, lifecycle
    from .model.errors import Unreadable
    from .model.request import DEFAULT_MAX_TOKENS, DEFAULT_SYSTEM_PROMPT, ModelRequest
    from .resume.files import load_for_resume
    from .resume.tools.registry import ToolRegistry

    registry = ToolRegistry(allowed_tools, disallowed_tools)
    clock = _clock(now)
    ref = _checked(session, directory, "resume")
    got = load_for_resume(ref.path, max_bytes=max_bytes)
    if not got.conversation.messages:
        raise Unreadable(
            f"{ref.path}: no conversation to resume (no user or assistant message on its main chain)"
        )
    choice = lifecycle.resume_model(lifecycle.CURRENT, got.conversation.model, model, clock)
    assert choice.model is not None  # a session without one resumes on the default
    conv = got.conversation.for_model(choice.model)
    where = Path(cwd) if cwd is not None else Path(conv.cwd or ".")
    system = system_prompt if system_prompt is not None else DEFAULT_SYSTEM_PROMPT.format(cwd=where)
    extra = [conversation.user_message(prompt)] if prompt is not None else []
    req = ModelRequest(
        choice.model,
        [*conv.messages, *extra],
        max_tokens or DEFAULT_MAX_TOKENS,
        system,
        registry.definitions(),
    )
    repairs = [f"{getattr(a, 'fix', a)}" for a in got.actions] + list(got.mended)
    note = choice.explain(lifecycle.CURRENT.cli_version, conv.thinking_not_sent)
    return ResumeRequest(ref.path, conv.session_id, req, note, repairs, got.start)


# --- export, import -------------------------------------------------------------------


@dataclass(frozen=True)
class ExportResult:
    """What `export_session` wrote (or, in a dry run, would write): the bundle's path and
    size, its `bundle.core.Manifest` (files, checksums, redactions, versions, original cwd) and
    the files it left out, with why."""

    path: Path
    bytes: int
    manifest: Manifest
    skipped: list[str]
    written: bool


def export_session(
    session: str | Path,
    output: str | Path | None = None,
    *,
    directory: str | Path | None = None,
    redact: bool = True,
    dry_run: bool = False,
) -> ExportResult:
    """Pack a session into one zip bundle (``tt export``): transcript, subagents,
    file-history backups and a manifest with checksums, secrets redacted unless
    ``redact=False``. ``output`` defaults to ``<session id>.zip`` in the current directory;
    an existing bundle is never overwritten. A dry run builds the bundle in a temporary
    folder, reports it and throws it away (``path`` is where it would have gone)."""
    from .bundle.files_export import export_to

    ref = _checked(session, directory, "export")
    e = export_to(ref, Path(output) if output is not None else None, redact=redact, dry_run=dry_run)
    return ExportResult(e.path, e.bytes, e.manifest, e.skipped, e.written)


def import_session(
    archive: str | Path, *, cwd: str | Path | None = None, dry_run: bool = False
) -> Imported | Manifest:
    """Unpack a bundle written by `export_session` (``tt import``) into this machine's
    Claude config dir, under the project folder of ``cwd`` (default: the current
    directory), rewriting paths under the original cwd. Returns `bundle.files_import.Imported`
    (the new session's id and path); a dry run checks the archive and returns its
    `bundle.Manifest`, extracting nothing. Unsafe or damaged archives are refused."""
    from .bundle.files_import import import_bundle, import_cwd, read_manifest

    if dry_run:
        return read_manifest(Path(archive))
    return import_bundle(Path(archive), import_cwd(cwd))


# --- ls, search, stats ----------------------------------------------------------------


def _dirs(directory: str | Path | None) -> list[Path]:
    from .catalog.files_scope import project_dirs

    return project_dirs(None, all_=True) if directory is None else project_dirs(str(directory))


def list_sessions(
    directory: str | Path | None = None,
    *,
    limit: int | None = None,
    include_hidden: bool = False,
    tag: str | None = None,
    check: bool = False,
    max_bytes: int = MAX_TRANSCRIPT_READ_BYTES,
) -> list[Row]:
    """The sessions of a project (``directory``: its working directory, or its folder under
    ``projects/``; with its git worktrees' sessions, as the SDK) or of every project
    (``directory=None``, as the SDK's ``list_sessions()``), newest first (``tt ls``).

    Each `catalog.files.Row` has the path, the size and mtime, and ``row.lite``: the title the
    ``/resume`` picker shows, tag, branch, cwd, first prompt and counts, from the first and
    last 64 KiB of the file. ``check=True`` reads each file whole (exact counts, health).
    Sessions the picker hides (sidechain-only, no title) are left out unless
    ``include_hidden``; a damaged one is always listed."""
    from .catalog.files import list_sessions as _list

    rows = _list(_dirs(directory), check=check, cap=max_bytes)
    if tag is not None:
        rows = [r for r in rows if r.lite.tag == tag]
    rows = [r for r in rows if include_hidden or r.lite.hidden is None or r.damaged]
    # As the SDK's list_sessions: a limit that is not positive is no limit.
    return rows[:limit] if limit is not None and limit > 0 else rows


def search_sessions(
    pattern: str,
    directory: str | Path | None = None,
    *,
    regex: bool = False,
    case: str = "smart",
    limit: int | None = None,
    per_session: int = 5,
    subagents: bool = True,
) -> list[SessionHits]:
    """Find text in sessions (``tt search``): prompts, replies, tool inputs and outputs,
    newest session first; one `catalog.files.SessionHits` per session with a hit. ``case`` is
    ``"smart"`` (ignored unless the pattern has a capital), ``"sensitive"`` or
    ``"insensitive"``; ``regex`` reads the pattern as a Python regular expression. Scope as
    `list_sessions`."""
    from itertools import islice

    from .catalog.files import search_files
    from .catalog.search import make_matcher
    from .model.errors import UsageError

    if per_session < 1:
        # As `tt search --per-session` (an int of at least 1): 0 gave no hits, said nothing.
        raise UsageError(f"per_session must be at least 1, not {per_session}")
    try:
        matcher = make_matcher(pattern, regex=regex, case=case)
    except ValueError as e:
        raise UsageError(str(e)) from e
    found = search_files(_dirs(directory), matcher, per_session=per_session, subagents=subagents)
    # As `list_sessions`: a limit that is not positive is no limit (it was islice's ValueError).
    return list(islice(found, limit if limit is not None and limit > 0 else None))


def get_session_stats(
    session: str | Path, *, directory: str | Path | None = None, subagents: bool = True
) -> Stats:
    """Tokens by model, cost, turns, tool calls, errors, duration and compactions of one
    session (``tt stats``), each API call counted once as ccusage counts them (split
    lines and subagent copies deduplicated). ``stats.to_dict()`` is ``tt stats --json``."""
    from .catalog.files_usage import session_stats

    return session_stats(_checked(session, directory).path, subagents=subagents)


# --- rename, tag, delete --------------------------------------------------------------


@dataclass(frozen=True)
class RecordResult:
    """The metadata record `rename_session` / `tag_session` appended (or would append)."""

    session_id: str
    path: Path
    record: str
    written: bool


def _session_id(ref: SessionRef) -> str:
    from .edge.claude_dir import session_id_of

    return session_id_of(ref)


def _append_record(
    session: str | Path, directory: str | Path | None, make: Any, value: str, dry_run: bool, verb: str
) -> RecordResult:
    from .manage.files import append_record

    ref = _checked(session, directory, verb)
    sid = _session_id(ref)
    line: bytes = make(sid, value)
    if not dry_run:
        append_record(ref, line)
    return RecordResult(sid, ref.path, line.decode("ascii").rstrip("\n"), not dry_run)


def rename_session(
    session: str | Path, title: str, *, directory: str | Path | None = None, dry_run: bool = False
) -> RecordResult:
    """Set a session's title (``tt rename``; the SDK's ``rename_session``): appends the
    ``custom-title`` record the ``/resume`` picker and the SDK's ``list_sessions`` read."""
    from .manage.core import rename_line

    return _append_record(session, directory, rename_line, title, dry_run, "rename")


def tag_session(
    session: str | Path, tag: str | None, *, directory: str | Path | None = None, dry_run: bool = False
) -> RecordResult:
    """Tag a session (``tt tag``; the SDK's ``tag_session``): appends a ``tag`` record;
    ``None`` or ``""`` clears the tag."""
    from .manage.core import tag_line

    return _append_record(session, directory, tag_line, tag or "", dry_run, "tag")


def delete_session(
    session: str | Path, *, directory: str | Path | None = None, dry_run: bool = False
) -> DeletePlan:
    """Delete a session (``tt delete``; the SDK's ``delete_session``): its transcript, its
    ``<id>/`` folder (subagents) and its file-history backups. Returns the
    `manage.DeletePlan` of what goes (a dry run deletes nothing). Does not ask."""
    from .manage.files import remove, survey

    # As `tt delete`: a file that is no transcript is refused (a new user's script deleted
    # one the CLI refuses with exit 4).
    ref = _checked(session, directory)
    plan = survey(ref)
    if not dry_run:
        remove(plan)
    return plan
