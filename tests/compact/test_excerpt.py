"""excerpt: the text a model summariser reads — the first request and the most recent
part, within the budget."""

from __future__ import annotations

from typing import Any

from transcript_tools.compact.excerpt import Excerpt, render


def u(content: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}}


def a(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": list(blocks)}}


def test_excerpt_keeps_the_first_request_and_the_end() -> None:
    e = Excerpt(2000)
    e.feed(u("THE FIRST REQUEST"))
    for k in range(200):
        e.feed(a({"type": "text", "text": f"step {k} " + "x" * 50}))
    text = e.text()
    assert text.startswith("[user] THE FIRST REQUEST")
    assert "step 199" in text and "step 0 " not in text
    assert e.dropped > 0 and "left out" in text
    assert len(text) <= 2000 + 200


def test_render() -> None:
    assert (
        render(a({"type": "tool_use", "id": "1", "name": "Bash", "input": {"command": "ls"}}))
        == '[assistant calls Bash] {"command":"ls"}'
    )
    assert (
        render(u([{"type": "tool_result", "tool_use_id": "1", "content": "out", "is_error": True}]))
        == "[tool result (error)] out"
    )
    assert render(u("hi")) == "[user] hi"
    assert render({"type": "progress"}) == ""
