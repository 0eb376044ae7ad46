"""Issue 18 item 4: Claude Code's own ids are not secrets, and a value is redacted
everywhere in a file or nowhere.

- Anthropic-style ids (``<prefix>_01<base58>``: ``agent_msg_01…`` in ``toolUseID``,
  ``toolu_01…``, ``req_011C…``) are ids wherever they appear, for the high-entropy family
  only: a provider key or a secret assignment of that shape is still found.
- Structural fields (`redact.STRUCTURAL_KEYS`) are skipped where Claude Code writes them,
  not inside a tool's ``input`` or below ``toolUseResult``'s top level.
- `redact.collect` + `Known`: a value seen in a structural field is an id everywhere in the
  file; a value found as a secret once is replaced at every occurrence.
- On every real fixture: no structural value is touched and no high-entropy finding.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.redact.test_redact import DOTENV, DOTENV_SECRETS, PLANTED, S332, _plant
from tests.support.paths import REAL
from transcript_tools.edge.reader import iter_lines
from transcript_tools.redact.core import collect, redact_lines, redact_record
from transcript_tools.redact.files import redact_to, scan_file
from transcript_tools.redact.rules import ANTHROPIC_ID, Known, _high_entropy, find_secrets
from transcript_tools.validate.files import validate_path

B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
#: A progress record's toolUseID of the shape 2.1.x writes, random enough that the
#: entropy rule alone flags it (about 1 in 5 random ``agent_msg_01…`` ids is: the
#: "some replaced and not others" of the issue).
FLAGGED_BY_ENTROPY = "agent_msg_01HSJ6EKBQ9mkiV67qvMvkHr"
#: Ids as real sessions write them (fixtures/real and public sessions, 2.1.17 to 2.1.73).
REAL_IDS = (
    "agent_msg_01Kkt8em41UqsLVGUzzwMeUT",  # fixtures/real v2.1.17 toolUseID
    "agent_msg_01717ioE4NowkiGzAEVK5H3W",
    "toolu_01PL2XFV83PiqcNDb6Anv4Dh",
    "req_011CYx9am7zWCnretjSrbJeC",
    "msg_013a13makKr7N19Xg6cuFoeK",
)
KEY = "Zq8vN3mK1pL0rT7yXc5WbA2sD4fG6hJ9kL0"  # a random-looking 35-char key (made up)


def test_the_entropy_rule_alone_would_flag_an_agent_msg_id() -> None:
    # Why the id rule is needed: without it this id is a "high-entropy-string".
    assert _high_entropy(FLAGGED_BY_ENTROPY)
    assert ANTHROPIC_ID.fullmatch(FLAGGED_BY_ENTROPY)


@pytest.mark.parametrize(
    "ident",
    (
        FLAGGED_BY_ENTROPY,
        *REAL_IDS,
        "toolu_vrtx_01HSJ6EKBQ9mkiV67qvMvkHr",
        "srvtoolu_01HSJ6EKBQ9mkiV67qvMvkHr",
    ),
)
@pytest.mark.parametrize(
    "context",
    [
        "{}",
        "hook output: toolUseID={} done",
        "/tmp/claude-1000/-home-dev-app/tasks/{}.output",
        '{{"toolUseID":"{}","parentToolUseID":"toolu_0191uYUdm2cWHBw3zNfU9egS"}}',
    ],
)
def test_anthropic_ids_are_ids_wherever_they_appear(ident: str, context: str) -> None:
    assert find_secrets(context.format(ident)) == []


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["agent_msg", "toolu", "msg", "req", "srvtoolu", "toolu_vrtx", "file"]),
    st.text(alphabet=B58, min_size=22, max_size=24),
)
def test_no_anthropic_shaped_id_is_ever_flagged(prefix: str, body: str) -> None:
    assert find_secrets(f"id {prefix}_01{body} in text") == []


def test_a_key_glued_to_an_id_is_still_found() -> None:
    spans = find_secrets(f"x {FLAGGED_BY_ENTROPY}-{KEY} y")
    text = f"x {FLAGGED_BY_ENTROPY}-{KEY} y"
    assert [(text[s.start : s.end], s.kind) for s in spans] == [(KEY, "high-entropy-string")]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("stripe sk_live_01HSJ6EKBQ9mkiV67qvMvkHrXy in the log", "stripe-key"),
        ("export API_KEY=key_01HSJ6EKBQ9mkiV67qvMvkHr", "secret-assignment"),
        ("curl -H 'Authorization: Bearer tok_01HSJ6EKBQ9mkiV67qvMvkHr' https://x", "bearer-token"),
        ('{"password": "agent_msg_01HSJ6EKBQ9mkiV67qvMvkHr"}', "secret-assignment"),
    ],
)
def test_secrets_of_the_id_shape_are_still_found_by_their_own_rule(text: str, kind: str) -> None:
    assert [s.kind for s in find_secrets(text)] == [kind]


def test_known_ids_are_never_secrets_and_known_secrets_always_are() -> None:
    known = Known(ids=frozenset({KEY}), secrets=(("hunter2-Qx9", "secret-assignment"),))
    assert find_secrets(f"key {KEY} end") != [] and find_secrets(f"key {KEY} end", known) == []
    text = "mysql -p hunter2-Qx9 and again hunter2-Qx9"
    assert find_secrets(text) == []
    spans = find_secrets(text, known)
    assert [text[s.start : s.end] for s in spans] == ["hunter2-Qx9"] * 2
    assert {s.kind for s in spans} == {"secret-assignment"}


# --- where structural fields are, and where they are not -----------------------------


def _progress(tool_use_id: str, text: str) -> dict[str, Any]:
    return {
        "parentUuid": "4cd0c8e6-36cd-4af9-9a2d-9191b504fada",
        "type": "progress",
        "data": {
            "type": "agent_progress",
            "agentId": "a6f6f2bba8a080f95",
            "message": {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": tool_use_id, "content": text}],
                },
                "uuid": "dc63c38d-8b2f-4e57-b2dd-092d459b5da1",
            },
        },
        "toolUseID": tool_use_id,
        "parentToolUseID": tool_use_id,
        "sourceToolUseID": tool_use_id,
        "uuid": "ee909409-22b6-4d27-b9f4-8b6b765b30da",
    }


def test_structural_fields_are_skipped_in_records_and_nested_progress_records() -> None:
    rec = _progress(KEY, "nothing here")
    rec["compactMetadata"] = {"preservedSegment": {"headUuid": KEY, "anchorUuid": KEY, "tailUuid": KEY}}
    rec["microcompactMetadata"] = {"compactedToolIds": [KEY]}
    new, found = redact_record(rec)
    assert new is rec and found == []


def test_redacted_thinking_data_is_opaque_like_a_signature() -> None:
    rec = {"type": "assistant", "message": {"content": [{"type": "redacted_thinking", "data": f"x {KEY} y"}]}}
    new, found = redact_record(rec)
    assert new is rec and found == []
    assert find_secrets(f"x {KEY} y") != []  # the same text elsewhere would be flagged


def test_keys_in_tool_input_and_tool_output_are_data_not_structure() -> None:
    rec = {
        "type": "assistant",
        "message": {
            "id": KEY,
            "content": [
                {
                    "type": "tool_use",
                    "id": KEY,
                    "name": "mcp__db__query",
                    "input": {"id": KEY, "signature": KEY},
                }
            ],
        },
        "toolUseResult": {"agentId": KEY, "structuredContent": {"session_id": KEY, "token": "x"}},
    }
    _, found = redact_record(rec)
    assert sorted(w for _, w in found) == [
        "message.content[0].input.id",
        "message.content[0].input.signature",
        "toolUseResult.structuredContent.session_id",
    ]


# --- one file, two passes ------------------------------------------------------------


def _lines(recs: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in recs)


def test_a_value_in_a_structural_field_is_an_id_everywhere_in_the_file(tmp_path: Path) -> None:
    # The same value as a toolUseID and quoted in tool output: untouched in both places
    # (without the file's context the quote alone would be redacted: the inconsistency).
    src = tmp_path / "s.jsonl"
    quote = {"type": "user", "message": {"role": "user", "content": f"the hook printed {KEY}"}, "uuid": "u2"}
    src.write_bytes(_lines([quote, _progress(KEY, "ok")]))
    assert [f.kind for r in redact_lines(iter_lines(src)) for f in r.findings] == ["high-entropy-string"]
    res = redact_to(src, tmp_path / "out.jsonl")
    assert res.findings == []
    assert (tmp_path / "out.jsonl").read_bytes() == src.read_bytes()


def test_a_secret_found_once_is_replaced_at_every_occurrence(tmp_path: Path) -> None:
    # Found as an assignment in a .env read; later bare in a Bash command and in free
    # text, where no rule alone would find it. Every occurrence goes.
    secret = "Tr0ub4dor-3xq-horse"
    recs = [
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": f"DB_PASSWORD={secret}\nDEBUG=1\n",
                    }
                ],
            },
            "uuid": "u1",
        },
        {
            "type": "assistant",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_2",
                        "name": "Bash",
                        "input": {"command": f"psql -W {secret} -h db"},
                    }
                ]
            },
            "uuid": "u2",
        },
        {"type": "user", "message": {"role": "user", "content": f"why does {secret} fail?"}, "uuid": "u3"},
    ]
    src = tmp_path / "s.jsonl"
    src.write_bytes(_lines(recs))
    assert sum(len(r.findings) for r in redact_lines(iter_lines(src))) == 1  # line by line: 1 of 3
    out = tmp_path / "out.jsonl"
    res = redact_to(src, out)
    assert Counter(f.line for f in res.findings) == Counter({1: 1, 2: 1, 3: 1})
    assert secret.encode() not in out.read_bytes()
    assert scan_file(src).findings == res.findings  # the report says what -o does


def test_planted_real_shaped_secrets_are_all_found_with_the_file_context(tmp_path: Path) -> None:
    # User text, a Bash command, tool output, a .env read, a private key — in a real
    # 2.1.332 session — through the two-pass file path.
    src = tmp_path / S332.name
    planted = _plant(S332, src)
    out = tmp_path / "out.jsonl"
    res = redact_to(src, out)
    kinds = Counter(f.kind for f in res.findings)
    assert kinds["github-token"] == 1 and kinds["openai-api-key"] == 1 and kinds["private-key"] == 1
    assert kinds["aws-access-key"] == 2 and kinds["high-entropy-string"] == 0
    text = out.read_text()
    for s in [*planted.values(), *DOTENV_SECRETS, PLANTED["aws-access-key"]]:
        assert s not in text
    assert validate_path(out).errors == 0
    assert DOTENV.splitlines()[3] in text  # DEBUG=true kept


def test_a_plain_word_password_is_replaced_where_found_only(tmp_path: Path) -> None:
    # "postgres:postgres@" (as in fixtures/real v1.0.51): the password goes, the word
    # "postgres" elsewhere (a scheme, a command) stays; so does "postgresql".
    recs = [
        {
            "type": "user",
            "message": {"role": "user", "content": "DATABASE_URL=postgres://postgres:postgres@localhost/db"},
            "uuid": "u1",
        },
        {
            "type": "user",
            "message": {"role": "user", "content": "start postgres, then run psql; postgresql is up"},
            "uuid": "u2",
        },
    ]
    src = tmp_path / "s.jsonl"
    src.write_bytes(_lines(recs))
    out = tmp_path / "out.jsonl"
    res = redact_to(src, out)
    assert [(f.line, f.kind) for f in res.findings] == [(1, "url-password")]
    assert "postgres://postgres:[REDACTED:url-password]@localhost" in out.read_text()
    assert out.read_bytes().splitlines()[1] == src.read_bytes().splitlines()[1]


# --- the real fixtures -----------------------------------------------------------------

#: Structural fields, as the issue names them (an independent list, not the module's).
_TOP = (
    "uuid",
    "parentUuid",
    "leafUuid",
    "logicalParentUuid",
    "sessionId",
    "toolUseID",
    "parentToolUseID",
    "sourceToolUseID",
    "sourceToolAssistantUUID",
    "requestId",
    "agentId",
    "promptId",
    "messageId",
)


def _structural(rec: Any, out: list[str]) -> None:
    if not isinstance(rec, dict):
        return
    out.extend(v for k in _TOP if isinstance(v := rec.get(k), str))
    msg = rec.get("message")
    if isinstance(msg, dict):
        if isinstance(msg.get("id"), str):
            out.append(msg["id"])
        for b in msg.get("content") if isinstance(msg.get("content"), list) else ():
            if isinstance(b, dict):
                out.extend(v for k in ("id", "tool_use_id", "signature") if isinstance(v := b.get(k), str))
    snap = rec.get("snapshot")
    if isinstance(snap, dict) and isinstance(snap.get("trackedFileBackups"), dict):
        out.extend(
            b["backupFileName"]
            for b in snap["trackedFileBackups"].values()
            if isinstance(b, dict) and isinstance(b.get("backupFileName"), str)
        )
    data = rec.get("data")
    if isinstance(data, dict):
        _structural(data.get("message"), out)


def _real_fixtures() -> list[Path]:
    return sorted(REAL.rglob("*.jsonl"))


@pytest.mark.parametrize("path", _real_fixtures(), ids=lambda p: str(p.relative_to(REAL)))
def test_no_structural_value_of_a_real_fixture_is_touched(path: Path, tmp_path: Path) -> None:
    values: list[str] = []
    for ln in iter_lines(path):
        for e in ln.entries:
            _structural(e.record, values)
    out = tmp_path / "out.jsonl"
    res = redact_to(path, out)
    assert not any(f.kind == "high-entropy-string" for f in res.findings)
    before, after = path.read_bytes(), out.read_bytes()
    for v in set(values):
        b = json.dumps(v)[1:-1].encode()
        assert after.count(b) == before.count(b), v


def test_collect_knows_the_ids_of_a_real_agent_progress_session() -> None:
    path = REAL / "v2.1.17-agent-progress-ends-mid-tool.jsonl"
    known = collect(iter_lines(path))
    assert known.secrets == ()
    # Its agent_msg id sits in toolUseID, and is no secret anywhere.
    assert "agent_msg_01Kkt8em41UqsLVGUzzwMeUT" in path.read_text()
    assert all(not r.findings for r in redact_lines(iter_lines(path), known))


def test_random_agent_msg_ids_measured() -> None:
    # The rate behind the "some replaced, not others": the entropy rule alone
    # flags about a fifth of random agent_msg ids; with the id rule, none.
    rng = random.Random(18)
    ids = ["agent_msg_01" + "".join(rng.choice(B58) for _ in range(22)) for _ in range(2000)]
    assert 300 < sum(map(_high_entropy, ids)) < 600
    assert not any(find_secrets(i) for i in ids)
