"""summarizers: the extractive summary (offline, deterministic, bounded, naming the first
request and the files touched) and the model summary through tt's client, against the
local stand-in (request shape, instructions, retries, errors)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.support.paths import REAL
from tests.support.standin import ApiError as ScriptedError
from tests.support.standin import StandIn, Text
from transcript_tools.compact.digest import Digest
from transcript_tools.compact.excerpt import Excerpt
from transcript_tools.compact.summarizers import (
    MAX_SUMMARY_CHARS,
    RECIPE,
    AnthropicSummarizer,
    Extractive,
    Material,
    Summarizer,
    extract_summary,
    summary_prompt,
)
from transcript_tools.edge.client import AnthropicClient, Credentials
from transcript_tools.model.errors import ApiError, CredentialsError

CLEAN_332 = (
    REAL
    / "claude-config-2.1.332"
    / "projects"
    / "-home-dev-demo-app"
    / "4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
)
TOOL_HEAVY = REAL / "v2.1.38-tool-heavy.jsonl"


def material(path: Path, excerpt_chars: int = 0) -> Material:
    d = Digest()
    e = Excerpt(excerpt_chars) if excerpt_chars else None
    for line in path.read_bytes().splitlines():
        r = orjson.loads(line)
        d.feed(r)
        if e is not None:
            e.feed(r)
    return Material(d, e.text() if e else "", str(path))


def test_both_fit_the_protocol() -> None:
    def name(s: Summarizer) -> str:
        return s.name

    assert name(Extractive()) == "extractive"
    assert name(AnthropicSummarizer(None, model="m")) == "anthropic"


def test_extractive_names_the_first_request_and_the_files() -> None:
    text = Extractive().summarize(material(CLEAN_332))
    assert 'First request: "Project kickoff 13000: we work on app.py"' in text
    assert "Edited (1): /home/dev/demo-app/app.py" in text
    assert "Written (1): /home/dev/demo-app/util.py" in text
    assert "/home/dev/demo-app/util.py" in text.split("Read (")[1]
    assert "`python3 app.py`" in text
    for section in (
        "1. User requests",
        "2. Files",
        "3. Commands run",
        "4. Errors and fixes",
        "5. Last state",
    ):
        assert section in text


def test_extractive_is_deterministic_and_offline() -> None:
    a = Extractive().summarize(material(TOOL_HEAVY))
    b = Extractive().summarize(material(TOOL_HEAVY))
    assert a == b
    assert "User requests" in a


def test_extractive_is_bounded() -> None:
    d = Digest()
    for k in range(5000):
        d.feed({"type": "user", "message": {"role": "user", "content": f"request {k} " + "x" * 900}})
    text = Extractive().summarize(Material(d))
    assert len(text) <= MAX_SUMMARY_CHARS
    assert "more requests" in text


def test_extract_summary() -> None:
    assert extract_summary("<analysis>think</analysis>\n<summary>\nthe summary\n</summary>") == "the summary"
    assert extract_summary("<analysis>x</analysis> plain") == "plain"


def test_prompt_follows_the_recipe() -> None:
    m = material(CLEAN_332, excerpt_chars=50_000)
    p = summary_prompt(m, "focus on the tests")
    assert p.startswith("<transcript>\n[user] Project kickoff 13000")
    assert "<facts>" in p and RECIPE in p
    for section in (
        "Primary Request and Intent",
        "Key Technical Concepts",
        "Files and Code Sections",
        "Errors and Fixes",
        "Pending Tasks",
        "Current Work",
    ):
        assert section in p
    assert p.endswith("Additional instructions for this summary:\nfocus on the tests")


@pytest.fixture
def client(standin: StandIn) -> Iterator[AnthropicClient]:
    with AnthropicClient(
        Credentials("test-key", None, standin.base_url), max_retries=2, base_delay=0.0, sleep=lambda s: None
    ) as c:
        yield c


def test_model_summary_through_the_client(standin: StandIn, client: AnthropicClient) -> None:
    m = material(CLEAN_332, excerpt_chars=50_000)
    s = AnthropicSummarizer(client, model="claude-standin-1", instructions="keep file names")
    text = s.summarize(m)
    # The stand-in plays Claude Code's summariser for this marker (tests/support/policy.py).
    assert text.startswith("SUMMARY n=1")
    [req] = standin.message_requests
    assert req.model == "claude-standin-1" and req.stream
    assert req.body["max_tokens"] == 8192 and "tools" not in req.body
    prompt = req.messages[0]["content"]
    assert "Your task is to create a detailed summary of the conversation so far" in prompt
    assert prompt.endswith("keep file names")
    assert s.usage.get("output_tokens", 0) > 0


def test_model_summary_is_retried_like_resume(standin: StandIn, client: AnthropicClient) -> None:
    standin.script(ScriptedError.overloaded(), Text("<summary>after a retry</summary>"))
    s = AnthropicSummarizer(client, model="m")
    assert s.summarize(material(CLEAN_332, 10_000)) == "after a retry"
    assert len(standin.message_requests) == 2


def test_model_errors_become_api_errors(standin: StandIn, client: AnthropicClient) -> None:
    standin.script(ScriptedError(400, "prompt is too long"))
    with pytest.raises(ApiError, match="prompt is too long"):
        AnthropicSummarizer(client, model="m").summarize(material(CLEAN_332, 10_000))
    standin.script(Text("   "))
    with pytest.raises(ApiError, match="without a summary"):
        AnthropicSummarizer(client, model="m").summarize(material(CLEAN_332, 10_000))


def test_a_refused_key_is_a_credentials_error(standin: StandIn, client: AnthropicClient) -> None:
    standin.script(ScriptedError(401, "invalid x-api-key"))
    with pytest.raises(CredentialsError):
        AnthropicSummarizer(client, model="m").summarize(material(CLEAN_332, 10_000))
