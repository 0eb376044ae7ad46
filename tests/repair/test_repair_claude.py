"""Against the real client: for each damage kind, applied to a fresh real session, Claude
Code resumes the *repaired* file and sends exactly the conversation that was not physically
destroyed, in order; the same CLI given the *damaged* file is measured too, and both are
checked against the README's table cell by cell (``benchmarks/repair_vs_claude.py`` prints
that table from `measure`).

"Messages" are counted as conversation blocks (`oracle.conversation_blocks`: texts, tool
calls, tool results, thinking), since Claude Code merges and splits messages on its own.
Expected = what the CLI sends for the undamaged session, minus the blocks of the records
the damage destroyed, in the undamaged order. After repair the CLI must send exactly that
sequence (an extra, missing or reordered block fails), with only these documented changes:
- a tool result whose call was destroyed arrives as text ("kept as text", the README's
  "+1 kept as text"), in its place;
- a tool call whose result was destroyed is followed by tt's interrupted result;
- text with bad bytes reads the same once U+FFFD and lone surrogates are taken out;
- Claude Code's own filler for a session that ends on a user turn ("Continue from where you
  left off." / "No response requested.", seen on 2.1.197 and 2.1.332) may come right before
  the probe.
The damaged column counts the expected blocks the CLI still sends (a multiset) and says
when it sends them all but out of order.
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
from tests.support.claude_cli import (
    BUNDLED_VERSION,
    NPM_VERSION,
    ClaudeCLI,
    ClaudeRunError,
    Sandbox,
    run_claude,
)
from tests.support.oracle import Block, OracleError, conversation_blocks, resume_with_cli
from tests.support.paths import ROOT
from tests.support.policy import claude_code_policy, is_main_turn
from tests.support.sessions import GeneratedSession
from tests.support.standin import RecordedRequest, Reply, StandIn, Text
from transcript_tools.edge.writer import iso_now
from transcript_tools.repair.files import repair_file

#: Damage kinds measured on the generated session; split-message needs responses of
#: several lines, which a session answered with thinking + text has.
ON_SESSION = [k for k in KINDS if k != "split-message-noncontiguous"]
README = ROOT / "README.md"
THINKING_PROMPTS = ("First question about the design", "Second question, after the answer", "Third question")


# --- a second real session: every answer is a thinking line and a text line ----------------


def thinking_policy(request: RecordedRequest) -> Reply:
    reply = claude_code_policy(request)
    if isinstance(reply, Text) and is_main_turn(request) and reply.thinking is None:
        return Text(reply.text, thinking=f"Thinking it over: {reply.text[:40]}")
    return reply


def generate_thinking_session(
    cli: ClaudeCLI, root: Path, prompts: Iterable[str] = THINKING_PROMPTS
) -> GeneratedSession:
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
                cli,
                prompt,
                sandbox=sandbox,
                cwd=cwd,
                base_url=api.base_url,
                session_id=sid if i == 0 else None,
                resume=None if i == 0 else sid,
            )
        requests = tuple(api.requests)
    return GeneratedSession(
        cli, sandbox.home, sandbox.config_dir, cwd, sid, prompts, time.monotonic() - started, requests
    )


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
    damaged_in_order: bool = True  # the expected blocks the damaged file sends come in order
    kept_as_text: int = 0  # tool results the repaired file sends as text (their call was lost)
    interrupted: int = 0  # interrupted results tt added for calls whose result was lost
    repaired_diff: str = ""  # "" when the repaired file sends exactly the expected sequence


#: Claude Code's own messages when a resumed session ends on a user turn (2.1.197 writes
#: them into the file, 2.1.332 only sends them): not the session's content.
CLI_FILLER = (
    Block("user", "text", "Continue from where you left off."),
    Block("assistant", "text", "No response requested."),
)
KEPT_PREFIX = "[tt repair: result of tool call "


def _key(b: Block) -> Block:
    if b.kind == "text" and b.value.startswith(KEPT_PREFIX):
        # A tool result kept as text: compared as what it stands for.
        return Block(b.role, "kept-as-text", b.value[len(KEPT_PREFIX) :].split(",", 1)[0])
    return Block(b.role, b.kind, normalise_text(b.value)) if b.kind in ("text", "thinking") else b


def _tool_id(b: Block) -> str:
    return b.value.split()[0]


def after_repair(expected: list[Block], destroyed: list[Block]) -> list[Block]:
    """The exact sequence the repaired file must make the CLI send (keys, see `_key`)."""
    lost_calls = {_tool_id(b) for b in destroyed if b.kind == "tool_use"}
    results = {b.value for b in expected if b.kind == "tool_result"}
    out: list[Block] = []
    for b in expected:
        if b.kind == "tool_result" and b.value in lost_calls:
            out.append(Block(b.role, "kept-as-text", b.value))
            continue
        out.append(_key(b))
    # A call left without its result is answered (add-interrupted-result) after its
    # response's last call.
    for i in reversed(range(len(out))):
        b = out[i]
        if b.kind == "tool_use" and _tool_id(b) not in results:
            j = i + 1
            while j < len(out) and out[j].role == "assistant" and out[j].kind == "tool_use":
                j += 1
            out.insert(j, Block("user", "tool_result", _tool_id(b)))
    return out


def without_filler(sent: list[Block]) -> list[Block]:
    """``sent`` less a run of `CLI_FILLER` right before the last block (the probe)."""
    keys = [_key(b) for b in sent]
    end = len(keys) - 1
    start = end
    while start > 0 and keys[start - 1] in CLI_FILLER:
        start -= 1
    return keys[:start] + keys[end:]


def exact_diff(want: list[Block], got: list[Block]) -> str:
    """A unified diff of two block sequences; "" when they are equal."""
    if want == got:
        return ""
    import difflib

    return "\n".join(
        difflib.unified_diff(
            [str(b) for b in want], [str(b) for b in got], "expected", "sent", lineterm="", n=1
        )
    )


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
            out.extend(
                conversation_blocks(
                    [{"role": msg.get("role", rec.get("type")), "content": msg.get("content")}]
                )
            )
    return out


def present(expected: list[Block], sent: list[Block]) -> int:
    """How many of ``expected`` are in ``sent`` (as a multiset; a result kept as text counts)."""
    have = Counter(_key(b) for b in sent)
    n = 0
    for b in expected:
        k = _key(b)
        alt = Block(b.role, "kept-as-text", b.value) if b.kind == "tool_result" else None
        if have[k] > 0:
            have[k] -= 1
            n += 1
        elif alt is not None and have[alt] > 0:
            have[alt] -= 1
            n += 1
    return n


def in_order(expected: list[Block], sent: list[Block]) -> bool:
    """Whether the expected blocks ``sent`` carries come in the expected order."""
    remaining = Counter(_key(b) for b in expected)
    got: list[Block] = []
    for k in (_key(b) for b in sent):
        if remaining[k] > 0:
            remaining[k] -= 1
            got.append(k)
    rest = iter([_key(b) for b in expected])
    return all(any(k == e for e in rest) for k in got)  # a subsequence of expected


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
    assert got_repaired is not None, (
        f"{kind}: Claude Code {session.cli.version} failed on the repaired file: {err2}"
    )
    # Blocks only the repaired file sends (neither the undamaged session nor the damaged
    # file): what tt added, e.g. interrupted tool results, orphan results kept as text.
    # (Claude Code's own filler, e.g. "Continue from where you left off.", is in both.)
    beyond = Counter(_key(b) for b in got_repaired) - Counter(_key(b) for b in base)
    if got_damaged is not None:
        beyond -= Counter(_key(b) for b in got_damaged)
    added = sum(beyond.values())
    want = after_repair(expected, destroyed)
    got = without_filler(got_repaired)
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
        damaged_in_order=got_damaged is None or in_order(expected, got_damaged),
        kept_as_text=sum(1 for b in got if b.kind == "kept-as-text"),
        interrupted=len(want) - len(expected),
        repaired_diff=exact_diff(want, got),
    )


def damaged_cell(r: Row) -> str:
    """The README's "damaged" cell: expected blocks sent / expected, bold when short or out of order."""
    if r.damaged is None:
        return f"fails ({r.damaged_error})" if r.damaged_error else "fails"
    cell = f"{r.damaged}/{r.expected}"
    if r.damaged == r.expected and r.damaged_in_order:
        return cell
    return f"**{cell}{'' if r.damaged_in_order else ', out of order'}**"


def repaired_cell(r: Row) -> str:
    """The README's "repaired" cell; meaningful only when the repaired file sent exactly the
    expected sequence (`Row.repaired_diff` empty)."""
    notes = [f"+{r.kept_as_text} kept as text"] if r.kept_as_text else []
    notes += [f"+{r.interrupted} interrupted result"] if r.interrupted else []
    return f"{r.repaired}/{r.expected}" + (f" ({', '.join(notes)})" if notes else "")


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


def readme_table() -> dict[tuple[str, str], tuple[str, str]]:
    """The README's table ("Against the real client"): (kind, CLI version) -> (damaged
    cell, repaired cell), as written there."""
    text = README.read_text(encoding="utf-8")
    lines = text[text.index("**Against the real client.**") :].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("|"))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    head, _, *body = ([c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines[start:end])
    versions = [h.split()[1] for h in head[2::2]]  # "CC 2.1.332 damaged", "CC 2.1.332 repaired", ...
    return {(row[0], v): (row[2 + 2 * i], row[3 + 2 * i]) for row in body for i, v in enumerate(versions)}


def _check(row: Row) -> None:
    assert row.validate_errors == 0, row
    assert row.repaired_diff == "", (
        f"{row.kind} on {row.version}: the repaired file does not send exactly what was expected:\n{row.repaired_diff}"
    )
    assert (damaged_cell(row), repaired_cell(row)) == readme_table()[(row.kind, row.version)], row


@pytest.mark.claude
@pytest.mark.parametrize("kind", ON_SESSION)
def test_claude_code_resumes_the_repaired_session(
    kind: str, generated_session: GeneratedSession, tmp_path: Path
) -> None:
    try:
        KINDS[kind](generated_session.transcript.read_bytes())
    except ValueError as e:  # pragma: no cover - the generated session has every shape
        pytest.fail(f"the generated session cannot take {kind}: {e}")
    _check(measure(generated_session, kind, _base(generated_session, tmp_path), tmp_path))


@pytest.fixture(scope="module", params=[BUNDLED_VERSION, NPM_VERSION], ids=lambda v: f"cc-{v}")
def thinking_session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> GeneratedSession:
    from tests.conftest import require_cli

    return generate_thinking_session(
        require_cli(request.param), tmp_path_factory.mktemp(f"thinking-session-{request.param}-")
    )


@pytest.mark.claude
def test_claude_code_resumes_a_regrouped_split_response(
    thinking_session: GeneratedSession, tmp_path: Path
) -> None:
    row = measure(
        thinking_session, "split-message-noncontiguous", baseline(thinking_session, tmp_path), tmp_path
    )
    assert row.fixes == ("regroup-split-message",)
    _check(row)


def test_readme_table_has_every_damage_kind_on_both_clis() -> None:
    table = readme_table()
    assert set(table) == {(k, v) for k in KINDS for v in (BUNDLED_VERSION, NPM_VERSION)}


def test_measure_counts_what_was_sent() -> None:
    a, b, r = (
        Block("assistant", "text", "A"),
        Block("user", "text", "B"),
        Block("user", "tool_result", "toolu_1"),
    )
    kept = Block("user", "text", "[tt repair: result of tool call toolu_1, whose tool_use was lost]\nout")
    assert present([a, b, r], [b, a]) == 2
    assert present([a, b, r], [a, b, kept]) == 3
    assert present([Block("user", "text", "héllo")], [Block("user", "text", "h\ufffd\ufffdéllo")]) == 1
    assert present([a, a], [a]) == 1
    assert in_order([a, b], [a, b]) and not in_order([a, b], [b, a]) and in_order([a, b, r], [a, r])
    assert blocks_of_records(
        b'{"uuid":"u","type":"user","message":{"role":"user","content":"hi"}}\nnot json\n', ["u"]
    ) == [Block("user", "text", "hi")]


def test_exact_sequence_fails_on_an_extra_a_missing_or_a_reordered_block() -> None:
    call, res = Block("assistant", "tool_use", "toolu_1 Read"), Block("user", "tool_result", "toolu_1")
    a, b, probe = Block("assistant", "text", "A"), Block("user", "text", "B"), Block("user", "text", "probe")
    expected = [b, call, res, a, probe]
    want = after_repair(expected, [])
    assert exact_diff(want, without_filler([b, call, res, a, probe])) == ""
    assert exact_diff(want, without_filler([b, call, res, a, a, probe])) != ""  # extra
    assert exact_diff(want, without_filler([b, call, a, probe])) != ""  # missing
    assert exact_diff(want, without_filler([call, b, res, a, probe])) != ""  # reordered
    # Claude Code's filler right before the probe is allowed; anywhere else it is not.
    assert exact_diff(want, without_filler([b, call, res, a, *CLI_FILLER, probe])) == ""
    assert exact_diff(want, without_filler([b, *CLI_FILLER, call, res, a, probe])) != ""
    # A result whose call was destroyed must come as text, in its place; a call whose
    # result was destroyed must get tt's interrupted result right after it.
    kept = Block("user", "text", "[tt repair: result of tool call toolu_1, whose tool_use was lost]\nout")
    assert exact_diff(after_repair([b, res, a, probe], [call]), without_filler([b, kept, a, probe])) == ""
    assert exact_diff(after_repair([b, res, a, probe], [call]), without_filler([b, res, a, probe])) != ""
    assert exact_diff(after_repair([b, call, probe], [res, a]), without_filler([b, call, res, probe])) == ""
    assert exact_diff(after_repair([b, call, probe], [res, a]), without_filler([b, call, probe])) != ""
