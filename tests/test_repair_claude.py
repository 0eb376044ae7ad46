"""Against the real client: for each damage kind, applied to a fresh real session, Claude
Code resumes the *repaired* file and sends every message that was not physically
destroyed; the same CLI given the *damaged* file is measured too, for the comparison in
the README (``benchmarks/repair_vs_claude.py`` prints that table from `measure`).

"Messages" are counted as conversation blocks (`oracle.conversation_blocks`: texts, tool
calls, tool results, thinking), since Claude Code merges and splits messages on its own.
Expected = what the CLI sends for the undamaged session, minus the blocks of the records
the damage destroyed. A tool result kept as text (its call was destroyed) counts as kept;
the text of a record with bad bytes counts as kept when it reads the same once U+FFFD and
lone surrogates are taken out.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from tests.damage import KINDS, Damaged, normalise_text, validate_bytes
from tests.support.claude_cli import ClaudeCLI, ClaudeRunError, Sandbox, run_claude
from tests.support.oracle import Block, OracleError, conversation_blocks, resume_with_cli
from tests.support.policy import claude_code_policy, is_main_turn
from tests.support.sessions import GeneratedSession
from tests.support.standin import RecordedRequest, Reply, StandIn, Text
from transcript_tools.repair_files import repair_file
from transcript_tools.writer import iso_now

pytestmark = pytest.mark.claude

#: Damage kinds measured on the generated session; split-message needs responses of
#: several lines, which a session answered with thinking + text has.
ON_SESSION = [k for k in KINDS if k != "split-message-noncontiguous"]
THINKING_PROMPTS = ("First question about the design", "Second question, after the answer", "Third question")


# --- a second real session: every answer is a thinking line and a text line ----------------


def thinking_policy(request: RecordedRequest) -> Reply:
    reply = claude_code_policy(request)
    if isinstance(reply, Text) and is_main_turn(request) and reply.thinking is None:
        return Text(reply.text, thinking=f"Thinking it over: {reply.text[:40]}")
    return reply


def generate_thinking_session(cli: ClaudeCLI, root: Path, prompts: Iterable[str] = THINKING_PROMPTS) -> GeneratedSession:
    started = time.monotonic()
    root.mkdir(parents=True, exist_ok=True)
    sandbox = Sandbox.create(root)
    cwd = (root / "demo-app").resolve()
    cwd.mkdir()
    sid = str(uuid.uuid4())
    prompts = tuple(prompts)
    with StandIn(policy=thinking_policy) as api:
        for i, prompt in enumerate(prompts):
            run_claude(
                cli, prompt, sandbox=sandbox, cwd=cwd, base_url=api.base_url,
                session_id=sid if i == 0 else None, resume=None if i == 0 else sid,
            )
        requests = tuple(api.requests)
    return GeneratedSession(cli, sandbox.home, sandbox.config_dir, cwd, sid, prompts, time.monotonic() - started, requests)


# --- measuring ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    kind: str
    version: str
    expected: int  # blocks the undamaged session sends, minus those of destroyed records
    destroyed: int  # blocks of records the damage destroyed
    damaged: int | None  # expected blocks the CLI sent given the damaged file (None: it failed)
    repaired: int  # ... given the repaired file
    extra: int  # blocks only the repaired file sends: what tt added
    damaged_error: str = ""
    fixes: tuple[str, ...] = ()
    validate_errors: int = 0  # tt validate errors left in the repaired file


def _key(b: Block) -> Block:
    return Block(b.role, b.kind, normalise_text(b.value)) if b.kind in ("text", "thinking") else b


def blocks_of_records(transcript: bytes, uuids: Iterable[str]) -> list[Block]:
    """The blocks the given records would contribute to a request."""
    want = set(uuids)
    out: list[Block] = []
    for line in transcript.splitlines():
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, dict) and rec.get("uuid") in want and isinstance(rec.get("message"), dict):
            msg = rec["message"]
            out.extend(conversation_blocks([{"role": msg.get("role", rec.get("type")), "content": msg.get("content")}]))
    return out


def present(expected: list[Block], sent: list[Block]) -> int:
    """How many of ``expected`` are in ``sent`` (as a multiset)."""
    have = Counter(_key(b) for b in sent)
    texts = [b.value for b in sent if b.kind == "text"]
    n = 0
    for b in expected:
        k = _key(b)
        if have[k] > 0:
            have[k] -= 1
            n += 1
        elif b.kind == "tool_result" and any(b.value in t and t.startswith("[tt repair") for t in texts):
            n += 1  # kept as text: its tool call was destroyed
    return n


def _resume(session: GeneratedSession, config: Path) -> tuple[list[Block] | None, str]:
    try:
        return conversation_blocks(resume_with_cli(session.cli, config, session.session_id, session.cwd)), ""
    except (OracleError, ClaudeRunError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return None, first[:200]


def baseline(session: GeneratedSession, scratch: Path) -> list[Block]:
    copy = session.copy_to(scratch / "baseline")
    blocks, err = _resume(copy, copy.config_dir)
    assert blocks is not None, err
    return blocks


def measure(session: GeneratedSession, kind: str, base: list[Block], scratch: Path) -> Row:
    src = session.transcript.read_bytes()
    d: Damaged = KINDS[kind](src)
    destroyed = blocks_of_records(src, d.destroyed)
    expected = list((Counter(base) - Counter(destroyed)).elements())
    expected.sort(key=base.index)
    # The damaged file, as is.
    broken = session.copy_to(scratch / f"{kind}-damaged")
    broken.transcript.write_bytes(d.data)
    got_damaged, err = _resume(broken, broken.config_dir)
    # The repaired file, in place.
    fixed = session.copy_to(scratch / f"{kind}-repaired")
    fixed.transcript.write_bytes(d.data)
    report = repair_file(fixed.transcript, in_place=True, now=iso_now(), new_id=lambda: str(uuid.uuid4()))
    got_repaired, err2 = _resume(fixed, fixed.config_dir)
    assert got_repaired is not None, f"{kind}: Claude Code {session.cli.version} failed on the repaired file: {err2}"
    # Blocks only the repaired file sends (neither the undamaged session nor the damaged
    # file): what tt added, e.g. interrupted tool results, orphan results kept as text.
    # (Claude Code's own filler, e.g. "Continue from where you left off.", is in both.)
    beyond = Counter(_key(b) for b in got_repaired) - Counter(_key(b) for b in base)
    if got_damaged is not None:
        beyond -= Counter(_key(b) for b in got_damaged)
    added = sum(beyond.values())
    return Row(
        kind=kind,
        version=session.cli.version,
        expected=len(expected),
        destroyed=len(base) - len(expected),
        damaged=None if got_damaged is None else present(expected, got_damaged),
        repaired=present(expected, got_repaired),
        extra=added,
        damaged_error=err,
        fixes=tuple(sorted({a.fix for a in report.actions})),
        validate_errors=validate_bytes(fixed.transcript.read_bytes()).errors,
    )


def rows(session: GeneratedSession, kinds: Iterable[str], scratch: Path) -> Iterator[Row]:
    base = baseline(session, scratch)
    for kind in kinds:
        yield measure(session, kind, base, scratch)


# --- the tests ----------------------------------------------------------------------------


#: What each generated session sends undamaged (one resume per session per run).
_BASELINES: dict[str, list[Block]] = {}


def _base(session: GeneratedSession, scratch: Path) -> list[Block]:
    if session.session_id not in _BASELINES:
        _BASELINES[session.session_id] = baseline(session, scratch)
    return _BASELINES[session.session_id]


def _check(row: Row) -> None:
    assert row.validate_errors == 0, row
    assert row.repaired == row.expected, f"{row.kind}: repaired file sent {row.repaired} of {row.expected} blocks"


@pytest.mark.parametrize("kind", ON_SESSION)
def test_claude_code_resumes_the_repaired_session(kind: str, generated_session: GeneratedSession, tmp_path: Path) -> None:
    try:
        KINDS[kind](generated_session.transcript.read_bytes())
    except ValueError as e:  # pragma: no cover - the generated session has every shape
        pytest.fail(f"the generated session cannot take {kind}: {e}")
    _check(measure(generated_session, kind, _base(generated_session, tmp_path), tmp_path))


@pytest.fixture(scope="module")
def thinking_session(tmp_path_factory: pytest.TempPathFactory) -> GeneratedSession:
    from tests.conftest import require_cli
    from tests.support.claude_cli import BUNDLED_VERSION

    return generate_thinking_session(require_cli(BUNDLED_VERSION), tmp_path_factory.mktemp("thinking-session"))


def test_claude_code_resumes_a_regrouped_split_response(thinking_session: GeneratedSession, tmp_path: Path) -> None:
    row = measure(thinking_session, "split-message-noncontiguous", baseline(thinking_session, tmp_path), tmp_path)
    assert row.fixes == ("regroup-split-message",)
    _check(row)


def test_measure_counts_what_was_sent() -> None:
    a, b, r = Block("assistant", "text", "A"), Block("user", "text", "B"), Block("user", "tool_result", "toolu_1")
    kept = Block("user", "text", "[tt repair: result of tool call toolu_1, whose tool_use was lost]\nout")
    assert present([a, b, r], [b, a]) == 2
    assert present([a, b, r], [a, b, kept]) == 3
    assert present([Block("user", "text", "héllo")], [Block("user", "text", "h\ufffd\ufffdéllo")]) == 1
    assert present([a, a], [a]) == 1
    assert blocks_of_records(b'{"uuid":"u","type":"user","message":{"role":"user","content":"hi"}}\nnot json\n', ["u"]) == [
        Block("user", "text", "hi")
    ]
