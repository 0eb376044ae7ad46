"""The one assembly of a resume: session file -> a `QueryEngine` ready for the next turn.

`tt resume`, the streaming-input mode and ``query(resume=...)`` all start here, so they
send the same messages, pick the same model and run tools in the same place:

1. `resume.files.load_for_resume` reads what a resume sends (the in-memory repair when the
   file needs it; the file is only ever appended to);
2. the model is `lifecycle.resume_model`'s choice (the session's last model unless
   Claude Code retires or remaps it on ``clock``'s date, or the caller names one), and
   `Conversation.for_model` keeps only the thinking blocks that model wrote;
3. with ``fork``, the whole session is first forked into a new file (``tt fork``'s rules
   and files, subagent transcripts too) and that file is loaded and continued;
4. tools run in the session's recorded cwd, or ``cwd``, or the process's cwd when the
   recorded one is gone;
5. the state besides the messages is restored (`resume.state`): the cost so far by
   model from the last ``cost-state``, the permission mode from the last
   ``permission-mode``; and the load is checked: files the session read or edited that
   changed since, a file last written by a Claude Code newer than tt's tables know.

`new_session` is the assembly of a session that does not exist yet (``tt chat`` with no
SESSION): a fresh id, the file ``<config>/projects/<the cwd's folder>/<id>.jsonl`` (created
with its first record, as Claude Code creates it), the lines of Claude Code 2.1.332's
format (``version`` 2.1.332, ``gitBranch`` ``HEAD`` outside a repository, as it writes them),
the model Claude Code starts on (the table's default) and an empty ``cost-state`` to add
each turn's spend to, as 2.1.332 appends one to its new sessions.

Nothing here prints: what a person should hear (a model not the session's own, a fork
written, a cwd gone, the restored cost and mode, files changed, a newer Claude Code) is a one-line string in `Prepared.notices`, in that order, for the
edge to show. Errors are `errors.TTError`s (usage 2, not found 3, unreadable 4).

A session whose last request the API refused as past the context window (``prompt-too-long``)
is compacted before the turn, as Claude Code's auto-compaction does: `_compact_too_long`
appends ``tt compact``'s offline compaction to the file (a dry run only shows it; when
the compaction would not shrink the request, it is 4 and nothing is sent). So is one
whose conversation is over the API's 32 MB request limit (``request-too-large``, a 413
on every turn); when the compaction's kept tail is itself over it (big images kept
verbatim), it is 4 and nothing is sent.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model.errors import Unreadable, UsageError
from .state import TailState

if TYPE_CHECKING:
    from ..edge.claude_dir import SessionRef
    from ..edge.client import ModelClient
    from ..model.conversation import Conversation
    from ..model.lifecycle import Clock, ModelChoice
    from .engine import QueryEngine
    from .files import ForResume
    from .tools.registry import ToolRegistry


@dataclass(slots=True)
class Prepared:
    """A session loaded for its next turn (see the module docstring)."""

    #: The file the turn is appended to (the fork's when forked).
    path: Path
    got: ForResume
    #: The conversation as the chosen model is sent it.
    conv: Conversation
    choice: ModelChoice
    cwd: Path
    system: str
    session_id: str
    #: One line each, in the order they arose; the edge shows them.
    notices: list[str] = field(default_factory=list)
    #: The model-choice line alone (a dry run shows it in its summary).
    model_note: str | None = None
    #: The last cost-state and permission-mode of the file (`resume.state`).
    state: TailState = field(default_factory=TailState)
    #: The notices of the load checks alone (also in `notices`): a dry run's summary has
    #: no place for them, so it shows them apart.
    state_notices: list[str] = field(default_factory=list)
    #: A new session (`new_session`): its file is created with the first record.
    new: bool = False

    @property
    def model(self) -> str:
        assert self.choice.model is not None
        return self.choice.model

    def engine(
        self,
        client: ModelClient,
        registry: ToolRegistry,
        *,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
        max_tokens: int | None = None,
        include_partial_messages: bool = False,
        add_dirs: Sequence[Path] = (),
        interactive: bool = False,
        permission_mode: str | None = None,
    ) -> QueryEngine:
        """``interactive`` (``tt chat``): the prompts carry the permission mode and each turn
        re-appends ``mode`` and ``permission-mode`` (a new session starts with them);
        ``permission_mode``: the one given on the command line, over the restored one (as
        Claude Code 2.1.332 restores a session's mode unless one is given)."""
        from .. import __version__
        from ..edge.worktrees import head_branch
        from ..model.request import DEFAULT_MAX_TOKENS
        from . import turns
        from .engine import QueryEngine
        from .turns import Envelope

        branch = head_branch(self.cwd)
        # version: the session's own Claude Code version: tt writes that version's format
        # (docs/format.md §2), and says it wrote the lines with entrypoint "tt" (`turns.Envelope`).
        env = Envelope(
            session_id=self.session_id,
            cwd=str(self.cwd),
            version=self.conv.version or f"tt-{__version__}",
            git_branch=branch if branch is not None else (self.conv.git_branch or ""),
        )
        engine = QueryEngine(
            client=client,
            session_id=self.session_id,
            cwd=self.cwd,
            model=self.model,
            envelope=env,
            messages=self.conv.messages,
            leaf_uuid=self.conv.leaf_uuid,
            system=self.system,
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            max_tokens=max_tokens or DEFAULT_MAX_TOKENS,
            transcript=FileTranscript(self.path, create=self.new),
            include_partial_messages=include_partial_messages,
            # the working directories (`permissions`): the cwd and the --add-dir ones
            **engine_world(self.cwd, tuple(d.resolve() for d in add_dirs), registry),
            cost_state=self.state.cost_state,
            permission_mode=permission_mode or self.state.permission_mode,
        )
        engine.interactive = interactive
        if interactive and self.new:
            engine.opening = [
                turns.mode_record(self.session_id),
                turns.permission_mode_record(self.session_id, engine.permission_mode),
            ]
        return engine


def new_id() -> str:
    """A fresh record uuid (random: the world's, so the engine is handed it)."""
    return str(uuid.uuid4())


def engine_world(
    cwd: Path, add_dirs: Sequence[Path] = (), registry: ToolRegistry | None = None
) -> dict[str, Any]:
    """What a `QueryEngine` touches the world with, as its keyword arguments: the tools
    (``registry``, default Claude Code's six; run in ``cwd`` and ``add_dirs``), the system
    clock (ISO timestamps for records, a monotonic clock for durations) and random uuids."""
    from ..edge.writer import iso_now
    from .tools.base import ToolContext
    from .tools.registry import ToolRegistry

    return {
        "registry": registry if registry is not None else ToolRegistry(),
        "tool_context": ToolContext(cwd=cwd, add_dirs=tuple(add_dirs)),
        "now": iso_now,
        "new_id": new_id,
        "clock": time.monotonic,
    }


class FileTranscript:
    """`engine.TranscriptSink` appending to a transcript file (one write per record, flushed).
    ``create``: a new session's file, made (with its folder) by the first record."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = path
        self.written = 0
        self.create = create

    def append(self, record: Mapping[str, Any]) -> None:
        from ..edge.writer import append_records

        if self.create and not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            append_records(self.path, [record], create=True)
        else:
            append_records(self.path, [record])
        self.written += 1


def prepare(
    ref: SessionRef,
    *,
    clock: Clock,
    env: Mapping[str, str],
    model: str | None = None,
    max_budget_usd: float | None = None,
    fork: bool = False,
    cwd: Path | None = None,
    system_prompt: str | None = None,
    append_system_prompt: str | None = None,
    max_bytes: int | None = None,
    dry_run: bool = False,
    applied_modes: Collection[str] = (),
) -> Prepared:
    """Load ``ref`` for its next turn. A dry run writes nothing (no fork).
    ``applied_modes``: the permission modes the caller applies (``tt chat``'s): a restored
    one of them needs no notice."""
    from ..edge.reader import MAX_TRANSCRIPT_READ_BYTES

    cap = MAX_TRANSCRIPT_READ_BYTES if max_bytes is None else max_bytes
    notices: list[str] = []
    got = _load(ref.path, cap)
    path = ref.path
    if not got.conversation.messages:
        raise Unreadable(
            f"{path}: no conversation to resume (no user or assistant message on its main chain)"
        )
    too_long = next((n for n in got.conversation.notes if n.code == "prompt-too-long"), None)
    if too_long is not None:
        # The API refused this history as past the context window and would refuse it
        # again, with the new prompt on top: compact it first, as Claude Code's
        # auto-compaction does (README "Requests the API refuses").
        why = f"the last request was refused as past the context window ({too_long.detail})"
        got, line = _compact_too_long(
            path,
            got,
            why,
            cap,
            dry_run=dry_run,
            hint="`tt compact --in-place --keep-tokens N` with a smaller N",
        )
        if line is not None:
            notices.append(line)
    else:
        from ..edge.reader import file_size
        from ..model.api_checks import MAX_REQUEST_BYTES

        # The messages are parts of the file's lines: a file under half the limit cannot
        # hold a request over it (the guard keeps the measure off every small resume).
        size = request_bytes(got.conversation.messages) if file_size(path) > MAX_REQUEST_BYTES // 2 else 0
        if size > MAX_REQUEST_BYTES:
            # ``request-too-large``: the API answers 413 to every turn of it; the same
            # compaction, then the kept tail must itself be under the limit.
            why = f"the conversation is about {size / 1e6:.1f} MB, over the API's 32 MB request limit"
            got, line = _compact_too_long(path, got, why, cap, dry_run=dry_run, hint=_PRUNE_HINT)
            if line is not None:
                notices.append(line)
            after = request_bytes(got.conversation.messages)
            if after > MAX_REQUEST_BYTES:
                raise Unreadable(
                    f"{path}: {why}, and after an offline compaction still about {after / 1e6:.1f} MB "
                    "(big images or tool results in the kept messages); nothing was sent",
                    hint=_PRUNE_HINT,
                )
    choice = choose_model(got.conversation.model, model, clock, env)
    assert choice.model is not None  # a session without one resumes on the default
    if max_budget_usd is not None and not dry_run:
        from .engine import check_budget_model

        check_budget_model(choice.model)  # a usage error, before a fork is written
    if fork and not dry_run:
        path, got, line = _fork(ref, cap)
        notices.append(line)
    conv = got.conversation.for_model(choice.model)  # only the thinking blocks that model wrote
    note = model_note(choice, conv)
    if note is not None:
        notices.append(note)
    where, cwd_note = choose_cwd(cwd, conv.cwd)
    if cwd_note is not None:
        notices.append(cwd_note)
    checks: list[str] = []
    state = restored_state(path, got.start, conv.version, where, conv.cwd, checks, applied_modes)
    notices.extend(checks)
    session_id = conv.session_id or ref.session_id or path.name.removesuffix(".jsonl")
    return Prepared(
        path=path,
        got=got,
        conv=conv,
        choice=choice,
        cwd=where,
        system=system_text(system_prompt, append_system_prompt, where),
        session_id=session_id,
        notices=notices,
        model_note=note,
        state=state,
        state_notices=checks,
    )


def new_session(
    projects: Path,
    *,
    session_id: str,
    start_ms: int,
    clock: Clock,
    env: Mapping[str, str],
    model: str | None = None,
    cwd: Path | None = None,
    system_prompt: str | None = None,
    append_system_prompt: str | None = None,
) -> Prepared:
    """A session to start (see the module docstring); nothing is written here."""
    from ..edge.claude_dir import canonical_cwd, project_dir_name
    from ..edge.worktrees import head_branch
    from ..model import lifecycle
    from ..model.conversation import Conversation
    from .files import ForResume

    where, _ = choose_cwd(cwd, None)
    table = lifecycle.CURRENT
    choice = choose_model(None, model, clock, env)
    if choice.reason == "none":  # no --model: the model Claude Code starts a session on, unsaid
        choice = lifecycle.ModelChoice(table.default_model, None)
    branch = head_branch(where)
    conv = Conversation(
        messages=[],
        leaf_uuid=None,
        model=choice.model,
        session_id=session_id,
        cwd=str(where),
        # 2.1.332 writes "HEAD" outside a repository too (probed; tests/resume/test_chat.py)
        git_branch=branch if branch is not None else "HEAD",
        version=table.cli_version,
    )
    path = projects / project_dir_name(canonical_cwd(where)) / f"{session_id}.jsonl"
    note = choice.explain(table.cli_version, 0)
    return Prepared(
        path=path,
        got=ForResume(conv),
        conv=conv,
        choice=choice,
        cwd=where,
        system=system_text(system_prompt, append_system_prompt, where),
        session_id=session_id,
        notices=[note] if note else [],
        model_note=note,
        state=TailState(cost_state=new_cost_state(session_id, start_ms)),
        new=True,
    )


def new_cost_state(session_id: str, start_ms: int) -> dict[str, object]:
    """The ``cost-state`` of a session before its first call, in the fields and order
    Claude Code 2.1.332 writes (fixtures/real/claude-config-2.1.332)."""
    return {
        "type": "cost-state",
        "sessionId": session_id,
        "totalCostUSD": 0,
        "totalAPIDuration": 0,
        "totalAPIDurationWithoutRetries": 0,
        "totalToolDuration": 0,
        "totalLinesAdded": 0,
        "totalLinesRemoved": 0,
        "totalDuration": 0,
        "startTime": start_ms,
        "modelUsage": {},
        "hasUnknownModelCost": False,
    }


def restored_state(
    path: Path,
    start: int,
    version: str | None,
    cwd: Path,
    recorded_cwd: str | None,
    notices: list[str],
    applied_modes: Collection[str] = (),
) -> TailState:
    """The state a resume restores, with a one-line notice for each difference worth
    saying (the restored cost is not one: it is in every result's ``total_cost_usd``)."""
    from ..model import lifecycle
    from . import files_state, state

    tail = files_state.read_tail_state(path)
    if tail.permission_mode not in (None, "default", *applied_modes):
        # tt has no permission modes of its own: its tools follow --allowed-tools alone.
        notices.append(
            f"the session was in permission mode {tail.permission_mode}; tt's tools follow --allowed-tools / --disallowed-tools"
        )
    touched = files_state.touched_files(path, start)
    if recorded_cwd and not Path(recorded_cwd).is_dir():  # the cwd notice already says they are gone
        touched = {k: v for k, v in touched.items() if not _under(k, recorded_cwd)}
    changed = files_state.file_notices(touched, cwd)
    if changed is not None:
        notices.append(changed)
    known = lifecycle.CURRENT.cli_version
    if state.newer_version(version, known):
        notices.append(
            f"the session was last written by Claude Code {version}, newer than {known}, the version tt knows: records it added may be passed over"
        )
    return tail


#: ``request-too-large`` left after the compaction: what a person can still cut.
_PRUNE_HINT = (
    "`tt compact --in-place --prune images,tool-output` replaces big images and tool results "
    "kept verbatim with placeholders"
)


def request_bytes(messages: list[dict[str, Any]]) -> int:
    """The bytes of ``messages`` as JSON: the part of the request the 32 MB limit is
    about (the system prompt and tools add a few tens of kB)."""
    from ..model.wire import dumps_lenient

    return len(dumps_lenient(messages))


def _compact_too_long(
    path: Path, got: ForResume, why: str, cap: int, *, dry_run: bool, hint: str
) -> tuple[ForResume, str | None]:
    """``prompt-too-long`` (and ``request-too-large``, ``why`` says which): the offline compaction ``tt repair`` appends (``tt compact``'s
    extractive summary and the last 40k tokens verbatim), with ``trigger: auto`` as both
    pinned CLIs write it when the API refuses a turn as too long and they compact and go
    on (tests/model/test_prompt_too_long_claude.py::test_the_cli_compacts_a_refused_turn_with_trigger_auto;
    they keep the recent messages as a preserved segment of the lines before the
    boundary, tt as copies after it, which both CLIs resume alike). Appended to the file before the turn (nothing is
    removed: the history stays before the boundary), in one write, so a crash cannot
    leave a boundary without its summary; then the file is loaded again and the turn goes
    on from the boundary. A dry run writes nothing: the conversation is the compaction's
    records alone, in memory, and its `ForResume.mended` says a compaction would be
    appended. Returns the load and the notice for a person (None in a dry run)."""
    from dataclasses import replace

    from ..compact.files import Target, compact_file
    from ..compact.summarizers import Extractive
    from ..edge.writer import append_records, dumps, iso_now, snapshot
    from ..model import conversation
    from ..model.errors import FileChanged
    from ..model.lines import Entry

    before = snapshot(path)
    result = compact_file(
        path, Extractive(), Target("dry-run", trigger="auto"), max_bytes=cap, now=iso_now, new_id=new_id
    )
    if result.grows or result.nothing_to_do or not result.records:
        raise Unreadable(
            f"{path}: {why} and an offline compaction would not shrink it; resuming would send that history again",
            hint=hint,
        )
    what = (
        f"{why}: compacted offline (~{result.tokens_before:,} -> ~{result.tokens_after:,} tokens; "
        f"a summary and {result.kept} message(s) kept verbatim)"
    )
    if dry_run:
        entries = [
            Entry(0, 0, b"", r) for r in result.records if r.get("type") in ("system", "user", "assistant")
        ]
        conv = got.conversation
        compacted = conversation.assemble(entries, entries[-1].record.get("uuid"), conv.session_id)
        if compacted.model is None:  # the kept part holds no response of a real model
            compacted = replace(compacted, model=conv.model)
        return (
            replace(
                got,
                conversation=compacted,
                mended=[*got.mended, what + "; it would be appended to the file"],
                start=before[0],  # where the boundary would be: the resume would read from there
            ),
            None,
        )
    if snapshot(path) != before:
        # A compaction of lines another writer has since added to would drop them.
        raise FileChanged(
            f"{path}: the file changed while tt compacted it (is Claude Code still writing?); nothing was written",
            hint="close the session and try again",
        )
    append_records(path, [b"\n".join(dumps(r) for r in result.records)])
    return _load(path, cap), f"{what}; appended to {path} (the history stays before it)"


def _load(path: Path, max_bytes: int) -> ForResume:
    from .files import load_for_resume

    return load_for_resume(path, max_bytes=max_bytes)


def _under(name: str, d: str) -> bool:
    return name == d or name.startswith(d.rstrip("/") + "/")


def system_text(system_prompt: str | None, append: str | None, cwd: Path) -> str:
    from ..model.request import DEFAULT_SYSTEM_PROMPT

    text = system_prompt if system_prompt is not None else DEFAULT_SYSTEM_PROMPT.format(cwd=cwd)
    if append:
        text = f"{text}\n\n{append}"
    return text


def choose_cwd(given: Path | None, recorded: str | None) -> tuple[Path, str | None]:
    """Where tools run, and the notice when the recorded cwd is gone."""
    if given is not None:
        if not given.is_dir():
            raise UsageError(f"--cwd {given}: no such directory")
        return given.resolve(), None
    if recorded and Path(recorded).is_dir():
        return Path(recorded), None
    here = Path.cwd()
    if recorded:
        return (
            here,
            f"the session's cwd {recorded} does not exist here; tools run in {here} (pass --cwd DIR to choose)",
        )
    return here, None


def _fork(ref: SessionRef, max_bytes: int) -> tuple[Path, ForResume, str]:
    """Write the fork (`fork.files.fork_session`, as ``tt fork``: subagent transcripts
    too) beside the original and load it back."""
    from ..edge.session_out import session_dir
    from ..edge.writer import iso_now
    from ..fork.files import fork_session

    # The whole session, as `tt fork` forks it (not only the part a resume sends); past
    # the cap, from the last compact boundary, the part a resume can read at all. Every
    # subagent transcript is read before the first write: a failure there writes nothing.
    forked = fork_session(
        ref.path,
        now=iso_now(),
        source_session_id=ref.session_id,
        max_bytes=max_bytes,
        from_last_boundary=True,
    )
    target, subs = forked.path, forked.subagents
    also = f" and {len(subs)} subagent transcript(s) into {session_dir(target)}" if subs else ""
    line = f"forked {forked.fork.source_session_id} into {forked.session_id} ({target}){also}"
    return target, _load(target, max_bytes), line


def fork_at(path: Path, session_id: str, at: str, max_bytes: int) -> tuple[Path, str]:
    """``tt rewind --conversation``'s fork: the session up to message ``at`` (a uuid or
    prefix, or N from the end) as a new session beside it; its path and one line."""
    from ..edge.writer import iso_now
    from ..fork.files import fork_session

    forked = fork_session(path, now=iso_now(), source_session_id=session_id, at=at, max_bytes=max_bytes)
    out = forked.path
    return (
        out,
        f"rewound {session_id} to message {at}: the conversation goes on in {forked.session_id} ({out}); files are not restored (tt rewind --files does)",
    )


def choose_model(
    session_model: str | None, given: str | None, clock: Clock, env: Mapping[str, str]
) -> ModelChoice:
    """The model Claude Code would continue on at ``clock`` (`lifecycle`)."""
    from ..model import lifecycle

    table = lifecycle.CURRENT
    opt_out = bool(env.get(table.remap_opt_out))
    return lifecycle.resume_model(table, session_model, given, clock, remap_opt_out=opt_out)


def switch_model(asked: str, clock: Clock, env: Mapping[str, str]) -> tuple[str, str | None]:
    """A mid-session switch (``/model``) by ``--model``'s rule: a legacy id Claude Code
    remaps is remapped (with the line saying so), any other is taken as asked."""
    from ..model import lifecycle

    c = choose_model(None, asked, clock, env)
    return c.model or asked, c.explain(lifecycle.CURRENT.cli_version, 0)


def model_note(choice: ModelChoice, conv: Conversation) -> str | None:
    """One line when the model is not the session's own, or thinking is left out."""
    from ..model import lifecycle

    line = choice.explain(lifecycle.CURRENT.cli_version, conv.thinking_not_sent)
    if line is None and conv.thinking_not_sent:
        line = (
            f"{conv.thinking_not_sent} thinking block(s) written by another model than {choice.model} are not sent "
            "(the API takes a thinking block only from the model that wrote it)"
        )
    return line
