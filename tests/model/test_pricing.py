"""tt's price table against the real client: the model catalogue baked into Claude Code
2.1.332 (the bundled binary) and the costs that CLI recorded in a real session.

Finding (issue 18, round 2): claude-opus-5-5, 2.1.332's default model, was unpriced in tt,
so ``tt stats`` showed no cost for every new session.
"""

from __future__ import annotations

import json
import mmap
import re
from pathlib import Path

import pytest

from tests.support.claude_cli import bundled_cli
from tests.support.paths import REAL
from transcript_tools.model.pricing import Tokens, cost_usd, price_for

SESSION_332 = (
    REAL / "claude-config-2.1.332/projects/-home-dev-demo-app/4cd0c8e6-36cd-4af9-9a2d-9191b504fada.jsonl"
)

#: Models of the catalogue tt leaves unpriced on purpose, with why (pricing.py says so too).
UNPRICED_ON_PURPOSE = {"claude-haiku-5-5"}  # haiku_55: 5x past 100,000 prompt tokens per request


def _catalogue(binary: Path) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """(pricing tiers, model id -> tier) as the binary's baked-in catalogue states them."""
    with binary.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        at = data.find(b"baked-in model catalog")
        assert at > 0, "the catalogue is no longer where 2.1.332 keeps it"
        end = data.find(b"aliases:{", at)
        text = data[at:end].decode("utf-8", "replace")
    tiers_text = text[text.index("pricing_tiers:{") : text.index("models:[")]
    tiers = {
        name: {k: float(v) for k, v in re.findall(r"(\w+):([\d.e]+)", body)}
        for name, body in re.findall(r"(\w+):\{(input:[^{}]*?)(?:,long_prompt:\{[^{}]*\})?\}", tiers_text)
    }
    starts = list(re.finditer(r'\{id:"(claude-[a-z0-9-]+)",family:"[a-z]+"', text))
    models: dict[str, str] = {}
    for m, nxt in zip(starts, [*starts[1:], None], strict=True):
        seg = text[m.start() : nxt.start() if nxt else len(text)]
        tier = re.search(r'pricing:"(\w+)"', seg)
        assert tier, f"{m.group(1)} has no pricing tier in the catalogue"
        models[m.group(1)] = tier.group(1)
        # the id the API is called with (and transcripts record), e.g. claude-opus-4-20250514
        first_party = re.search(r'first_party:"([^"]+)"', seg)
        assert first_party, m.group(1)
        models.setdefault(first_party.group(1), tier.group(1))
    return tiers, models


@pytest.mark.claude
def test_every_model_claude_code_2_1_332_prices_has_the_same_price_in_tt() -> None:
    """Reads the price from the bundled binary: a pin that changes a price fails here."""
    cli = bundled_cli()
    if cli is None:
        pytest.skip("claude-agent-sdk's bundled Claude Code is not installed")
    tiers, models = _catalogue(cli.path)
    assert models["claude-opus-5-5"] == "tier_4_20_cache_read_0_20"
    assert tiers["tier_4_20_cache_read_0_20"] == {
        "input": 4.0,
        "output": 20.0,
        "cache_write_5m": 5.0,
        "cache_write_1h": 8.0,
        "cache_read": 0.2,
        "web_search": 0.01,
    }
    assert len(models) >= 24
    for model, tier_name in models.items():
        p = price_for(model)
        if model in UNPRICED_ON_PURPOSE:
            assert p is None, model
            continue
        tier = tiers[tier_name]
        assert p is not None, f"{model} ({tier_name}) is priced by Claude Code {cli.version} but not by tt"
        got = (p.input, p.output, p.cache_write_5m, p.cache_write_1h, p.cache_read)
        want = tuple(tier[k] for k in ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read"))
        assert got == pytest.approx(want), model


def test_opus_5_5_costs_what_claude_code_2_1_332_recorded_in_a_real_session() -> None:
    """Each cost-state record 2.1.332 wrote in the fixture session (modelUsage per model)
    is what tt's table gives for the same tokens."""
    checked = 0
    for line in SESSION_332.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("type") != "cost-state":
            continue
        for model, u in rec["modelUsage"].items():
            t = Tokens(
                u["inputTokens"],
                u["outputTokens"],
                u["cacheCreationInputTokens"],
                u["cacheReadInputTokens"],
                u["cacheCreationEphemeral1hInputTokens"],
            )
            assert cost_usd(model, t) == pytest.approx(u["costUSD"], abs=1e-9), (model, u)
            checked += 1
    assert checked == 15


def test_a_key_prices_its_dated_ids_but_never_a_later_minor_version() -> None:
    assert (
        price_for("claude-opus-5-5")
        == price_for("claude-opus-5-5[1m]")
        == price_for("claude-opus-5-5-20261101")
    )
    assert (
        price_for("claude-opus-4-20250514") is not None and price_for("claude-opus-4-20250514").input == 15.0
    )
    # a model Claude Code 2.1.332 does not know is not priced at its family's older rates
    assert price_for("claude-opus-5-6") is None and price_for("claude-opus-4-9") is None
    t = Tokens(input=1_000_000, cache_read=1_000_000)
    # 2.1.332's tier_4_20_cache_read_0_20: $4 input + $0.20 cache read (0.05x, not 0.1x)
    assert cost_usd("claude-opus-5-5", t) == pytest.approx(4.2)


def test_the_price_table_is_read_only_since_price_for_caches() -> None:
    from transcript_tools.model import pricing

    assert pricing.price_for("claude-opus-5-5") is pricing.price_for("claude-opus-5-5")
    with pytest.raises(TypeError):
        pricing.TABLE["claude-haiku-5-5"] = pricing.Price(1.0, 5.0)  # type: ignore[index]
