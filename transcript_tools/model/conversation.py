"""The API ``messages`` a resume sends, rebuilt from a session as Claude Code rebuilds them.

`build(session)` turns the conversation entries of a `session.Session` (the active chain
from the last compact boundary, preserved segment spliced in, parallel tool calls
recovered: `Session.conversation`) into the ``messages`` list of a Messages API request,
plus what a continuation needs to know (the leaf to chain new entries onto, the model,
cwd, git branch and version last used).

The rules, each checked against what the real CLIs send after ``claude -p --resume``
(the oracle of tests/support/oracle.py, run on every file in fixtures/real/ with Claude
Code 2.1.332 and 2.1.197; tests/model/test_conversation.py keeps the comparison):

1. Only ``user`` and ``assistant`` entries become messages, plus the text of
   ``system``/``local_command`` entries (a slash command's lines in 2.1.1x-2.1.3x), which
   both CLIs send as user text. Other ``system`` entries (compact boundary, api error,
   turn duration ...), ``progress`` and ``attachment`` entries are not sent: Claude Code
   re-renders attachments from its own runtime on every request, as ``role:"system"``
   messages (2.1.332) or ``<system-reminder>`` text (2.1.197), and tt has no such
   runtime. The one exception is ``queued_command`` (words the user typed mid-turn):
   tt keeps them as a ``<system-reminder>`` text in the user message they came with,
   the form older CLIs used, so the model still sees them.
2. ``isMeta`` user entries *are* sent (the ``<local-command-caveat>`` of a ``/compact``,
   2.1.197's "Continue from where you left off."), and so is the ``isCompactSummary``
   summary. Synthetic assistant entries (model ``<synthetic>``, "No response
   requested.") are sent; those marked ``isApiErrorMessage`` are not.
3. The split lines of one response (same ``message.id``, docs/format.md §3.2.1) become one
   assistant message, even when the results of its first calls were written between
   its lines (parallel tool calls): all the calls first, then one user message with the
   results in the order they were written. Consecutive user entries become one user
   message; in it ``tool_result`` blocks come first, as the API requires.
4. Blocks are passed as written (thinking blocks keep their signature), except:
   ``caller`` on ``tool_use`` is dropped (written from 2.1.17 on; 2.1.197 strips it,
   2.1.332 sends it along with an advanced-tool-use beta tt does not use); calls of the
   tool ``Task`` are sent as ``Agent``, its name since 2.1.x (both CLIs rename them); and,
   once the request's model is known (`Conversation.for_model`), thinking blocks written
   by another model are not sent (`lifecycle` rule 3: both CLIs, any date; a session
   whose model retired continues on another model and so loses all its thinking).
5. A ``tool_use`` whose result is not in the next user message (a crash mid-tool) gets a
   synthetic ``is_error`` result there, worded as Claude Code 2.1.332 words it (2.1.197
   drops the call instead). A ``tool_result`` that answers no call of the message just
   before is dropped; a user message left with nothing becomes "(no content)" (2.1.332).
6. Assistant messages of thinking blocks only, or of blank text only, are dropped, and
   their neighbours merge (both CLIs). An assistant message with no blocks at all is
   sent as "(no content)" (2.1.332). User messages with no content are dropped: Claude
   Code sends them, the API rejects them, and they carry nothing.
7. When the conversation ends with a user message, an assistant "No response
   requested." follows (both CLIs), so the new prompt opens a turn of its own. It goes
   right after the last user or assistant entry: slash-command output written after that
   (``system``/``local_command``, which a leaf may be: `chain.LEAF_KINDS`) follows it. When
   the last message is a slash command's own line after its ``<local-command-caveat>``
   (a session ending on ``/clear`` or ``/cost``), 2.1.332 puts none (2.1.197 does).
8. What the API refuses is fixed as ``tt repair`` fixes it (`api_rules`; README
   "Requests the API refuses"): empty and whitespace-only text blocks and thinking
   blocks without a signature dropped, NULs replaced by U+2400, a call whose tool name
   is past 200 characters (and its result) kept as text, a tool_reference past 64
   characters kept as text, a tool_use id used twice renamed with its result, tool ids
   not of the API's pattern renamed (`api_rules.valid_tool_id`) in calls and results alike.

A session the model ended is not continued: when a model ends a conversation (its
EndConversation tool), Claude Code 2.1.332 appends ``{"type":"ended-by-model","timestamp",
"sessionId"}``, and ``claude --resume`` of it sends nothing ("Claude ended this
conversation. Start a new session to continue.", exit 1; 2.1.197 does not know the record
and continues). `ended_by_model` is that rule; `resume.files.load_for_resume` refuses such a
session (`errors.ConversationEnded`), and ``tt doctor`` names it
(tests/resume/test_ended_by_model.py).

The entry a continuation chains onto (`Conversation.leaf_uuid`) is the last entry
written after the active leaf on its branch (an attachment or a turn-duration line, when
there are some), as Claude Code 2.1.332 parents the prompt of a resumed turn.

Invariants:
- Pure: no I/O; the input entries and their records are never mutated (blocks that
  change are copied).
- Every ``tool_use`` in the output is answered by a ``tool_result`` in the next message,
  and every ``tool_result`` answers a ``tool_use`` of the message before it.
- Messages alternate user/assistant except where split-message grouping keeps two
  assistant messages with different ids side by side (the API merges those).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from .api_rules import (
    BAD_TOOL_ID,
    BLANK_TEXT,
    CODE_OF_BIT,
    HUGE_IMAGE,
    IMAGES_SHIFT,
    LONG_TOOL_NAME,
    MANY_IMAGES,
    RULE_MASK,
    WIDE_IMAGE,
    IdRenames,
    content_problems,
    fix_content,
    fix_string,
    long_named_calls,
    prompt_too_long,
    refused_since,
    rename_ids,
    renamed_id,
)
from .chain import ASSISTANT, USER
from .lifecycle import SYNTHETIC_MODEL, sends_thinking
from .lines import Entry
from .session import Session

#: Claude Code 2.1.332's result for a call whose outcome the transcript never recorded:
#: what it sends on resume and writes into the file then (``tool_result`` content and
#: ``toolUseResult``), and what `repair` writes too (`repair.records.interrupted_result`;
#: docs/format.md §5). 2.1.197 has no such text: it drops the call.
INTERRUPTED_TOOL_RESULT = (
    "[Tool call interrupted: the session ended before this call's result was recorded, so its "
    "outcome is unknown. Check whether it took effect before relying on it or running it again.]"
)
#: The synthetic assistant answer both CLIs put after a conversation that ends on a user turn.
NO_RESPONSE_REQUESTED = "No response requested."
#: What Claude Code 2.1.332 sends for a message left without content (rules 5, 6).
NO_CONTENT = "(no content)"
_THINKING = frozenset({"thinking", "redacted_thinking"})
#: Notes for what the validator reports and `repair` fixes (tool-use-unpaired,
#: tool-result-orphan, split-message-noncontiguous).
_REPAIR_NOTES = frozenset({"synthetic-tool-result", "orphan-tool-result", "split-message"})


#: Tools Claude Code renamed; both CLIs send old calls under the new name (rule 4).
_RENAMED_TOOLS: Mapping[str, str] = {"Task": "Agent"}

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Note:
    """One thing the rebuild did that the file does not say (for --dry-run and logs)."""

    #: synthetic-tool-result | orphan-tool-result | split-message | empty-message |
    #: orphan-thinking | no-response-sentinel | queued-command-dropped |
    #: thinking-not-sent (detail: how many blocks of a message that is sent) |
    #: prompt-too-long (detail: what the API said; `tt resume` compacts first) | the
    #: `tt validate` code of a request rule fixed (rule 8: empty-text-block, ...)
    code: str
    uuid: str | None
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Conversation:
    messages: list[Message]
    #: uuid of the last conversation entry: the ``parentUuid`` of the next entry written.
    leaf_uuid: str | None
    #: The model of the last real (not synthetic) assistant message.
    model: str | None
    session_id: str | None
    cwd: str | None
    git_branch: str | None
    version: str | None
    notes: tuple[Note, ...] = ()
    #: Entries the messages came from, in order (for tests and show).
    entries: tuple[Entry, ...] = field(default=(), repr=False)
    #: Whether rule 7's "No response requested." was asked for (`api_messages`'s
    #: ``sentinel``): `for_model` rebuilds with the same (the last role cannot tell, since
    #: a slash command's output may follow the sentinel).
    sentinel: bool = True

    @property
    def mended(self) -> list[Note]:
        """Notes for what `tt validate` reports as an API problem (an unanswered call, an
        orphan result, a response split apart), which these messages work around."""
        return [n for n in self.notes if n.code in _REPAIR_NOTES]

    @property
    def ends_with_user(self) -> bool:
        return bool(self.messages) and self.messages[-1]["role"] == "user"

    @property
    def thinking_not_sent(self) -> int:
        """How many thinking blocks `for_model` left out."""
        return sum(int(n.detail) for n in self.notes if n.code == "thinking-not-sent")

    def for_model(self, model: str) -> Conversation:
        """The conversation as a request to ``model`` sends it (rule 4: only the thinking
        blocks ``model`` wrote); ``self`` when nothing changes."""
        if not any(_foreign_thinking(e, model) for e in self.entries):
            return replace(self, model=model) if model != self.model else self
        # Built as it was: with or without the sentinel.
        messages, notes = api_messages(self.entries, sentinel=self.sentinel, model=model)
        return replace(self, messages=messages, notes=tuple(notes), model=model)


#: The record Claude Code 2.1.332 appends when the model ends a conversation.
ENDED_BY_MODEL = "ended-by-model"
#: What Claude Code 2.1.332 says when asked to continue one.
ENDED_MESSAGE = "Claude ended this conversation. Start a new session to continue."


def ended_by_model(record: Any, session_id: str | None) -> bool:
    """Does ``record`` end the session ``session_id`` (None: whatever its id), as Claude
    Code 2.1.332 reads it? An ``ended-by-model`` record with a non-empty ``sessionId``
    marks that session ended (its loader keeps the set of such ids; any one record is
    enough, wherever it is in the file)."""
    if not isinstance(record, dict) or record.get("type") != ENDED_BY_MODEL:
        return False
    sid = record.get("sessionId")
    return isinstance(sid, str) and sid != "" and (session_id is None or sid == session_id)


def build(session: Session, *, on_disk: Container[str] | None = None, sentinel: bool = True) -> Conversation:
    """The conversation a resume of ``session`` sends, and where to continue it.

    ``on_disk``: the uuids written in the file; the continuation leaf is one of them
    (entries the in-memory repair added exist only in memory: chaining onto one would
    leave the next line's ``parentUuid`` pointing nowhere in the file).
    """
    chain = session.conversation()
    ix = session.index
    nodes = session.nodes
    leaf = continuation_leaf(
        chain,
        ix.parent,
        lambda i: nodes[i].record["uuid"],
        lambda i: bool(ix.flags[i] & (USER | ASSISTANT)),
        ix.find,
        on_disk,
    )
    return assemble(chain, leaf, session.session_id, sentinel=sentinel)


def assemble(
    chain: Sequence[Entry], leaf_uuid: str | None, session_id: str | None, *, sentinel: bool = True
) -> Conversation:
    """The `Conversation` of conversation entries already in order (`build`, `quickchain`)."""
    messages, notes = api_messages(chain, sentinel=sentinel)
    return Conversation(
        messages=messages,
        leaf_uuid=leaf_uuid,
        model=last_model(chain),
        session_id=session_id,
        cwd=_last_str(chain, "cwd"),
        git_branch=_last_str(chain, "gitBranch"),
        version=_last_str(chain, "version"),
        notes=tuple(notes),
        entries=tuple(chain),
        sentinel=sentinel,
    )


def continuation_leaf(
    chain: Sequence[Entry],
    parent: Sequence[int],
    uuid_of: Callable[[int], str],
    is_message: Callable[[int], bool],
    find: Callable[[str], int | None],
    on_disk: Container[str] | None = None,
) -> str | None:
    """The uuid the next entry's ``parentUuid`` names (module docstring, last paragraph).

    ``parent[i]`` is node ``i``'s parent index (negative: none); nodes are in file order.
    """
    ok = (lambda u: True) if on_disk is None else on_disk.__contains__
    last: str | None = None
    for e in reversed(chain):
        if e.uuid is not None and ok(e.uuid):
            last = e.uuid
            break
    leaf = find(last) if last is not None else None
    if leaf is None:
        return last
    n = len(parent)
    has_child = bytearray(n)
    for p in parent:
        if p >= 0:
            has_child[p] = 1
    best = leaf
    for t in range(leaf + 1, n):
        if has_child[t] or not ok(uuid_of(t)):
            continue
        # Only entries that are not messages, all in the file, may lie between.
        i, steps = t, 0
        while i >= 0 and steps <= n:
            if i == leaf:
                best = t
                break
            if is_message(i) or not ok(uuid_of(i)):
                break
            i = parent[i]
            steps += 1
    return uuid_of(best)


def last_model(entries: Sequence[Entry]) -> str | None:
    """The model of the last real (not synthetic) assistant message."""
    for e in reversed(entries):
        if e.type != "assistant":
            continue
        m = e.message
        model = m.get("model") if m is not None else None
        if isinstance(model, str) and model and model != SYNTHETIC_MODEL:
            return model
    return None


def _last_str(entries: Sequence[Entry], key: str) -> str | None:
    for e in reversed(entries):
        v = e.record.get(key)
        if isinstance(v, str):
            return v
    return None


# --- the rebuild ------------------------------------------------------------------------


@dataclass(slots=True)
class _Msg:
    role: str
    blocks: list[Any]
    message_id: str | None  # assistant: the response id; user: None
    uuid: str | None  # the last entry merged in
    string: str | None = None  # a lone string content, sent as a string (as Claude Code does)
    #: thinking blocks left out for the request's model: the message still counts as one
    #: of thinking only for rule 6 (both CLIs drop it rather than send "(no content)")
    thinking_left_out: int = 0


def api_messages(
    entries: Iterable[Entry], *, sentinel: bool = True, model: str | None = None
) -> tuple[list[Message], list[Note]]:
    """Rules 1-7 of the module docstring over conversation entries in order; with
    ``model``, only the thinking blocks that model wrote (rule 4)."""
    notes: list[Note] = []
    entries = list(entries)
    # Rule 7 looks at the last user or assistant entry: slash-command output written after
    # it (system/local_command lines) comes after the sentinel (Claude Code 2.1.332 puts
    # "No response requested." right after that entry).
    cut = _first_trailing_output(entries)
    head, rest = entries[:cut], entries[cut:]
    msgs = _pipeline(head, notes, model)
    tail = _pipeline(rest, notes, model) if rest else []
    if sentinel and msgs and msgs[-1].role == "user" and not _ends_on_a_command(head):
        notes.append(Note("no-response-sentinel", msgs[-1].uuid))
        msgs.append(_Msg("assistant", [_text(NO_RESPONSE_REQUESTED)], None, None))
    for m in tail:
        if m.role == "user" and msgs and msgs[-1].role == "user":
            _add_user(msgs, m.blocks, None, m.uuid)
        else:
            msgs.append(m)
    return [_render(m) for m in msgs], notes


def _pipeline(entries: list[Entry], notes: list[Note], model: str | None) -> list[_Msg]:
    """Rules 1-6 over entries in order."""
    msgs = _group(entries, notes, model)
    msgs = _api_rules(msgs, notes)
    msgs = _pair_tools(msgs, notes)
    return _drop_empty(msgs, notes)


def _first_trailing_output(entries: Sequence[Entry]) -> int:
    """Where the slash-command output written after the last user or assistant entry
    begins (the first such system/local_command line); ``len(entries)`` when there is none."""
    last = _last_message_entry(entries)
    for i in range(0 if last is None else last + 1, len(entries)):
        rec = entries[i].record
        content = rec.get("content")
        if (
            rec.get("type") == "system"
            and rec.get("subtype") == "local_command"
            and isinstance(content, str)
            and content
        ):
            return i
    return len(entries)


def _last_message_entry(entries: Sequence[Entry]) -> int | None:
    """The index of the last main-chain user or assistant entry."""
    for i in range(len(entries) - 1, -1, -1):
        rec = entries[i].record
        if rec.get("type") in ("user", "assistant") and rec.get("isSidechain") is not True:
            return i
    return None


#: How Claude Code 2.1.332 reads a user line's text (its last text block, or the string):
#: the lines a slash command writes.
_COMMAND_LINES = (
    ("<command-name>", "record"),
    ("<local-command-stdout>", "output"),
    ("<local-command-stderr>", "output"),
    ("<local-command-caveat>", "caveat"),
)


def _command_kind(rec: Mapping[str, Any]) -> str | None:
    if rec.get("type") != "user" or "promptSource" in rec:
        return None
    msg = rec.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    text: Any = content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        text = texts[-1] if texts else None
    meta = rec.get("isMeta") is True
    if isinstance(text, str):
        for prefix, kind in _COMMAND_LINES:
            if text.startswith(prefix):
                # A caveat counts only as the meta line Claude Code writes.
                return None if kind == "caveat" and not meta else kind
        if not meta and text.strip().startswith("/"):
            return "bare"  # a slash command typed as a prompt, recorded as written
    return None


def _ends_on_a_command(entries: Sequence[Entry]) -> bool:
    """Claude Code 2.1.332 puts no "No response requested." after a slash command's own
    lines: when the last message is its ``<command-name>`` line (or the command's output,
    or a typed ``/command``) and, going back over the command's lines, its meta
    ``<local-command-caveat>`` comes first (for a typed command, one not older than it).
    2.1.197 puts one there all the same."""
    i = _last_message_entry(entries)
    if i is None or _command_kind(entries[i].record) is None:
        return False
    seen_record = False
    all_meta = True
    typed_at: str | None = None
    for e in reversed(entries[: i + 1]):
        rec = e.record
        if rec.get("type") not in ("user", "assistant"):
            continue
        kind = _command_kind(rec)
        if kind == "caveat":
            if typed_at is None:
                return True
            at = _instant(rec.get("timestamp"))
            since = _instant(typed_at)
            return at is not None and since is not None and at >= since
        if kind is None or seen_record:
            break
        seen_record = kind in ("record", "bare")
        if kind == "bare":
            ts = rec.get("timestamp")
            typed_at = ts if isinstance(ts, str) else ""
        all_meta = all_meta and rec.get("type") == "user" and rec.get("isMeta") is True
    return all_meta


def _instant(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _api_rules(msgs: list[_Msg], notes: list[Note]) -> list[_Msg]:
    """Rule 8: the block-level rules of the API (`api_rules`) and unique tool ids, fixed
    as ``tt repair`` fixes them."""
    probs = [0 if m.string is not None else content_problems(m.blocks, m.role == "assistant") for m in msgs]
    # Past MANY_IMAGES images in the request, 2000 px is the limit (WIDE_IMAGE).
    wide = WIDE_IMAGE if sum(p >> IMAGES_SHIFT for p in probs) + 0 > MANY_IMAGES else 0
    seen: set[str] = set()  # every tool_use id sent so far
    renames: IdRenames = {}  # a duplicate call's new id, for its result in the next message
    as_text: set[str] = set()  # calls kept as text: their results become text too
    bad_ids: list[_Msg] = []  # messages with tool ids the API refuses: renamed last (below)
    for m, p in zip(msgs, probs, strict=True):
        bits = p & RULE_MASK & ~WIDE_IMAGE | (p & wide)
        if bits & BAD_TOOL_ID:
            bad_ids.append(m)
            _rule_notes(notes, m.uuid, BAD_TOOL_ID)
            bits &= ~BAD_TOOL_ID
        if m.string is not None:
            if "\x00" in m.string:
                m.string = fix_string(m.string)
                m.blocks = [_text(m.string)]
                notes.append(Note("nul-in-content", m.uuid))
            continue
        if m.role == "user":
            if renames:
                m.blocks = rename_ids(m.blocks, {}, renames)
                renames = {}
            if as_text or bits:
                m.blocks = fix_content(m.blocks, bits, as_text)
                as_text = set()
                _rule_notes(notes, m.uuid, bits)
            continue
        if bits or any(_blank(b) for b in m.blocks):
            _rule_notes(notes, m.uuid, bits)
            bits |= BLANK_TEXT  # blank text: rule 6's filter, per block (both CLIs drop them)
            as_text = set(long_named_calls(m.blocks)) if bits & LONG_TOOL_NAME else set()
            before = sum(1 for b in m.blocks if b.get("type") in _THINKING)
            fixed = fix_content(m.blocks, bits)
            m.thinking_left_out += before - sum(1 for b in fixed if b.get("type") in _THINKING)
            if fixed or m.thinking_left_out:
                m.blocks = fixed  # else blank text only: rule 6 drops the message
        else:
            as_text = set()
        here: dict[str, int] = {}  # calls of this message with each id so far
        for k, b in enumerate(m.blocks):
            if b.get("type") != "tool_use" or not isinstance(b.get("id"), str):
                continue
            u = b["id"]
            nth = here.get(u, 0)
            here[u] = nth + 1
            if u in seen:
                new = renamed_id(u, seen)
                m.blocks[k] = {**b, "id": new}
                # The result in the next message that answers this call: the nth naming u
                # (a message's two calls sharing an id keep their results apart).
                renames[(u, nth)] = new
                notes.append(Note("tool-use-id-duplicate", m.uuid, f"{u} -> {new}"))
                u = new
            seen.add(u)
    # Last, as repair does it: the duplicate renames and the calls kept as text above name
    # blocks by their old ids; `valid_tool_id` is a function of the id, so a call and its
    # result get the same new one.
    for m in bad_ids:
        m.blocks = fix_content(m.blocks, BAD_TOOL_ID)
    return msgs


def _rule_notes(notes: list[Note], uuid: str | None, bits: int) -> None:
    """One note per rule fixed, named by its `tt validate` code."""
    for bit, (code, _) in CODE_OF_BIT.items():
        if bits & bit or (bit == HUGE_IMAGE and bits & WIDE_IMAGE):
            notes.append(Note(code, uuid))


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _foreign_thinking(e: Entry, model: str) -> bool:
    """Does ``e`` hold a thinking block that a request to ``model`` must leave out?"""
    if e.type != "assistant":
        return False
    msg = e.message
    content = msg.get("content") if msg is not None else None
    if not isinstance(content, list) or sends_thinking(model, msg.get("model") if msg is not None else None):
        return False
    return any(isinstance(b, dict) and b.get("type") in _THINKING for b in content)


def _group(entries: Iterable[Entry], notes: list[Note], model: str | None = None) -> list[_Msg]:
    """Entries to messages (rules 1-4); pairing and emptiness come after."""
    out: list[_Msg] = []
    queued: list[dict[str, Any]] = []  # queued_command reminders waiting for a user message
    mids: set[str] = set()
    too_long: Note | None = None  # Claude Code's persisted "Prompt is too long", when last
    boundary_ts: Any = None
    for e in entries:
        rec = e.record
        t = rec.get("type")
        # Progress and most system entries are on the chain but never sent: out first.
        if t == "progress" or rec.get("isSidechain") is True:
            continue
        uid = rec.get("uuid")
        uuid = uid if isinstance(uid, str) else None
        if t == "attachment":
            reminder = _queued_command(rec)
            if reminder is not None:
                if out and out[-1].role == "user":
                    _add_user(out, [reminder], None, None)
                else:
                    queued.append(reminder)
            continue
        if t == "system":
            if rec.get("subtype") == "compact_boundary":
                boundary_ts = rec.get("timestamp")
                too_long = None
            content = rec.get("content")
            if rec.get("subtype") == "local_command" and isinstance(content, str) and content:
                _add_user(out, [_text(content)], content, uuid)
            continue
        if t != "user" and t != "assistant":
            continue
        msg = rec.get("message")
        if not isinstance(msg, dict):
            continue
        if t == "assistant" and rec.get("isApiErrorMessage") is True:
            said = prompt_too_long(rec)
            if said is not None and refused_since(rec, boundary_ts):
                too_long = Note("prompt-too-long", uuid, said)
            continue
        if t == "assistant":
            too_long = None  # a response after it: the history fitted again
        content = msg.get("content")
        dropped = 0
        if isinstance(content, str):
            blocks: list[Any] = [_text(content)]
            string: str | None = content
        elif isinstance(content, list):
            blocks = [_clean(b) if b.get("type") == "tool_use" else b for b in content if isinstance(b, dict)]
            string = None
            if model is not None and t == "assistant" and not sends_thinking(model, msg.get("model")):
                kept = [b for b in blocks if b.get("type") not in _THINKING]
                dropped = len(blocks) - len(kept)
                blocks = kept
        else:
            continue
        if t == "user":
            _add_user(out, blocks + queued, string if not queued else None, uuid)
            queued = []
            continue
        m_id = msg.get("id")
        mid = m_id if isinstance(m_id, str) else None
        prev = out[-1] if out else None
        if mid is not None and prev is not None:
            if prev.role == "assistant" and prev.message_id == mid:
                prev.blocks.extend(blocks)
                prev.string = None
                prev.uuid = uuid
                prev.thinking_left_out += dropped
                continue
            # The same response with its first calls' results written between its lines.
            if (
                prev.role == "user"
                and len(out) >= 2
                and out[-2].message_id == mid
                and all(b.get("type") == "tool_result" for b in prev.blocks)
            ):
                out[-2].blocks.extend(blocks)
                out[-2].string = None
                out[-2].thinking_left_out += dropped
                continue
        if mid is not None:
            if mid in mids:
                # Lines of one response split apart by a real message (tt repair regroups them).
                notes.append(Note("split-message", uuid, mid))
            mids.add(mid)
        out.append(_Msg("assistant", blocks, mid, uuid, string, dropped))
    if queued:
        notes.append(Note("queued-command-dropped", None, f"{len(queued)} after the last user message"))
    if too_long is not None:
        notes.append(too_long)
    return out


def _queued_command(rec: Mapping[str, Any]) -> dict[str, Any] | None:
    att = rec.get("attachment")
    if not isinstance(att, dict) or att.get("type") != "queued_command":
        return None
    prompt = att.get("prompt")
    if isinstance(prompt, list):
        prompt = "\n".join(
            b["text"] for b in prompt if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    return _text(
        f"<system-reminder>\nThe user sent a new message while you were working:\n{prompt}\n</system-reminder>"
    )


def _add_user(out: list[_Msg], blocks: list[Any], string: str | None, uuid: str | None) -> None:
    prev = out[-1] if out else None
    if prev is not None and prev.role == "user":
        prev.blocks.extend(blocks)
        prev.string = None
        if uuid is not None:
            prev.uuid = uuid
    else:
        out.append(_Msg("user", blocks, None, uuid, string))


def _clean(block: dict[str, Any]) -> dict[str, Any]:
    """A ``tool_use`` block as sent (rule 4); the record's own dict is never changed."""
    name = block.get("name")
    if "caller" in block or name in _RENAMED_TOOLS:
        block = {k: v for k, v in block.items() if k != "caller"}
        if isinstance(name, str) and name in _RENAMED_TOOLS:
            block["name"] = _RENAMED_TOOLS[name]
    return block


def _uses(m: _Msg) -> list[str]:
    return [b["id"] for b in m.blocks if b.get("type") == "tool_use" and isinstance(b.get("id"), str)]


def _pair_tools(msgs: list[_Msg], notes: list[Note]) -> list[_Msg]:
    """Rule 5: every call answered in the next message, every result answering a call."""
    out: list[_Msg] = []
    pending: list[str] = []  # calls of the assistant message just emitted
    for m in msgs:
        if m.role == "assistant":
            if pending:
                # Two assistant messages in a row, the first with calls: answer them between.
                out.append(_answer(_Msg("user", [], None, None), pending, out[-1].uuid, notes))
            out.append(m)
            pending = _uses(m)
            continue
        if pending:
            m = _answer(m, pending, out[-1].uuid, notes)
            pending = []
        elif any(b.get("type") == "tool_result" for b in m.blocks):
            for b in m.blocks:
                if b.get("type") == "tool_result":
                    notes.append(Note("orphan-tool-result", m.uuid, str(b.get("tool_use_id"))))
            m.blocks = [b for b in m.blocks if b.get("type") != "tool_result"] or [_text(NO_CONTENT)]
            m.string = None
        out.append(m)
    if pending:
        out.append(_answer(_Msg("user", [], None, None), pending, out[-1].uuid, notes))
    return out


def _answer(user: _Msg, uses: list[str], call_uuid: str | None, notes: list[Note]) -> _Msg:
    """``user`` with exactly one result per call of ``uses`` first (in the order written;
    synthetic ones for calls never answered), then its other blocks."""
    want = set(uses)
    results: list[dict[str, Any]] = []
    rest: list[Any] = []
    seen: set[str] = set()
    for b in user.blocks:
        if b.get("type") != "tool_result":
            rest.append(b)
            continue
        tid = b.get("tool_use_id")
        if isinstance(tid, str) and tid in want and tid not in seen:
            seen.add(tid)
            results.append(b)
        else:
            notes.append(Note("orphan-tool-result", user.uuid, str(tid)))
    for u in uses:
        if u not in seen:
            seen.add(u)
            notes.append(Note("synthetic-tool-result", call_uuid, u))
            results.append(
                {
                    "type": "tool_result",
                    "content": INTERRUPTED_TOOL_RESULT,
                    "is_error": True,
                    "tool_use_id": u,
                }
            )
    if results:
        user.string = None
    user.blocks = results + rest
    return user


def _blank(b: Any) -> bool:
    return b.get("type") == "text" and not str(b.get("text", "")).strip()


def _droppable_assistant(m: _Msg) -> bool:
    return bool(m.blocks or m.thinking_left_out) and all(
        b.get("type") in _THINKING or _blank(b) for b in m.blocks
    )


def _drop_empty(msgs: list[_Msg], notes: list[Note]) -> list[_Msg]:
    """Rule 6."""
    out: list[_Msg] = []
    for m in msgs:
        if m.role == "assistant":
            if _droppable_assistant(m):
                thinking = m.thinking_left_out > 0 or any(b.get("type") in _THINKING for b in m.blocks)
                notes.append(Note("orphan-thinking" if thinking else "empty-message", m.uuid, "assistant"))
                continue
            if not m.blocks:
                m.blocks = [_text(NO_CONTENT)]
            if m.thinking_left_out:
                notes.append(Note("thinking-not-sent", m.uuid, str(m.thinking_left_out)))
        elif all(_blank(b) for b in m.blocks):
            notes.append(Note("empty-message", m.uuid, "user"))
            continue
        # A dropped message can leave two user messages side by side: merge them.
        if out and m.role == "user" and out[-1].role == "user":
            prev = out[-1]
            results = [b for b in m.blocks if b.get("type") == "tool_result"]
            prev.blocks = (
                [b for b in prev.blocks if b.get("type") == "tool_result"]
                + results
                + [b for b in prev.blocks if b.get("type") != "tool_result"]
                + [b for b in m.blocks if b.get("type") != "tool_result"]
            )
            prev.string = None
            prev.uuid = m.uuid or prev.uuid
            continue
        out.append(m)
    return out


def _render(m: _Msg) -> Message:
    if m.string is not None and len(m.blocks) == 1:
        return {"role": m.role, "content": m.string}
    return {"role": m.role, "content": m.blocks}


def user_message(prompt: str | Sequence[Mapping[str, Any]]) -> Message:
    """The API message of a new prompt (a string, or content blocks)."""
    if isinstance(prompt, str):
        return {"role": "user", "content": prompt}
    return {"role": "user", "content": [dict(b) for b in prompt]}
