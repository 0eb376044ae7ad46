"""Why a session is missing from /resume: ``tt doctor``.

Three questions, answered from the same file:

- **Does the SDK list it?** The Agent SDK's ``list_sessions`` reads a file's first and last
  64 KiB; `listing.parse_lite` already decides as it does and says why not in
  ``Lite.hidden`` ("empty", "sidechain", "no-title"). Doctor reuses it, never a second copy
  of that logic (``Finding.listed``).
- **Does the interactive picker list it?** What a user sees after ``claude --resume``: the
  picker of Claude Code 2.1.197 and 2.1.332 reads the same 64 KiB with rules of its own
  (`picker_reasons`, `continued_in`; ``Finding.picker``). It lists files the SDK skips (an
  empty or NUL file, a file without a title: as "(session)") and leaves out sessions the
  SDK lists: begun by ``claude -p`` or an SDK, an agent team's, a background worker's, one
  with a sidechain record anywhere in its head, one continued in another session (2.1.332),
  a ``/loop`` session. Every finding's ``picker`` is the picker's own verdict.
- **Does ``claude --resume <id>`` load it?** Claude Code 2.1.332 answers "No
  conversation found with session ID" (exit 1, no request sent) when the file holds no
  user or assistant record outside a sidechain. Doctor counts those records in a full
  read (`Scan`).

Reasons, each checked with the real 2.1.332 CLI (``claude -p --resume``), the SDK's
``list_sessions`` and both CLIs' interactive picker (in a pty, its debug log's "filtered
from /resume" lines) on damaged copies of a freshly generated session
(tests/doctor/test_doctor_claude.py):

=====================  ==========  ==========  ==========================  =================
code                   SDK lists   picker      2.1.332 ``--resume``        fix
=====================  ==========  ==========  ==========================  =================
``nul-file``           no          yes         "No conversation found"     restore a backup
``empty``              no          yes         "No conversation found"     remove the file
``not-a-transcript``   no          yes         "No conversation found"     check the file
``metadata-only``      yes         yes         "No conversation found"     ``tt delete``
``all-sidechain``      yes         no          "No conversation found"     resume its session
``sidechain-first``    no          no          loads                       resume by id
``no-title``           no          yes         loads                       ``tt rename``
``not-in-a-project``   no          no          "No conversation found"     move it there
``name-not-an-id``     no          no          "is not a UUID and does     rename to its id,
                                               not match any session       else ``tt fork``
                                               title"
``no-uuid``            yes         yes         starts (exit 0) but sends   restore a backup
                                               none of it: at most the
                                               last message (2.1.197 too)
``headless-session``   yes         no          loads                       resume by id, or
                                                                           the picker with
                                                                           its entry point
``team-session``       yes         no          loads                       resume by id
``daemon-session``     yes         no          loads                       resume by id
``sidechain-in-head``  yes         no          loads                       resume by id
``continued-elsewhere`` yes        no (2.1.332) loads                      resume the other
``loop-session``       yes         no          loads                       resume by id
``ended-by-model``     yes         yes         read, sends nothing:        a new session
                                               "Claude ended this
                                               conversation" (exit 1)
=====================  ==========  ==========  ==========================  =================

The picker's reasons are reported only for a session that loads and has no other finding
(a fix of one shows the next); the picker logs the first that holds, in the order
`picker_reasons` tests them. ``headless-session`` is the common one: every session made
with ``claude -p`` or the Agent SDK (``"entrypoint":"sdk-cli"``, ``sdk-py``, ``sdk-ts``)
is missing from the interactive picker of both pinned CLIs, which shows them when it runs
with that entry point itself (``CLAUDE_CODE_ENTRYPOINT=sdk-cli claude --resume``; both
binaries: the picker skips the rule when its own entry point is one of the three).

``no-uuid``: no main message has a ``uuid``. Doctor called such a file "loadable" (new-user
pass); both CLIs resume it without an error and lose the conversation: on a generated
session with every ``uuid`` taken out, 2.1.332 and 2.1.197 sent the last assistant message
and the new prompt, none of the earlier prompts (with or without the ``parentUuid``s;
tests/doctor/test_doctor_claude.py::test_a_file_without_uuids_resumes_without_its_conversation),
and on the public test data's ``-tmp-golden`` file 2.1.332 sent the probe alone
(tests/show/test_show_claude.py). Messages of which only some lack a uuid are left out of the
chain one by one: ``tt show`` names them; not a doctor finding.

``name-not-an-id``: Claude Code finds a session by its file, ``<session-id>.jsonl``. A file
in a project folder under another name (``abcd1234-5678-90ef-ghij-klmnopqrstuv.jsonl``, a
hand-made copy) is skipped by the SDK's ``list_sessions``; 2.1.332's ``claude -p --resume
<that name>`` says "is not a UUID and does not match any session title", and ``--resume
<the sessionId its records carry>`` says "No conversation found" (no request sent either way;
tests/doctor/test_doctor_claude.py::test_a_file_not_named_by_a_session_id). The fix names
the file ``<sessionId>.jsonl`` when its records carry a session id and no file of that name
is beside it, else ``tt fork`` (a new id, in a file of that name). Not a ``tt repair`` fix:
repair rewrites a file's content at its path; which file is a session is the user's choice
(the odd name is often a deliberate copy, and ``<sessionId>.jsonl`` may already be there).

A subagent transcript (2.0.x ``agent-<hex>.jsonl`` beside the sessions, 2.1.x
``<session-id>/subagents/**/agent-*.jsonl``) holds only sidechain messages: no picker lists
it and ``--resume`` does not load it, by design. When its session's transcript is there
(`edge.claude_dir`'s finders say it belongs to it), doctor reports no finding and names the
session (``Diagnosis.subagent_of``); only a subagent file whose session is gone is
``all-sidechain``.

Seen and *not* reasons (tests/doctor/test_doctor_claude.py): a file whose records have no
``cwd`` (2.1.332 writes ``queue-operation`` records without one first anyway) is listed
and loaded; a ``relocated`` record (``{"type":"relocated","sessionId",
"relocatedCwd"}``, 2.1.332 binary) does not stop ``claude -p --resume`` from the
original directory nor the SDK's listing or the picker; a file moved to the new
directory's project folder is listed (by the SDK and by the picker) under the new
directory only, and ``--resume <id>`` loads it from either. A ``continued-in`` record
naming a session with no file beside it is no reason either. Nor the size: 2.1.332's
binary refuses a *paged* transcript past 256 MiB (``EFBIG``), but a plain 283 MB file (the
session and 270 lines of 1 MiB of an unknown record type) loaded in 0.9 s and was sent whole
(seen once, not re-run by a test: too large for the suite).

No fix of these is one ``tt repair`` applies: each finding says so (``repair: false``),
because none can be fixed without inventing a conversation or deleting a file, which
repair never does.

Invariants:
- `diagnose` is pure: bytes and a `Scan` in, findings out; no I/O, no clock.
- The file side is `doctor.files` (it only reads).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from ..catalog.listing import parse_lite
from ..model.conversation import ENDED_MESSAGE, ended_by_model
from ..model.ids import is_session_id
from ..model.lines import looks_like
from ..model.titles import first_string_field, last_string_field


@dataclass(frozen=True, slots=True)
class Scan:
    """What a full read of the file found (`scan_records`)."""

    records: int = 0  # whole records read
    main_messages: int = 0  # user/assistant records outside a sidechain
    sidechain_messages: int = 0
    other_types: frozenset[str] = frozenset()  # types of the remaining records
    nul_only: bool = False  # the file is nothing but NUL bytes (and line breaks)
    main_with_uuid: int = 0  # of the main messages, those with a uuid (a chain can hold them)
    #: the session ids ``ended-by-model`` records name (`conversation.ended_by_model`)
    ended: frozenset[str] = frozenset()
    #: the first ``cwd`` a record carries at its top level (the directory it recorded)
    cwd: str | None = None


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    listed: bool  # does the Agent SDK's ``list_sessions`` list it
    loads: bool  # does `claude --resume <id>` load it
    message: str
    fix: str
    repair: bool = False  # does `tt repair` apply the fix
    #: does the interactive ``claude --resume`` picker list it (2.1.197 and 2.1.332);
    #: None: as the SDK (``listed``)
    picker: bool | None = None

    @property
    def in_picker(self) -> bool:
        return self.listed if self.picker is None else self.picker

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "listed": self.listed,
            "picker": self.in_picker,
            "loads": self.loads,
            "message": self.message,
            "fix": self.fix,
            "repair": self.repair,
        }


@dataclass(frozen=True, slots=True)
class Diagnosis:
    path: str
    session_id: str | None
    findings: tuple[Finding, ...]
    #: The session whose subagent transcript this is, when that session's file is there.
    subagent_of: str | None = None
    #: The directory the session recorded (its first ``cwd``): the picker lists it, and
    #: ``claude --resume <id>`` loads it, when claude runs there.
    cwd: str | None = None
    #: The project folder the file is in, when it is not that directory's (a moved file):
    #: the picker lists it in the directory whose folder this is, not in ``cwd``.
    moved_to: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "session_id": self.session_id,
            "subagent_of": self.subagent_of,
            "cwd": self.cwd,
            "moved_to": self.moved_to,
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass(frozen=True, slots=True)
class Place:
    """Where the file is, as the file side found it: what the bytes alone cannot say."""

    subagent_of: str | None = None  # a subagent transcript of this session (its file is there)
    id_file_exists: bool = False  # ``<the records' sessionId>.jsonl`` is beside the file
    #: the session a ``continued-in`` record names (`continued_in`), when its file is
    #: beside this one and holds messages (``"parentUuid":`` in its first or last 64 KiB)
    continued_in: str | None = None
    #: the file is directly in a project folder of the config dir (``<config>/projects/<folder>/``):
    #: the only place /resume, the SDK and ``claude --resume <id>`` look
    in_project: bool = True
    #: the project folder of the directory the session recorded (its first ``cwd``), when
    #: the file is elsewhere: where it belongs
    home: str | None = None
    #: that directory itself
    cwd: str | None = None
    #: the project folder the file is in, when it is not ``cwd``'s
    moved_to: str | None = None


def scan_records(records: Iterable[dict[str, Any]], *, nul_only: bool = False) -> Scan:
    """Count what a resume needs: main-conversation messages (pure)."""
    n = main = side = with_uuid = 0
    other: set[str] = set()
    ended: set[str] = set()
    cwd: str | None = None
    for rec in records:
        n += 1
        if cwd is None:
            c = rec.get("cwd")
            cwd = c if isinstance(c, str) and c else None
        t = rec.get("type")
        if t in ("user", "assistant"):
            if rec.get("isSidechain") is True:
                side += 1
            else:
                main += 1
                u = rec.get("uuid")
                with_uuid += isinstance(u, str) and u != ""
        else:
            other.add(t if isinstance(t, str) else "?")
            if ended_by_model(rec, None):
                ended.add(rec["sessionId"])
    return Scan(n, main, side, frozenset(other), nul_only, with_uuid, frozenset(ended), cwd)


def diagnose(
    path: str,
    session_id: str | None,
    head: bytes,
    tail: bytes,
    size: int,
    scan: Scan,
    place: Place = Place(),
) -> Diagnosis:
    """Every reason the picker leaves the session out or the CLI does not load it (pure).

    ``session_id``: the id the file's name is (None: the name is not one)."""
    if place.subagent_of is not None and not scan.main_messages:
        # A live subagent of a session that is there, or another file of its folder (a
        # workflow's journal): not meant for /resume (module docstring).
        return Diagnosis(path, session_id, (), place.subagent_of, place.cwd, place.moved_to)
    sid = session_id or ""
    lite = parse_lite(sid, head, tail, size)
    named = session_id is not None
    # Both lists read only <config>/projects/<folder>/<session-id>.jsonl (the picker found 0
    # files in a folder holding only other names: a new user's check).
    here = named and place.in_project
    # The interactive picker lists a file its rules do not leave out, whatever the SDK says
    # (an empty or NUL file, a stub, a session without a title: as "(session)").
    reasons = picker_reasons(head, tail, place.continued_in) if here else []
    shown = here and not reasons
    listed = lite.hidden is None and here
    out: list[Finding] = []
    if not named and scan.main_messages:
        out.append(_name_not_an_id(path, head, place))
    elif not place.in_project and scan.main_messages:
        out.append(_not_in_a_project(path, sid, place))
    if scan.nul_only and size > 0:
        out.append(
            Finding(
                "nul-file",
                listed,
                False,
                f"the file is {size} NUL bytes: the disk kept its length but not its content (a crash before the data was written)",
                "nothing in it can be recovered: restore the file from a backup, or remove it (`tt delete` refuses a file that is not a transcript)",
                picker=shown,
            )
        )
    elif size > 0 and (scan.records == 0 or scan.other_types == frozenset({"?"})):
        # Bytes that are no transcript at all (random data, other JSON): named as tt
        # validate names them, not as an empty file or a metadata stub.
        what = looks_like(head, size) if scan.records == 0 else "JSON objects, but no Claude Code record"
        out.append(
            Finding(
                "not-a-transcript",
                listed,
                False,
                f"{what}: this is not a Claude Code transcript",
                "nothing to resume: check it is the file you meant (`tt delete` refuses a file that is not a transcript)",
                picker=shown,
            )
        )
    elif size == 0 or scan.records == 0:
        out.append(
            Finding(
                "empty",
                listed,
                False,
                "the file holds no record",
                "nothing to resume: remove the file (`tt delete` refuses a file that is not a transcript)",
                picker=shown,
            )
        )
    elif not scan.main_messages and scan.sidechain_messages:
        parent = first_string_field(head, "sessionId")
        of = f"session {parent}'s" if parent and parent != session_id else "a"
        out.append(
            Finding(
                "all-sidechain",
                listed,
                False,
                f"all {scan.sidechain_messages} messages are a subagent's (isSidechain): Claude Code finds no conversation to resume",
                f"it is {of} subagent transcript, not a session, and its session's file is not beside it: "
                "resume that session (`tt search`); keep this file with it, or `tt delete` it once the session is gone",
                picker=False,
            )
        )
    elif not scan.main_messages:
        kinds = ", ".join(sorted(scan.other_types)) or "none"
        out.append(
            Finding(
                "metadata-only",
                listed,
                False,
                f"only metadata records ({kinds}): the conversation they name is not in this file",
                "resume the session that holds the conversation (`tt ls --hidden`, `tt search`); `tt delete` the stub",
                picker=shown,
            )
        )
    elif not scan.main_with_uuid:
        out.append(
            Finding(
                "no-uuid",
                listed,
                False,
                f"none of its {scan.main_messages} messages has a uuid: Claude Code chains a conversation by "
                "uuid and parentUuid, so `claude --resume` starts but sends none of it (at most the last message)",
                "restore the file from a backup: nothing in it says how its messages chain, and tt does not "
                "invent links; `tt show` lists them in file order",
            )
        )
    elif named and lite.hidden == "no-title":
        out.append(
            Finding(
                "no-title",
                False,
                True,
                "no title, no prompt and no summary in the first and last 64 KiB: the SDK's list_sessions "
                "leaves it out"
                + (' (the /resume picker shows it, as "(session)" or a prompt it finds)' if shown else ""),
                f"give it one: `tt rename {sid or path} TITLE`; `claude --resume {sid or '<id>'}` loads it meanwhile",
                picker=shown,
            )
        )
    elif named and lite.hidden == "sidechain":
        out.append(
            Finding(
                "sidechain-first",
                False,
                True,
                "the first line is a sidechain record: /resume and the SDK leave the file out",
                f"`claude --resume {sid or '<id>'}` still loads it",
            )
        )
    if scan.main_messages and scan.ended and (session_id is None or session_id in scan.ended):
        out.append(
            Finding(
                "ended-by-model",
                listed,
                False,  # read, and nothing sent: doctor's `loads` is "the CLI continues it"
                "the model ended this conversation (an ended-by-model record): Claude Code 2.1.332 loads it "
                f'but sends nothing: "{ENDED_MESSAGE}" (exit 1), and `tt resume` refuses it too',
                "start a new session: the model ended this one on purpose, and `tt repair` leaves the record in",
            )
        )
    # The picker's own reasons, for a session that loads where it is: with no other finding,
    # or beside `no-title` (the SDK's reason; the picker's may be another).
    if here and all(f.code in ("no-title", "ended-by-model") for f in out):
        out.extend(_picker_findings(sid, reasons, listed))
    return Diagnosis(path, session_id, tuple(out), cwd=place.cwd, moved_to=place.moved_to)


def _not_in_a_project(path: str, sid: str, place: Place) -> Finding:
    mv = (
        f"`mv {path} {place.home}/`"
        if place.home
        else "move it into the project folder of the directory it was made in"
    )
    return Finding(
        "not-in-a-project",
        False,
        False,
        "the file is not directly in a project folder of the Claude config dir (<config>/projects/<folder>/): "
        f"/resume, the SDK and `claude --resume {sid}` look for a session only there",
        f"{mv}; then `claude --resume {sid}` from that directory loads it",
    )


# --------------------------------------------------------------------------- the interactive picker

#: Sessions begun by ``claude -p`` and the Agent SDKs: the interactive picker leaves them out
#: unless it runs with one of these in ``CLAUDE_CODE_ENTRYPOINT`` itself (2.1.197 and 2.1.332
#: binaries: ``new Set(["sdk-cli","sdk-ts","sdk-py"])``).
HEADLESS_ENTRYPOINTS = frozenset({"sdk-cli", "sdk-ts", "sdk-py"})
_DAEMON_KINDS = frozenset({"daemon", "daemon-worker"})
_SIDECHAIN_TRUE = re.compile(rb'"isSidechain": ?true')


def picker_reasons(head: bytes, tail: bytes, continued: str | None = None) -> list[tuple[str, str]]:
    """Why the interactive picker leaves a session out, read from its first and last 64 KiB
    as Claude Code 2.1.332 reads them (pure). ``continued``: the session a ``continued-in``
    record names when its file is beside this one (`continued_in`, checked by the file
    side). ``(code, what the CLI's debug log says)``, in the order the CLI tests them (it
    logs the first); docs/format.md §9.1."""
    out: list[tuple[str, str]] = []
    if _SIDECHAIN_TRUE.search(head):  # anywhere in the head, not only on line 1 (the SDK's rule)
        out.append(("sidechain-in-head", "isSidechain=true"))
    team = first_string_field(head, "teamName")
    if team:
        out.append(("team-session", f"teamName={team}"))
    if continued is not None:
        out.append(("continued-elsewhere", f"continued in {continued}"))
    first_message = next((ln for ln in head.split(b"\n") if b'"parentUuid":' in ln), head)
    kind = first_string_field(first_message, "sessionKind")
    if kind in _DAEMON_KINDS:
        out.append(("daemon-session", f"sessionKind={kind}"))
    # The tail only when the head has no entrypoint at all: an empty one stops the search
    # (the CLI's `??`, not `||`).
    entry = first_string_field(head, "entrypoint")
    if entry is None:
        entry = last_string_field(tail, "entrypoint")
    if entry in HEADLESS_ENTRYPOINTS:
        out.append(("headless-session", f"entrypoint={entry}"))
    if _first_prompt_is_loop(head):
        out.append(("loop-session", "/loop session"))
    return out


_LOOP = "<command-name>/loop</command-name>"


def _first_prompt_is_loop(head: bytes) -> bool:
    """2.1.332's test of a ``/loop`` session: the first user line of the head that is a prompt
    (no tool result, not meta, not a compaction summary) runs ``/loop``. (2.1.197 looks for
    the command anywhere in the head.)"""
    lines = head.split(b"\n")
    for k, line in enumerate(lines):
        if (b'"type":"user"' not in line and b'"type": "user"' not in line) or b'"tool_result"' in line:
            continue
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            if k == len(lines) - 1:  # a torn last line: its bytes say
                return _LOOP.encode() in line
            continue
        if not isinstance(rec, dict) or rec.get("type") != "user":
            continue
        if rec.get("isMeta") is True or rec.get("isCompactSummary") is True or not rec.get("message"):
            continue
        texts = _texts(rec)
        if texts is None:
            continue
        return any(_LOOP in t for t in texts)
    return False


def _texts(rec: dict[str, Any]) -> list[str] | None:
    """A user record's texts as the CLI reads them for a prompt; None when it answers a tool."""
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for b in content if isinstance(content, list) else ():
        if not isinstance(b, dict):
            continue
        if b.get("type") == "tool_result":
            return None
        if b.get("type") == "text" and isinstance(b.get("text"), str):
            out.append(b["text"])
    return out


def continued_in(tail: bytes) -> str | None:
    """The session a ``continued-in`` record of the tail names, unless a finished response or a
    prompt comes after it (2.1.332: ``{"type":"continued-in","continuedInSessionId"}``, read
    from the end of the file back to the first of the two)."""
    if b'"type":"continued-in"' not in tail:
        return None
    for line in reversed(tail.split(b"\n")):
        marked = b'"type":"continued-in"' in line
        message = b'"type":"user"' in line or b'"type":"assistant"' in line
        if not (marked or message):
            continue
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(rec, dict):
            continue
        if marked and rec.get("type") == "continued-in" and isinstance(rec.get("continuedInSessionId"), str):
            target = rec["continuedInSessionId"]
            return target if is_session_id(target) else None
        if message and _said(rec):
            return None
    return None


_COMMAND = re.compile(r"<command-name>(.*?)</command-name>")
_BASH_INPUT = re.compile(r"<bash-input>([\s\S]*?)</bash-input>")
_NOT_A_PROMPT = re.compile(r"^(?:\s*<[a-z][\w-]*[\s>]|\[Request interrupted by user[^\]]*\])")


def _said(rec: dict[str, Any]) -> bool:
    """A finished response, or a prompt as 2.1.332's first-prompt reader takes one (not a
    command, not a tag such as ``<local-command-stdout>``, not an interruption): what ends a
    ``continued-in`` record's say."""
    msg = rec.get("message")
    if rec.get("type") == "assistant":
        return (
            rec.get("isApiErrorMessage") is not True
            and isinstance(msg, dict)
            and isinstance(msg.get("stop_reason"), str)
        )
    if (
        rec.get("type") != "user"
        or rec.get("isMeta") is True
        or rec.get("isCompactSummary") is True
        or not msg
    ):
        return False
    for text in _texts(rec) or ():
        c = text.replace("\n", " ").strip()
        if not c or _COMMAND.search(c):
            continue
        if _BASH_INPUT.search(c):
            return True
        if _NOT_A_PROMPT.match(c):
            continue
        return True
    return False


#: Each picker reason's message and fix; ``{said}`` is the CLI's words for it, ``{other}``
#: the session a ``continued-in`` record names, ``{resume}`` how to load the session anyway.
_PICKER_TEXT: dict[str, tuple[str, str]] = {
    "sidechain-in-head": (
        "a record of its first 64 KiB is a sidechain's ({said}), though line 1 is not: the interactive "
        "/resume picker leaves the session out (the SDK looks at line 1 only)",
        "{resume}; the sidechain records are a subagent's, written into this file by an older version",
    ),
    "team-session": (
        "it is an agent team member's session ({said}): the interactive /resume picker leaves those out",
        "{resume}",
    ),
    "continued-elsewhere": (
        "a continued-in record says the conversation went on in session {other}, whose file is beside it: "
        "the interactive /resume picker of 2.1.332 shows that one instead (2.1.197's lists both)",
        "resume {other} (`claude --resume {other}`); {resume} as it was",
    ),
    "daemon-session": (
        "it is a background worker's session ({said}): the interactive /resume picker leaves those out",
        "{resume}",
    ),
    "headless-session": (
        "it was begun by `claude -p` or the Agent SDK ({said}): the interactive /resume picker leaves "
        "those out (the SDK's list_sessions lists it)",
        "{resume}; `CLAUDE_CODE_ENTRYPOINT={other} claude --resume` shows the picker with these sessions in it",
    ),
    "loop-session": (
        "its first prompt runs /loop: the interactive /resume picker leaves /loop sessions out "
        "(2.1.197's, any session with /loop in its first 64 KiB)",
        "{resume}",
    ),
}


def _picker_findings(sid: str, reasons: list[tuple[str, str]], listed: bool) -> list[Finding]:
    resume = f"`claude --resume {sid}` loads it"
    out: list[Finding] = []
    for code, said in reasons:
        # What follows the CLI's "=" or "continued in ": the entry point, the other session.
        other = said.removeprefix("continued in ").rpartition("=")[2]
        message, fix = (t.format(said=said, other=other, resume=resume) for t in _PICKER_TEXT[code])
        out.append(Finding(code, listed, True, message, fix, picker=False))
    return out


def _name_not_an_id(path: str, head: bytes, place: Place) -> Finding:
    name = path.rsplit("/", 1)[-1]
    inner = first_string_field(head, "sessionId")
    if is_session_id(inner) and not place.id_file_exists:
        fix = f"rename it to its session id: `mv {path} {path[: len(path) - len(name)]}{inner}.jsonl`"
    elif is_session_id(inner):
        fix = (
            f"it is a copy of session {inner}, whose file {inner}.jsonl is beside it and is the one "
            f"/resume lists: compare them (`tt show`); `tt fork {path}` to resume this copy apart"
        )
    else:
        fix = f"its records' sessionId is no session id either: `tt fork {path}` writes it under a new id"
    return Finding(
        "name-not-an-id",
        False,
        False,
        f"the file name {name!r} is not a session id: Claude Code finds a session by <session-id>.jsonl, "
        "so /resume and the SDK skip it and `claude --resume` cannot name it",
        fix,
    )
