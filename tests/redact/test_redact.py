"""`redact_rules` (the detectors) and `redact` (the walk over records): planted secrets
of many providers are found and replaced with typed placeholders; ordinary transcript
text, ids, paths and code are left alone; untouched lines keep their bytes; the false
positives on every real fixture are measured (and pinned)."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.paths import REAL
from transcript_tools.edge.reader import iter_lines
from transcript_tools.redact.core import SKIPPED_KEYS, redact_line, redact_lines, redact_record
from transcript_tools.redact.files import scan_file
from transcript_tools.redact.rules import KINDS, find_secrets, redact_text, secret_key, shannon_entropy
from transcript_tools.validate.files import validate_path

S332 = REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"

# Made-up secrets in each provider's format (none is a live credential).
PLANTED: dict[str, str] = {
    "anthropic-api-key": "sk-ant-api03-" + "Qx7vT2pL9mN4bR8s" * 6 + "AA",
    "openai-api-key": "sk-proj-" + "Zx9Yw8Vu7T6s5R4q" * 4,
    "aws-access-key": "AKIAZ3QX7RWTJ4M2PL6Q",
    "github-token": "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2,
    "gitlab-token": "glpat-" + "Xy7Zq2Wm9Kp4Rt6Vb3Nc",
    "slack-token": "xoxb-123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
    "stripe-key": "sk_live_" + "51HqLyjWDarjtT1zdp7dcXyZ",
    "google-api-key": "AIzaSyD-" + "9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "npm-token": "npm_" + "k3Jd9Fh2Lq8Zx5Vb7Nm1Pw4Rt6Yu0Ei2Oa3S",
    "pypi-token": "pypi-AgEIcHlwaS5vcmc" + "CJGM0ZDk1YTk4LTk5ZjQtNDZmNy1hODA3LWI4YzE2MDE0N2VhOAACKlsz",
    "twilio-api-key": "SK" + "3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e",
    "sendgrid-api-key": "SG."
    + "Nq3kVw8XrT2pLm5Zb7Hc1A"
    + "."
    + "Yd4Fg6Jk8Lm0Np2Qr4St6Uv8Wx0Yz2Ab4Cd6Ef8Gh0I",
    "huggingface-token": "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwicm9sZSI6ImFkbWluIn0.Xq7tN2mB9vL4kR8sP1zW6yC3dF5gH0jA",
}
PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDk7hK3sZ9bq0Yz8n2Xw1mVt5Lp4Rc6Jd8Fg0Hi2Kj4QAAAJgAAAAAAAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
DOTENV = (
    "DATABASE_URL=postgresql://app:Tr0ub4dor-3xq@db.internal:5432/prod\n"
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8vN3mK1p\n"
    "SECRET_KEY='django-insecure-9f$kq2@x!7zv'\n"
    "DEBUG=true\n"
    "MAX_TOKENS=4096\n"
)
DOTENV_SECRETS = ("Tr0ub4dor-3xq", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8vN3mK1p", "django-insecure-9f$kq2@x!7zv")


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_each_provider_format_is_found_with_its_kind(kind: str) -> None:
    secret = PLANTED[kind]
    text, kinds = redact_text(f"here is the value {secret} in a sentence")
    assert kinds == [kind]
    assert secret not in text and f"[REDACTED:{kind}]" in text
    assert text.startswith("here is the value ") and text.endswith(" in a sentence")


def test_private_key_block_is_replaced_whole() -> None:
    text, kinds = redact_text("cat ~/.ssh/id_ed25519\n" + PEM + "done")
    assert kinds == ["private-key"]
    assert text == "cat ~/.ssh/id_ed25519\n[REDACTED:private-key]\ndone"


def test_truncated_private_key_is_replaced_to_the_end_of_its_body() -> None:
    body = PEM.split("-----END")[0]
    text, kinds = redact_text(body + "(output truncated)")
    assert kinds == ["private-key"] and "b3BlbnNz" not in text and text.endswith("(output truncated)")


def test_dotenv_file_read_by_a_tool_keeps_keys_and_loses_values() -> None:
    numbered = "".join(f"{i:>6}→{ln}\n" for i, ln in enumerate(DOTENV.splitlines(), 1))  # Read output
    for text in (DOTENV, numbered):
        out, kinds = redact_text(text)
        assert Counter(kinds) == Counter({"url-password": 1, "aws-secret-key": 1, "secret-assignment": 1})
        for s in DOTENV_SECRETS:
            assert s not in out
        assert "DATABASE_URL=postgresql://app:[REDACTED:url-password]@db.internal" in out
        assert "DEBUG=true" in out and "MAX_TOKENS=4096" in out


@pytest.mark.parametrize(
    "text",
    [
        "password = request.form['password']",
        "api_key: string;",
        "const apiKey = process.env.API_KEY",
        "    const secret = await getOrCreateSecretKey()",
        "token: await tokenGenerator.sign(user)",
        "authToken: 'invalid-token',",
        "MAX_TOKENS=4096\ntoken_count: 1234",
        "claude-opus-4-5-20251101 toolu_01ABCdefGHIjklMNOpqrSTUvwx msg_01XyZ8wVuTsRqPoNmLkJiHg",
        "/home/dev/demo-app/src/components/HeaderNavigationBar2Component.tsx",
        "ThisIsAVeryLongIdentifierNameForTesting123 and 4cd0c8e6-36cd-4af9-9a2d-9191b504fada",
        "git rev 43c285d9d48b09bec3125d66d21a63c132f40664 sha512-Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5",
        "export SECRET_KEY=${SECRET_KEY}\nPASSWORD=<your-password>\nAPI_KEY=changeme",
        "postgres://user:password@localhost/db and https://example.com/a:b@c",
        "Connecting with token: eyJhbGciOiJFZERTQSJ9...\nToken: abcDEF123456\u2026",
    ],
)
def test_ordinary_text_code_ids_and_placeholders_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []


def test_secret_key_names() -> None:
    assert (
        secret_key("DB_PASSWORD")
        and secret_key("apiKey")
        and secret_key("client-secret")
        and secret_key("AWS_SECRET_ACCESS_KEY")
    )
    assert (
        not secret_key("MAX_TOKENS")
        and not secret_key("token_count")
        and not secret_key("secretFile")
        and not secret_key("key")
    )


def test_high_entropy_strings_conservatively() -> None:
    assert [s.kind for s in find_secrets("key Zq8vN3mK1pL0rT7yXc5WbA2sD4fG6hJ9kL0 end")] == [
        "high-entropy-string"
    ]
    assert shannon_entropy("aaaa") == 0.0 and shannon_entropy("") == 0.0
    assert find_secrets("x" * 40) == [] and find_secrets("deadbeef" * 6) == []  # no variety / hex


def test_spans_are_sorted_disjoint_and_never_leak_the_value() -> None:
    text = " ".join(PLANTED.values()) + "\n" + DOTENV + PEM
    spans = find_secrets(text)
    assert all(a.end <= b.start for a, b in pairwise(spans))
    assert {s.kind for s in spans} <= KINDS
    assert all(set(s.__slots__) == {"start", "end", "kind"} for s in spans)  # offsets and kinds only


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from([*PLANTED.values(), PEM, DOTENV]), st.text(max_size=40)), max_size=8)
)
def test_redaction_is_idempotent_and_removes_every_planted_secret(parts: list[str]) -> None:
    text = " ".join(parts)
    once, _ = redact_text(text)
    twice, kinds = redact_text(once)
    assert twice == once and kinds == []
    for s in list(PLANTED.values()) + list(DOTENV_SECRETS):
        if s in text:
            assert s not in once


# --- the walk over records ---------------------------------------------------------


def test_ids_signatures_and_image_data_are_not_searched() -> None:
    sig = "EqQBCkYIBxgCKkD" + "Zq8vN3mK1pL0rT7yXc5WbA2sD4fG6hJ9kL0" * 3
    rec = {
        "uuid": "4cd0c8e6-36cd-4af9-9a2d-9191b504fada",
        "message": {
            "id": "msg_" + "Zq8vN3mK1pL0rT7yXc5WbA2sD4fG6hJ9kL0",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": sig},
                {
                    "type": "image",
                    "source": {
                        "type": "base64",
                        "media_type": "image/png",
                        "data": "iVBORw0KGgo" + "Zq8vN3mK1pL0rT7yXc5WbA2sD4fG6hJ9kL0" * 4,
                    },
                },
            ],
        },
    }
    new, found = redact_record(rec)
    assert new is rec and found == []
    assert {"uuid", "signature", "id"} <= SKIPPED_KEYS


def test_record_walk_reaches_tool_inputs_results_nested_blocks_and_tool_use_result() -> None:
    rec = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "token " + PLANTED["github-token"]}],
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "Bash",
                    "input": {"command": "curl -H 'x: " + PLANTED["openai-api-key"] + "'"},
                },
            ],
        },
        "toolUseResult": {"file": {"content": DOTENV}},
    }
    new, found = redact_record(rec)
    assert new is not rec and rec["toolUseResult"]["file"]["content"] == DOTENV  # the input is not mutated
    where = {(k, w) for k, w in found}
    assert ("github-token", "message.content[0].content[0].text") in where
    assert ("openai-api-key", "message.content[1].input.command") in where
    assert ("aws-secret-key", "toolUseResult.file.content") in where
    dumped = json.dumps(new)
    assert all(s not in dumped for s in (PLANTED["github-token"], PLANTED["openai-api-key"], *DOTENV_SECRETS))
    assert list(new) == list(rec)  # key order kept


def test_untouched_lines_keep_their_bytes_and_a_real_session_is_clean() -> None:
    data = S332.read_bytes()
    out = b"".join(r.chunk for r in redact_lines(iter_lines(S332)))
    assert out == data


def _plant(src: Path, dst: Path, *, after_boundary: bool = False) -> dict[str, str]:
    """Copy a real session, planting secrets: a user prompt with a GitHub token, a Bash
    call whose command holds an OpenAI key and whose output holds AWS keys, a Read of a
    .env file (tool_result and toolUseResult), and a private key (in a Write, or with
    ``after_boundary`` — where a resume reads, after the last /compact — in the Bash
    output)."""
    lines = src.read_text().splitlines(keepends=True)
    out: list[str] = []
    planted: dict[str, str] = {}
    live = not after_boundary
    for ln in lines:
        rec = json.loads(ln)
        if rec.get("subtype") == "compact_boundary":
            live = True
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else None
        content = msg.get("content") if msg else None
        prompt = (
            rec.get("type") == "user"
            and isinstance(content, str)
            and not rec.get("isMeta")
            and not rec.get("isCompactSummary")
            and not content.startswith(("<", "TOOL:", "/", "This session"))
        )
        if not live:
            pass
        elif prompt and "prompt" not in planted and (after_boundary or content.startswith("Plain question")):
            msg["content"] = content + " My token is " + PLANTED["github-token"]
            planted["prompt"] = PLANTED["github-token"]
        elif (
            rec.get("type") == "assistant"
            and isinstance(content, list)
            and content
            and content[0].get("name") == "Bash"
            and "bash" not in planted
        ):
            content[0]["input"]["command"] = (
                "OPENAI_API_KEY=" + PLANTED["openai-api-key"] + " " + content[0]["input"]["command"]
            )
            planted["bash"] = PLANTED["openai-api-key"]
        elif (
            rec.get("type") == "user"
            and isinstance(rec.get("toolUseResult"), dict)
            and "stdout" in rec["toolUseResult"]
            and "aws" not in planted
        ):
            leak = f"aws_access_key_id = {PLANTED['aws-access-key']}\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8vN3mK1p"
            if after_boundary:
                leak += "\n" + PEM
                planted["pem"] = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
            rec["toolUseResult"]["stdout"] = leak
            content[0]["content"] = leak
            planted["aws"] = PLANTED["aws-access-key"]
        elif (
            rec.get("type") == "user"
            and isinstance(rec.get("toolUseResult"), dict)
            and rec["toolUseResult"].get("type") == "text"
            and "env" not in planted
        ):
            rec["toolUseResult"]["file"]["filePath"] = (
                rec["toolUseResult"]["file"]["filePath"].rsplit("/", 1)[0] + "/.env"
            )
            rec["toolUseResult"]["file"]["content"] = DOTENV
            content[0]["content"] = "".join(f"{i}\t{x}\n" for i, x in enumerate(DOTENV.splitlines(), 1))
            planted["env"] = DOTENV_SECRETS[1]
        elif (
            rec.get("type") == "assistant"
            and isinstance(content, list)
            and content
            and content[0].get("name") == "Write"
            and "pem" not in planted
        ):
            content[0]["input"]["content"] = PEM
            planted["pem"] = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
        out.append(json.dumps(rec, separators=(",", ":"), ensure_ascii=False) + "\n")
    dst.write_text("".join(out))
    return planted


def test_planted_secrets_in_a_real_session_are_found_replaced_and_it_still_validates(tmp_path: Path) -> None:
    src = tmp_path / S332.name
    planted = _plant(S332, src)
    assert set(planted) == {"prompt", "bash", "aws", "env", "pem"}
    results = list(redact_lines(iter_lines(src)))
    kinds = Counter(f.kind for r in results for f in r.findings)
    assert kinds["github-token"] == 1 and kinds["openai-api-key"] == 1 and kinds["private-key"] == 1
    assert kinds["aws-access-key"] == 2 and kinds["aws-secret-key"] >= 3 and kinds["url-password"] == 2
    out = tmp_path / "redacted.jsonl"
    out.write_bytes(b"".join(r.chunk for r in results))
    text = out.read_text()
    for secret in [*planted.values(), *DOTENV_SECRETS]:
        assert secret not in text
    assert validate_path(src).errors == validate_path(out).errors == 0
    # Lines without a finding are the original bytes.
    orig = src.read_bytes().splitlines(keepends=True)
    new = out.read_bytes().splitlines(keepends=True)
    assert len(orig) == len(new)
    changed = {r.line for r in results if r.findings}
    assert all(orig[i] == new[i] for i in range(len(orig)) if i + 1 not in changed)
    assert len(changed) == 5  # the five planted lines
    # Redacting again finds nothing.
    assert not any(r.findings for r in redact_lines(iter_lines(out)))


def test_damaged_bytes_are_redacted_in_their_raw_text(tmp_path: Path) -> None:
    p = tmp_path / "torn.jsonl"
    good = S332.read_bytes().splitlines(keepends=True)[0]
    p.write_bytes(
        good
        + b'{"type":"user","message":{"content":"key '
        + PLANTED["npm-token"].encode()
        + b" and then the crash"
    )
    results = list(redact_lines(iter_lines(p)))
    assert results[0].chunk == good and not results[0].findings
    assert [f.kind for f in results[1].findings] == ["npm-token"] and results[1].findings[
        0
    ].where == "(damaged bytes)"
    assert PLANTED["npm-token"].encode() not in results[1].chunk and results[1].chunk.endswith(
        b"and then the crash"
    )


# --- false positives on the real fixtures (the numbers the README reports) ---------

#: Findings per real fixture, each checked by hand. v1.0.51: 12, all real credentials —
#: 10 JWTs a local dev server issued (in test output, a test diff and curl commands) and 2
#: passwords in a DATABASE_URL (a .env read by a tool: its tool_result and toolUseResult).
#: Log lines printing a token cut short ("Connecting with token: eyJhbGciOiJFZERTQSJ9...",
#: 10 of them) are not counted: a truncated value is no credential. The 17 other files:
#: no finding at all, so no false positive on the real fixtures.
EXPECTED_FINDINGS = {"v1.0.51-inline-sidechains-two-compactions.jsonl": {"jwt": 10, "url-password": 2}}


def _real_fixtures() -> list[Path]:
    return sorted(REAL.rglob("*.jsonl"))


@pytest.mark.parametrize("path", _real_fixtures(), ids=lambda p: str(p.relative_to(REAL)))
def test_findings_on_each_real_fixture(path: Path) -> None:
    # As `tt redact` reports them: the whole file's context (`redact.collect`) included.
    got = Counter(f.kind for f in scan_file(path).findings)
    assert dict(got) == EXPECTED_FINDINGS.get(path.name, {})
    assert dict(Counter(f.kind for r in redact_lines(iter_lines(path)) for f in r.findings)) == dict(got)


def test_redacted_real_fixture_still_validates(tmp_path: Path) -> None:
    src = REAL / "v1.0.51-inline-sidechains-two-compactions.jsonl"
    out = tmp_path / src.name
    out.write_bytes(b"".join(r.chunk for r in redact_lines(iter_lines(src))))
    before, after = validate_path(src), validate_path(out)
    assert after.errors == before.errors and after.warnings == before.warnings
    # The full JWTs are gone (truncated prints of one, "eyJ...…", hold no credential).
    assert re.search(rb"eyJhbGciOiJFZERTQSJ9\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}", src.read_bytes())
    assert not re.search(rb"eyJhbGciOiJFZERTQSJ9\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}", out.read_bytes())
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_redact_line_reports_no_secret_values() -> None:
    ln = next(iter_lines(S332))
    assert redact_line(ln).findings == ()


def _alternation(secrets: list[str], text: str) -> list[tuple[int, int]]:
    """The spec of `Known.occurrences`: every secret as a whole token, one regex
    alternation, longest first (what it ran for any number of secrets before)."""
    vals = sorted(secrets, key=len, reverse=True)
    rx = re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(map(re.escape, vals)) + r")(?![A-Za-z0-9_])")
    return [m.span() for m in rx.finditer(text)]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text("ab/+=_-9", min_size=8, max_size=14), min_size=32, max_size=60, unique=True),
    st.lists(st.integers(0, 200), min_size=1, max_size=40),
    st.lists(st.sampled_from([" ", "a", "/", "\n", "=", "_", '"']), min_size=40, max_size=40),
)
def test_many_known_secrets_are_found_where_their_alternation_finds_them(
    secrets: list[str], picks: list[int], glue: list[str]
) -> None:
    from transcript_tools.redact.rules import Known, distinctive

    # Past 32 secrets they are looked up by their first characters (a 4 MB line with
    # 20,000 of them took 14 s through the alternation, new-user pass); same places.
    secrets = [s for s in secrets if distinctive(s)]
    known = Known(secrets=tuple((s, "high-entropy-string") for s in secrets))
    text = (
        "".join(glue[i % len(glue)] + secrets[p % len(secrets)] for i, p in enumerate(picks))
        if secrets
        else ""
    )
    assert [(a, b) for a, b, _ in known.occurrences(text)] == _alternation(secrets, text) if secrets else True
