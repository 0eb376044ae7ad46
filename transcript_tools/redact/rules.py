"""Secret detectors: where in a text the secrets are, and what kind each is.

`find_secrets(text)` returns non-overlapping `Span`s (start, end, kind), in order;
`redact_text(text)` replaces each with a typed placeholder ``[REDACTED:<kind>]``. The
kinds are stable strings (`KINDS`), shown to users and counted in reports.

Three families of detectors, tried in this order (an earlier one wins an overlap):

1. *Provider formats* with a fixed prefix and shape (Anthropic ``sk-ant-``, OpenAI
   ``sk-proj-``/``sk-``, AWS ``AKIA``/``ASIA``, GitHub ``ghp_``/``github_pat_``, GitLab
   ``glpat-``, Slack ``xox*``, Stripe ``sk_live_``, Google ``AIza``, npm, PyPI, Twilio,
   SendGrid, Hugging Face, ...), PEM private-key blocks, JWTs, passwords in URLs and
   ``Authorization:`` headers. These are near-certain: the prefix says what it is.
2. *Assignments* of a secret-named key (``AWS_SECRET_ACCESS_KEY=...``, ``password: ...``,
   ``"api_key": "..."``): the value is replaced, the key kept, so a reader still sees what
   was there. Values that are code or placeholders (``os.environ[...]``, ``${VAR}``,
   ``<your-key>``, ``changeme``, ``xxxx``) are not secrets and are left alone.
3. *High-entropy strings*, conservatively: 32 to 256 characters of a token alphabet, with
   upper case, lower case and digits, not hex, not a known id format (``toolu_``,
   ``msg_``, ``req_``, integrity hashes), and a Shannon entropy of at least
   `entropy_threshold` bits per character (4.1 to 4.6 by length). Random keys pass;
   words, paths and ids do not. *Anthropic-style ids* (`ANTHROPIC_ID`:
   ``<prefix>_01<base58>``, e.g. ``toolu_01…``, ``msg_01…``, ``req_011C…``,
   ``agent_msg_01…``, ``toolu_vrtx_01…``) are ids wherever they appear — a candidate is
   judged on what is left once they are cut out of it — but only for this family: a
   provider key or a secret assignment of that shape is still found by 1 and 2.

`find_secrets(text, known)` takes what is known about the whole file (`Known`, built by
`redact.core.collect`): ``ids``, the values Claude Code wrote in its structural fields (a
span whose text is one of them is an id here too), and ``secrets``, values found as
secrets elsewhere in the file (every other occurrence of one, as a whole token, is a
secret too, whatever its context, if it is `distinctive`: not a plain word such as a
``postgres`` password). So a value is redacted everywhere in a file or nowhere.

Why not ``detect-secrets`` (Yelp; PyPI 1.5.0, May 2024), measured here on the real
fixtures: its scanner with its filters ran at about 55 KB/s (108 s for the 6 MB of strings
in ``fixtures/real``; a 50 MB session would take a quarter of an hour), its plugins alone
at about 290 KB/s (the keyword plugin most of it) — this module: about 4 MB/s; it has no
detector for Anthropic, OpenAI project keys, Google, Hugging Face, or a PEM block past
its first line; it returns values, not spans; it pulls in ``requests``. On the fixtures it
reported 28 findings, at least 10 of them false (agent ids and git SHAs as hex entropy, a
keyword ``none``, base64 JSON), against 12 true ones and none false here; the real ones it
found (JWTs in a test log, ``postgres:postgres@`` in a ``.env`` read by a tool) are found
here too.

Invariants:
- Spans never overlap, are sorted, and lie inside the text; a placeholder never contains
  a secret, so `redact_text` is idempotent.
- Nothing here returns, logs or keeps a secret's value: callers get kinds and offsets.
  (`Known` holds values in memory for one file's pass; it is never printed or written.)
- Pure: no I/O; the patterns are compiled once at import.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise

ENTROPY_MIN_LEN = 32
ENTROPY_MAX_LEN = 256
#: Longest private-key block searched for its END line (an RSA-8192 key is ~6.5 KB).
PEM_MAX = 16_384

PLACEHOLDER = "[REDACTED:{kind}]"


#: Past this many secrets, `Known.occurrences` looks them up by their first characters
#: at each place one may begin, instead of running their alternation: Python's ``re``
#: tries the branches one by one at every position, and compiling 20,000 of them into one
#: pattern alone takes seconds (a 4 MB line with 20,000 secrets took 14 s).
_LOOKUP_FROM = 32
_KEY = 8  # every distinctive value is this long at least: its first 8 characters key it
_WORD = re.compile(r"[A-Za-z0-9_]")
#: Where a secret may begin: no word character before (the pattern's lookbehind).
_STARTS = re.compile(r"(?<![A-Za-z0-9_])")


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class Known:
    """What one file says about its own values (built by `redact.core.collect`).

    ``ids``: span texts that sit in a structural field Claude Code wrote (``uuid``,
    ``toolUseID``, a thinking ``signature``, ...): not secrets, here or anywhere in the
    file. ``secrets``: value -> kind, found as a secret somewhere in the file; every
    occurrence is redacted."""

    ids: frozenset[str] = frozenset()
    secrets: tuple[tuple[str, str], ...] = ()
    #: Lines with a finding in the first pass (None: not known, every line is searched).
    #: Any other line can only gain a finding from ``secrets``: `in_bytes` tells.
    lines: frozenset[int] | None = None

    def __post_init__(self) -> None:
        # Longest first, so a secret holding another is replaced whole; a whole token
        # only (not "postgres" inside "postgresql://"); distinctive values only.
        vals = sorted((v for v, _ in self.secrets if distinctive(v)), key=len, reverse=True)
        pat = "|".join(re.escape(v) for v in vals) if len(vals) < _LOOKUP_FROM else ""
        if pat:
            pat = r"(?<![A-Za-z0-9_])(?:" + pat + r")(?![A-Za-z0-9_])"
        object.__setattr__(self, "_kinds", dict(self.secrets))
        object.__setattr__(self, "_rx", re.compile(pat) if pat else None)
        # Many secrets: by their first characters, longest first within each key.
        by_key: dict[str, list[str]] = {}
        if len(vals) >= _LOOKUP_FROM:
            for v in vals:
                by_key.setdefault(v[:_KEY], []).append(v)
        object.__setattr__(self, "_by_key", by_key)
        # The values as they can appear in a JSON line: raw UTF-8, and JSON-escaped.
        forms = {f for v in vals for f in (v.encode("utf-8", "surrogatepass"), json.dumps(v)[1:-1].encode())}
        object.__setattr__(self, "_forms", tuple(forms))

    def in_bytes(self, data: bytes) -> bool:
        """Whether a raw line may hold one of the ``secrets`` (a cheap first test)."""
        return any(f in data for f in self._forms)  # type: ignore[attr-defined]

    def occurrences(self, text: str) -> Iterator[tuple[int, int, str]]:
        """Each place a distinctive secret stands whole in ``text`` (no word character
        either side), leftmost first, the longest where several begin at one place."""
        kinds = self._kinds  # type: ignore[attr-defined]
        rx = self._rx  # type: ignore[attr-defined]
        if rx is not None:
            for m in rx.finditer(text):
                yield m.start(), m.end(), kinds[m.group()]
            return
        by_key = self._by_key  # type: ignore[attr-defined]
        if not by_key:
            return
        n = len(text)
        done = 0  # matches do not overlap: none begins inside the last one
        for m in _STARTS.finditer(text):
            p = m.start()
            if p < done:
                continue
            for v in by_key.get(text[p : p + _KEY], ()):
                e = p + len(v)
                if text.startswith(v, p) and (e == n or not _WORD.match(text, e)):
                    yield p, e, kinds[v]
                    done = e
                    break


NOTHING_KNOWN = Known()


def distinctive(value: str) -> bool:
    """Whether a secret's value is specific enough to be replaced wherever it occurs:
    8 characters or more, and not a plain word. A password ``postgres`` found in
    ``postgres:postgres@db`` (fixtures/real v1.0.51) is redacted there, not in every
    ``postgres`` of the session."""
    return len(value) >= 8 and not value.isalpha()


# --- 1. provider formats ---------------------------------------------------------
# (kind, triggers, pattern). A pattern runs only on texts holding one of its trigger
# substrings, found for all patterns in one pass (`_TRIGGER_RE`): most strings hold
# none, and a regex pass per pattern over every string was 30x slower.
# Group "s", when present, is the secret; else the whole match.
# Boundaries: a token inside a longer word is not cut out of it. A "-" before is allowed
# (a removed line in a diff: "-ghp_..."), after is not (the token would go on).
_B = r"(?<![A-Za-z0-9_])"
_E = r"(?![A-Za-z0-9_\-])"
_PROVIDERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("anthropic-api-key", ("sk-ant-",), _B + r"sk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_\-]{32,}" + _E),
    ("openai-api-key", ("sk-",), _B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{32,}" + _E),
    ("openai-api-key", ("T3BlbkFJ",), _B + r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}" + _E),
    ("openrouter-api-key", ("sk-or-",), _B + r"sk-or-v1-[a-f0-9]{64}" + _E),
    ("openai-api-key", ("sk-",), _B + r"sk-[A-Za-z0-9]{48}" + _E),
    (
        "aws-access-key",
        ("AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA", "ANPA"),
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|ANPA)[A-Z0-9]{16}(?![A-Z0-9])",
    ),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), _B + r"gh[pousr]_[A-Za-z0-9]{36,255}" + _E),
    ("github-token", ("github_pat_",), _B + r"github_pat_[A-Za-z0-9_]{40,255}" + _E),
    (
        "gitlab-token",
        ("gl",),
        _B
        + r"gl(?:pat|dt|rt|ptt|cbt|ft|imt|oas|soat|agent)-[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]{2,})*"
        + _E,
    ),
    ("slack-token", ("xox",), _B + r"xox[abposre]-(?:[0-9]+-)*[A-Za-z0-9\-]{10,}" + _E),
    (
        "slack-webhook",
        ("hooks.slack.com",),
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{20,}",
    ),
    ("stripe-key", ("_live_", "_test_"), _B + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}" + _E),
    ("stripe-key", ("whsec_",), _B + r"whsec_[A-Za-z0-9]{24,}" + _E),
    ("google-api-key", ("AIza",), _B + r"AIza[0-9A-Za-z_\-]{35}" + _E),
    ("google-oauth-secret", ("GOCSPX-",), _B + r"GOCSPX-[A-Za-z0-9_\-]{28}" + _E),
    ("google-oauth-token", ("ya29.",), _B + r"ya29\.[0-9A-Za-z_\-]{30,}" + _E),
    ("npm-token", ("npm_",), _B + r"npm_[A-Za-z0-9]{36}" + _E),
    ("pypi-token", ("pypi-AgE",), _B + r"pypi-AgE[A-Za-z0-9_\-]{50,}" + _E),
    ("twilio-api-key", ("SK",), r"(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])"),
    ("sendgrid-api-key", ("SG.",), _B + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E),
    ("huggingface-token", ("hf_",), _B + r"hf_[A-Za-z0-9]{34,40}" + _E),
    ("mailchimp-api-key", ("-us",), r"(?<![A-Za-z0-9])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])"),
    ("digitalocean-token", ("_v1_",), _B + r"do[por]_v1_[a-f0-9]{64}" + _E),
    ("shopify-token", ("shp",), _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E),
    ("square-token", ("sq0",), _B + r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,60}" + _E),
    ("databricks-token", ("dapi",), _B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E),
    ("groq-api-key", ("gsk_",), _B + r"gsk_[A-Za-z0-9]{52}" + _E),
    ("replicate-token", ("r8_",), _B + r"r8_[A-Za-z0-9]{37}" + _E),
    ("xai-api-key", ("xai-",), _B + r"xai-[A-Za-z0-9]{80}" + _E),
    ("linear-api-key", ("lin_api_",), _B + r"lin_api_[A-Za-z0-9]{40}" + _E),
    ("notion-token", ("secret_", "ntn_"), _B + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})" + _E),
    ("atlassian-token", ("ATATT3",), _B + r"ATATT3[A-Za-z0-9_\-=]{150,}" + _E),
    ("telegram-bot-token", (":AA",), r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}" + _E),
    ("azure-storage-key", ("AccountKey=",), r"(?<=AccountKey=)[A-Za-z0-9+/]{86}=="),
    ("jwt", ("eyJ",), _B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,}" + _E),
    ("private-key", ("PRIVATE KEY",), r"-----BEGIN[A-Z ]{0,40} PRIVATE KEY(?: BLOCK)?-----"),
    # Password in a URL: scheme://user:PASSWORD@host — the password only.
    (
        "url-password",
        ("://",),
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,20}://[^\s:/?#@\"'<>]{1,128}:(?P<s>[^\s@/?#\"'<>]{1,256})@(?=[A-Za-z0-9\[])",
    ),
    (
        "basic-auth",
        ("Basic ", "basic ", "BASIC "),
        r"(?i:\bauthorization\b[\"']?\s*[:=]\s*[\"']?basic\s+)(?P<s>[A-Za-z0-9+/]{12,}={0,2})",
    ),
    (
        "bearer-token",
        ("Bearer ", "bearer ", "BEARER "),
        r"(?i:\b(?:authorization\b[\"']?\s*[:=]\s*[\"']?)?bearer\s+)(?P<s>[A-Za-z0-9_\-.~+/]{20,}=*)",
    ),
)
_RULES = tuple((kind, triggers, re.compile(p)) for kind, triggers, p in _PROVIDERS)
# One pass finds which triggers a text holds (3x faster than one ``in`` per trigger); a
# trigger found also stands for the shorter triggers inside it ("sk-ant-" holds "sk-").
_TRIGGERS = sorted({t for _, ts, _ in _PROVIDERS for t in ts}, key=len, reverse=True)
_TRIGGER_RE = re.compile("|".join(re.escape(t) for t in _TRIGGERS))
_IMPLIED = {t: frozenset(u for u in _TRIGGERS if u in t) for t in _TRIGGERS}
_PEM_END = re.compile(r"-----END[A-Z ]{0,40} PRIVATE KEY(?: BLOCK)?-----")
#: A PEM body without its END (a truncated tool output): base64 lines, maybe with headers.
_PEM_BODY = re.compile(r"(?:[ \t]*(?:\d+[\t→])?[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z\-]+: [^\n]*)?\r?\n)*")

# --- 2. assignments of secret-named keys ------------------------------------------
# KEY = value  /  KEY: value  /  "key": "value"  /  export KEY='value'
_ASSIGN_RE = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z_][A-Za-z0-9_.\-]{0,80})(?P<kq>[\"']?)[ \t]*(?::=|:|=)[ \t]*"
    r"(?P<q>[\"'`]?)(?P<value>[^\s\"'`,;]{4,512})(?P=q)",
)
_KEY_SPLIT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_SECRET_WORDS = frozenset(
    {
        "secret",
        "secrets",
        "token",
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "apikey",
        "credential",
        "credentials",
        "dsn",
        "privatekey",
        "accesskey",
        "secretkey",
    }
)
_SECRET_PAIRS = frozenset(
    {
        ("api", "key"),
        ("access", "key"),
        ("private", "key"),
        ("auth", "key"),
        ("signing", "key"),
        ("encryption", "key"),
        ("master", "key"),
        ("session", "key"),
        ("pass", "word"),
        ("auth", "token"),
    }
)
#: Words that make a secret-sounding key a setting *about* secrets (MAX_TOKENS, token_count).
_NOT_SECRET_WORDS = frozenset(
    {
        "max",
        "min",
        "num",
        "count",
        "limit",
        "budget",
        "type",
        "kind",
        "file",
        "path",
        "dir",
        "name",
        "url",
        "endpoint",
        "length",
        "len",
        "size",
        "ttl",
        "header",
        "prefix",
        "env",
        "var",
        "field",
        "id",
        "ids",
        "usage",
        "input",
        "output",
        "total",
        "cache",
        "per",
        "rate",
        "window",
        "format",
        "mode",
        "policy",
        "hint",
        "regex",
        "pattern",
        "placeholder",
        "tokens",
        "tokenizer",
        "expires",
        "expiry",
        "expiration",
        "estimate",
        "used",
        "remaining",
        "label",
        "description",
        "location",
        "store",
        "manager",
        "provider",
        "helper",
        "source",
        "command",
        "cmd",
        "hash",
        "reset",
        "required",
        "enabled",
        "visible",
        "show",
        "hide",
        "hidden",
        "confirm",
    }
)
_PLACEHOLDER_VALUE = re.compile(
    r"(?i)^(?:x{3,}|\*{3,}|\.{3,}|-+|_+|#+|changeme|change[_\-]?me|example\w*|dummy\w*|sample\w*|"
    r"test|testing|fake\w*|placeholder|redacted|secret|password|passwd|token|none|null|nil|"
    r"undefined|true|false|yes|no|on|off|required|optional|string|str|bytes|int|number|bool|any|"
    r"your[_\-a-z]*|<[^>]*>|\[[^\]]*\]|\{[^}]*\}|%[^%]*%|\$\w+|\$\{[^}]*\})$"
)
#: Values that are code, not literals: calls, subscripts, ${VAR}, attribute access,
#: CONSTANT names, numbers, snake_case and camelCase identifiers.
_VALUE_IS_CODE = re.compile(
    r"[()\[\]{}<>]|\$\{|^\$[A-Za-z_]|^%[A-Za-z_]+%$|^\w+(?:\.\w+)+$|^[A-Z][A-Z0-9_]+$|^[0-9.]+$|^[a-z]+(?:_[a-z0-9]+)+$|^[a-z]+(?:[A-Z][a-z0-9]*)+$|^\[REDACTED:"
)


#: Lower-case words only ("invalid-token", "register"): prose or a test value, not a key.
_WORDS_ONLY = re.compile(r"^[a-z]+(?:[\-_ ][a-z]+)*$|^(?:[A-Z][a-z0-9]+){2,}$")
_STATEMENT_END = re.compile(r"[ \t]*(?:$|[,;})#\r\n]|\s+#)")


def secret_key(key: str) -> bool:
    """Whether an assignment's key names a secret (``DB_PASSWORD``, ``apiKey``,
    ``client-secret``) and not a setting about one (``MAX_TOKENS``, ``token_count``)."""
    words = [w.lower() for w in _KEY_SPLIT.findall(key)]
    if not words or any(w in _NOT_SECRET_WORDS for w in words):
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(p in _SECRET_PAIRS for p in pairwise(words))


# --- 3. high entropy ----------------------------------------------------------------
_CANDIDATE_RE = re.compile(
    # %-formatting: the regex's own braces stay single (an f-string would double them)
    r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/=_\-]{%d,%d}(?![A-Za-z0-9+/=_\-])"  # noqa: UP031
    % (ENTROPY_MIN_LEN, ENTROPY_MAX_LEN)
)
_HEX = re.compile(r"^[0-9a-fA-F\-]+$")
_ID_PREFIX = re.compile(
    r"^(?:toolu_|srvtoolu_|msg_|req_|call_|chatcmpl-|resp_|run_|file_|batch_|org-|user_|"
    r"sha(?:1|256|384|512)[-:]|md5[-:]|data:|agent-|session-|ver_|prj_|team_|tskey-api-ABC)"
)
#: An Anthropic API id: a lower-case prefix (``toolu``, ``msg``, ``req``, ``agent_msg``,
#: ``srvtoolu``, ``toolu_vrtx``, ``file``), ``_01``, then base58 (no 0, O, I, l). Seen in
#: every real session: ``message.id``, ``tool_use.id``, ``requestId``, and
#: ``toolUseID: "agent_msg_01…"`` on agent progress records (fixtures/real v2.1.17; public
#: sessions up to 2.1.73; the 2.1.197 and 2.1.332 binaries no longer hold the string, old
#: files keep it).
ANTHROPIC_ID = re.compile(
    r"(?<![A-Za-z0-9_])[a-z][a-z0-9]*(?:_[a-z0-9]+)*_01[1-9A-HJ-NP-Za-km-z]{16,40}(?![A-Za-z0-9_])"
)
_HAS_UPPER = re.compile(r"[A-Z]")
_HAS_LOWER = re.compile(r"[a-z]")
_HAS_DIGIT = re.compile(r"[0-9]")
_WORDISH = re.compile(r"[A-Za-z]{5,}")
_PATHISH = re.compile(r"(?:^|/)[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+/")


def shannon_entropy(s: str) -> float:
    """Bits per character of ``s`` (0 for the empty string)."""
    n = len(s)
    if n == 0:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _high_entropy(tok: str) -> bool:
    t = tok.strip("=-_")
    if len(t) < ENTROPY_MIN_LEN or _HEX.match(t) or _ID_PREFIX.match(t):
        return False
    if not (_HAS_UPPER.search(t) and _HAS_LOWER.search(t) and _HAS_DIGIT.search(t)):
        return False
    if "/" in t and _PATHISH.search(t):
        return False
    # Identifiers made of words (camelCase, snake_case, kebab-case) are not keys: a
    # random key has few runs of five letters in a row.
    words = _WORDISH.findall(t)
    if sum(len(w) for w in words) > len(t) * 0.45:
        return False
    return shannon_entropy(t) >= entropy_threshold(len(t))


def entropy_threshold(n: int) -> float:
    """Bits per character a token of length ``n`` must reach: about the 1st percentile of
    random base62 strings of that length (measured: 4.18 at 32, 4.43 at 40, 4.91 at 64),
    so nearly every random key passes while identifiers and words do not."""
    if n < 40:
        return 4.1
    if n < 64:
        return 4.3
    return 4.6


def _secret_value(value: str) -> bool:
    if _PLACEHOLDER_VALUE.match(value) or _VALUE_IS_CODE.search(value) or "[REDACTED:" in value:
        return False
    # A value cut short for display ("Token: eyJhbGciOi...") is not a usable secret (a
    # whole token in it is still found by its own detector).
    if value.endswith(("...", "\u2026")):
        return False
    # A secret has some variety: "aaaa" or "1111" are not.
    return len(set(value)) >= 4


def _id_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in ANTHROPIC_ID.finditer(text)] if "_01" in text else []


def _entropy_pieces(text: str, a: int, b: int, ids: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The parts of candidate ``text[a:b]`` that are not Anthropic ids, as (start, end)."""
    pos = a
    for s, e in ids:
        if e <= a or s >= b:
            continue
        if s > pos:
            yield pos, s
        pos = max(pos, e)
    if pos < b:
        yield pos, b


def find_secrets(text: str, known: Known = NOTHING_KNOWN) -> list[Span]:
    """Secrets in ``text``: sorted, non-overlapping spans (see module doc for the order).
    ``known``: the file's ids (never a secret) and secrets (always one, when `distinctive`)."""
    if len(text) < 8:
        return []
    spans: list[Span] = []
    # The spans taken so far, never overlapping, sorted: starts and ends side by side, so
    # a new span is checked against its two neighbours only (a scan of all of them made a
    # text with 20,000 findings take 50 s).
    starts: list[int] = []
    ends: list[int] = []

    def add(a: int, b: int, kind: str) -> None:
        if a >= b:
            return
        i = bisect_right(starts, a)
        if (i and ends[i - 1] > a) or (i < len(starts) and starts[i] < b):
            return  # overlaps a span taken before
        starts.insert(i, a)  # an id is taken too: no shorter detector cuts into it
        ends.insert(i, b)
        if text[a:b] not in known.ids:
            spans.append(Span(a, b, kind))

    # Values this file already showed to be secrets, wherever they are (first: whole).
    for a, b, kind in known.occurrences(text):
        add(a, b, kind)

    present: set[str] = set()
    for t in set(_TRIGGER_RE.findall(text)):
        present |= _IMPLIED[t]
    for kind, triggers, rx in _RULES if present else ():
        if present.isdisjoint(triggers):
            continue
        for m in rx.finditer(text):
            if "s" in rx.groupindex:
                a, b = m.span("s")
                sub = m.group("s")
                if kind in ("url-password", "basic-auth") and not _secret_value(sub):
                    continue
                if kind == "bearer-token" and not (_HAS_DIGIT.search(sub) and len(set(sub)) >= 10):
                    continue
            else:
                a, b = m.span()
            if kind == "private-key":
                end = _PEM_END.search(text, b, min(len(text), b + PEM_MAX))
                b = end.end() if end else max(b, _PEM_BODY.match(text, b).end())  # type: ignore[union-attr]
            add(a, b, kind)

    for m in _ASSIGN_RE.finditer(text):
        key, value = m.group("key"), m.group("value")
        if not secret_key(key) or not _secret_value(value) or _WORDS_ONLY.match(value):
            continue
        # Unquoted, the value must end its statement (``KEY=value`` at the end of a line,
        # or before ``,`` ``;`` ``}`` ``#``): ``secret = await getKey()`` is code.
        if not m.group("q") and not _STATEMENT_END.match(text, m.end()):
            continue
        a, b = m.span("value")
        add(
            a,
            b,
            "aws-secret-key" if re.search(r"(?i)aws.*secret|secret.*access", key) else "secret-assignment",
        )

    ids = _id_spans(text)
    for m in _CANDIDATE_RE.finditer(text):
        if not ids:
            if _high_entropy(m.group()):
                add(m.start(), m.end(), "high-entropy-string")
            continue
        for a, b in _entropy_pieces(text, m.start(), m.end(), ids):
            piece = text[a:b]
            # Judge what is left once the ids are cut out, trimmed of joining "_-/".
            core = piece.strip("_-/.")
            if len(core) >= ENTROPY_MIN_LEN and _high_entropy(core):
                a += piece.index(core)
                add(a, a + len(core), "high-entropy-string")

    spans.sort(key=lambda s: s.start)
    return spans


def redact_text(text: str, known: Known = NOTHING_KNOWN) -> tuple[str, list[str]]:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``, and the kinds found."""
    spans = find_secrets(text, known)
    if not spans:
        return text, []
    out: list[str] = []
    pos = 0
    for s in spans:
        out.append(text[pos : s.start])
        out.append(PLACEHOLDER.format(kind=s.kind))
        pos = s.end
    out.append(text[pos:])
    return "".join(out), [s.kind for s in spans]


#: Every kind a finding can have.
KINDS: frozenset[str] = frozenset(
    {k for k, _, _ in _PROVIDERS} | {"aws-secret-key", "secret-assignment", "high-entropy-string"}
)
