"""The JSON Schemas (`schemas/`) and their checker (`transcript_tools.validate.schema`).

What is pinned here:
- every line of every real fixture fits the schemas; the only lines that do not are in the two
  hand-written files, and exactly those listed below, for the reasons given;
- hand-made damage gives "schema-invalid" with a pointer to the damaged value;
- an unknown `type` gives one "unknown-type" warning; unknown fields, block types, subtypes and
  attachment types pass;
- the fast validator (jsonschema-rs, on derived schemas) and the reference (jsonschema, on the
  files as written) agree on every fixture line and on mutated copies of them.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
import referencing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from referencing.jsonschema import DRAFT202012

from tests.support.paths import ROOT
from transcript_tools.validate import files_schema as schema_module
from transcript_tools.validate.files_schema import default_checker, load_schema_documents
from transcript_tools.validate.schema import (
    ENTRY_SCHEMA,
    MAX_PROBLEMS_PER_RECORD,
    SCHEMA_INVALID,
    UNKNOWN_TYPE,
    SchemaChecker,
    SchemaProblem,
    fast_schema,
    json_path,
)

SCHEMA_DIR = ROOT / "schemas"


FIXTURES = ROOT / "fixtures" / "real"


# The two hand-written files, known by content (fixtures/README.md names their origin).
EDGE_CASES = "808c6401ac9a1920d44641c6146edc490f927b88e189539650409718d961646b"
# daaain/claude-code-log test/test_data/edge_cases.jsonl (fixtures/real:
# handwritten-edge-cases-not-object-lines.jsonl): deliberately broken lines.
COMPOSITE = "d4f07dc5aa07a3b7797d02de6bce203f3a226d626919a26a9a9d292cd437d069"
# jazzyalex/agent-sessions .../claude/small.jsonl (fixtures/real:
# handwritten-2.1.80-2.1.220-trimmed-composite.jsonl): real line shapes 2.1.80-2.1.220 with values
# replaced by PLACEHOLDER (lines 42-89) and some invented lines (1-41).
PLACEHOLDER = "[trimmed for fixture]"

# line number -> the problem messages it must give (and no others)
EXPECTED_INVALID: dict[str, dict[int, set[str]]] = {
    EDGE_CASES: {
        10: {'message: "content" is a required property'},  # "contenst" typo
        11: {'(record): "timestamp" is a required property', 'message: "error" is not of type "object"'},
        13: {'(record): "massive error" is not of type "object"'},  # the three lines that are not objects
        14: {'(record): "type" is a required property'},  # {"silly": "this"}
        15: {'(record): 42 is not of type "object"'},
        16: {'(record): [1] is not of type "object"'},
        18: {'message.content[0]: "wow error" is not of type "object"'},  # a bare string as a block
    },
    COMPOSITE: {
        # Invented lines whose shape no real Claude Code line has:
        8: {'message.content[2]: "id" is a required property'},  # tool_use without id
        9: {'message.content[0]: "tool_use_id" is a required property'},  # tool_result without id
        10: {'message.content[0]: "tool_use_id" is a required property'},
        # system lines without parentUuid/isSidechain: a chain walk cannot tell a root from damage
        20: {
            '(record): "isSidechain" is a required property',
            '(record): "parentUuid" is a required property',
        },
        21: {
            '(record): "isSidechain" is a required property',
            '(record): "parentUuid" is a required property',
        },
    },
}
# Placeholders: the schema is precise about timestamps (RFC 3339), so a line whose `timestamp` was
# replaced by PLACEHOLDER is schema-invalid there and nowhere else. Placeholders in free-text or
# plain-string fields (uuid, cwd, text, ...) fit, as any string would.
PLACEHOLDER_TIMESTAMP = f'timestamp: "{PLACEHOLDER}" is not a valid RFC 3339 timestamp'


def _fixture_files() -> list[Path]:
    return sorted(FIXTURES.rglob("*.jsonl"))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) of every line that is JSON at all."""
    for number, raw in enumerate(path.read_bytes().splitlines(), 1):
        if not raw.strip():
            continue
        try:
            yield number, orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue


@cache
def _all_records() -> list[tuple[str, int, Any]]:
    return [
        (str(path.relative_to(FIXTURES)), number, value)  # type: ignore[arg-type]
        for path in _fixture_files()
        for number, value in _lines(path)
    ]


def _reference_entry() -> jsonschema.Draft202012Validator:
    # Straight from the files, not through the module under test.
    documents = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in SCHEMA_DIR.glob("*.schema.json")}
    registry: Any = referencing.Registry().with_resources(
        (doc["$id"], DRAFT202012.create_resource(doc)) for doc in documents.values()
    )
    return jsonschema.Draft202012Validator(documents[ENTRY_SCHEMA], registry=registry)


CHECKER = default_checker()
REFERENCE = _reference_entry()


def _errors(record: Any) -> list[SchemaProblem]:
    return [p for p in CHECKER.check(record) if p.severity == "error"]


# --------------------------------------------------------------------------- the schema files


def test_schema_files_are_valid_2020_12_with_matching_ids() -> None:
    documents = load_schema_documents()
    assert set(documents) == {p.name for p in SCHEMA_DIR.glob("*.schema.json")}
    for name, document in documents.items():
        jsonschema.Draft202012Validator.check_schema(document)
        assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert document["$id"].endswith("/" + name), name


def test_every_entry_schema_says_which_versions_it_was_seen_on() -> None:
    documents = load_schema_documents()
    version = re.compile(r"\d\.\d|never seen|uncertain")
    for name, document in documents.items():
        assert version.search(document["description"]), name
    for name, definition in documents["defs.schema.json"]["$defs"].items():
        assert version.search(definition.get("description", "")), name


def test_known_types_are_the_entry_schema_files() -> None:
    files = {p.name.removesuffix(".schema.json") for p in SCHEMA_DIR.glob("*.schema.json")} - {
        "defs",
        "entry",
    }
    assert CHECKER.known_types == files
    assert {
        "user",
        "assistant",
        "system",
        "progress",
        "attachment",
        "summary",
        "custom-title",
        "ai-title",
        "tag",
        "last-prompt",
        "mode",
        "permission-mode",
        "agent-name",
        "pr-link",
        "file-history-snapshot",
        "file-history-delta",
        "queue-operation",
        "content-replacement",
        "atis-latch",
        "artifact-comment-monitor",
        "agent-color",
        "history-suppression",
        "worktree-state",
        "relocated",
        "bridge-session",
        "frame-link",
        "fork-context-ref",
        "api-request",
        "api-request-shape",
        "api-request-blob",
        "cost-state",
        "tools-used",
    } <= CHECKER.known_types


def test_the_wheel_ships_the_schemas_inside_the_package() -> None:
    # files_schema.load_schema_documents looks in transcript_tools/schemas first: the wheel must put them there.
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    force_include = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert force_include["schemas"] == "transcript_tools/schemas"


def test_schemas_load_from_the_package_first_then_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packaged = tmp_path / "packaged"
    packaged.mkdir()
    (packaged / ENTRY_SCHEMA).write_text(json.dumps({"marker": "packaged"}))
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setattr(schema_module, "_schema_dirs", lambda: [empty, SCHEMA_DIR])
    assert load_schema_documents() == {
        p.name: json.loads(p.read_text()) for p in SCHEMA_DIR.glob("*.schema.json")
    }
    monkeypatch.setattr(schema_module, "_schema_dirs", lambda: [packaged, SCHEMA_DIR])
    assert load_schema_documents() == {ENTRY_SCHEMA: {"marker": "packaged"}}
    monkeypatch.setattr(schema_module, "_schema_dirs", lambda: [empty])
    with pytest.raises(FileNotFoundError, match=r"entry\.schema\.json"):
        load_schema_documents()


def test_default_checker_is_built_once() -> None:
    assert default_checker() is default_checker()


# --------------------------------------------------------------------------- real fixtures


def test_every_real_fixture_line_fits_except_the_pinned_hand_written_ones() -> None:
    seen: set[str] = set()
    for path in _fixture_files():
        digest = _digest(path)
        expected = EXPECTED_INVALID.get(digest, {})
        seen.add(digest)
        for number, value in _lines(path):
            got = {p.message for p in _errors(value)}
            if number in expected:
                assert got == expected[number], f"{path.name}:{number}"
            elif digest == COMPOSITE and isinstance(value, dict) and value.get("timestamp") == PLACEHOLDER:
                assert got == {PLACEHOLDER_TIMESTAMP}, f"{path.name}:{number}"
            else:
                assert got == set(), f"{path.name}:{number}: {sorted(got)}"
    assert {EDGE_CASES, COMPOSITE} <= seen, "the hand-written fixtures were changed or are missing"


def test_placeholder_timestamps_are_the_only_other_composite_failures() -> None:
    path = next(p for p in _fixture_files() if _digest(p) == COMPOSITE)
    failing = {n for n, v in _lines(path) if _errors(v)}
    placeholder = {n for n, v in _lines(path) if isinstance(v, dict) and v.get("timestamp") == PLACEHOLDER}
    assert len(placeholder) == 45
    assert failing == placeholder | set(EXPECTED_INVALID[COMPOSITE])


def test_fixtures_cover_every_major_type_and_subagent_files() -> None:
    kinds = {v.get("type") for _, _, v in _all_records() if isinstance(v, dict)}
    assert {
        "user",
        "assistant",
        "system",
        "progress",
        "attachment",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "api-request",
        "cost-state",
    } <= kinds
    assert any("subagents" in name for name, _, _ in _all_records())


def test_reference_validator_agrees_with_the_fast_path_on_every_fixture_line() -> None:
    for name, number, value in _all_records():
        assert REFERENCE.is_valid(value) == (not _errors(value)), f"{name}:{number}"


# --------------------------------------------------------------------------- hand-made damage

TOOL_RESULT_LINE: dict[str, Any] = {
    "parentUuid": "13a0b57e-9d87-40b4-a30c-5bd8e9f1f48a",
    "isSidechain": False,
    "promptId": "ac2a86cb-759e-4336-a03d-8188201e4b31",
    "type": "user",
    "message": {
        "role": "user",
        "content": [
            {
                "tool_use_id": "toolu_6304c8799f9e43d582896129",
                "type": "tool_result",
                "content": "1\tprint('hello')\n",
            }
        ],
    },
    "uuid": "4aedeb0f-dbf0-4d73-ba35-39fbb910a35b",
    "timestamp": "2026-11-29T14:24:38.636Z",
    "toolUseResult": {"type": "text", "file": {"filePath": "/home/dev/demo-app/app.py", "numLines": 2}},
    "sourceToolAssistantUUID": "13a0b57e-9d87-40b4-a30c-5bd8e9f1f48a",
    "userType": "external",
    "entrypoint": "sdk-cli",
    "cwd": "/home/dev/demo-app",
    "sessionId": "4cd0c8e6-36cd-4af9-9a2d-9191b504fada",
    "version": "2.1.332",
    "gitBranch": "HEAD",
}
ASSISTANT_LINE: dict[str, Any] = {
    "parentUuid": "d17d6cbc-9166-49fd-9417-9de56e980fad",
    "isSidechain": False,
    "message": {
        "id": "msg_c59e24d6c83b4064997a3d27",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-5-5",
        "content": [
            {
                "type": "tool_use",
                "id": "toolu_6304c8799f9e43d582896129",
                "name": "Read",
                "input": {"file_path": "/home/dev/demo-app/app.py"},
            }
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 13352,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": 12,
            "service_tier": "standard",
        },
    },
    "requestId": "req_011CXYZ",
    "type": "assistant",
    "uuid": "13a0b57e-9d87-40b4-a30c-5bd8e9f1f48a",
    "timestamp": "2026-11-29T14:24:38.620Z",
    "userType": "external",
    "entrypoint": "sdk-cli",
    "cwd": "/home/dev/demo-app",
    "sessionId": "4cd0c8e6-36cd-4af9-9a2d-9191b504fada",
    "version": "2.1.332",
    "gitBranch": "HEAD",
}
BOUNDARY_LINE: dict[str, Any] = {
    "parentUuid": None,
    "logicalParentUuid": "ff44c48a-10bc-4e6a-8229-9e9c8bf05269",
    "isSidechain": False,
    "type": "system",
    "subtype": "compact_boundary",
    "content": "Conversation compacted",
    "isMeta": False,
    "timestamp": "2026-11-29T14:24:42.664Z",
    "uuid": "992281a8-82ec-4de0-a4b1-e55e7ab8e049",
    "level": "info",
    "compactMetadata": {
        "trigger": "manual",
        "preTokens": 14791,
        "preservedSegment": {"headUuid": "ff44c48a", "anchorUuid": "ec92c508", "tailUuid": "ff44c48a"},
    },
    "sessionId": "4cd0c8e6-36cd-4af9-9a2d-9191b504fada",
    "version": "2.1.332",
}
SNAPSHOT_LINE: dict[str, Any] = {
    "type": "file-history-snapshot",
    "messageId": "480ab244-ab6b-4514-bebc-9ee7f75451d5",
    "snapshot": {
        "messageId": "480ab244-ab6b-4514-bebc-9ee7f75451d5",
        "trackedFileBackups": {
            "util.py": {
                "backupFileName": "7f2e923fda84009b@v2",
                "version": 2,
                "backupTime": "2026-11-29T14:24:40.798Z",
                "realParentDir": "/home/dev/demo-app",
            }
        },
        "timestamp": "2026-11-29T14:24:40.798Z",
    },
    "isSnapshotUpdate": False,
}
GOOD_LINES = [TOOL_RESULT_LINE, ASSISTANT_LINE, BOUNDARY_LINE, SNAPSHOT_LINE]


def _with(record: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `record` with the value at "a.b.0.c" replaced (or deleted when value is DELETE)."""
    out = copy.deepcopy(record)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node: Any = out
    for part in parents:
        node = node[part]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return out


DELETE = object()


@pytest.mark.parametrize("record", GOOD_LINES, ids=lambda r: f"{r['type']}")
def test_the_hand_made_base_lines_are_valid(record: dict[str, Any]) -> None:
    assert CHECKER.check(record) == []
    assert REFERENCE.is_valid(record)


@pytest.mark.parametrize(
    ("record", "path", "value", "pointer", "message"),
    [
        (TOOL_RESULT_LINE, "uuid", 3, "uuid", 'uuid: 3 is not of type "string"'),
        (TOOL_RESULT_LINE, "uuid", "", "uuid", 'uuid: "" should be non-empty'),
        (TOOL_RESULT_LINE, "uuid", DELETE, "", '(record): "uuid" is a required property'),
        (TOOL_RESULT_LINE, "parentUuid", DELETE, "", '(record): "parentUuid" is a required property'),
        (TOOL_RESULT_LINE, "parentUuid", 7, "parentUuid", 'parentUuid: 7 is not of type "string" or "null"'),
        (TOOL_RESULT_LINE, "sessionId", None, "sessionId", 'sessionId: null is not of type "string"'),
        (
            TOOL_RESULT_LINE,
            "isSidechain",
            "false",
            "isSidechain",
            'isSidechain: "false" is not of type "boolean"',
        ),
        (
            TOOL_RESULT_LINE,
            "timestamp",
            1795962278,
            "timestamp",
            'timestamp: 1795962278 is not of type "string"',
        ),
        (
            TOOL_RESULT_LINE,
            "timestamp",
            "yesterday",
            "timestamp",
            'timestamp: "yesterday" is not a valid RFC 3339 timestamp',
        ),
        (TOOL_RESULT_LINE, "message.role", "assistant", "message.role", 'message.role: "user" was expected'),
        (
            TOOL_RESULT_LINE,
            "message.content",
            5,
            "message.content",
            'message.content: 5 is not of type "string" or "array"',
        ),
        (TOOL_RESULT_LINE, "message", DELETE, "", '(record): "message" is a required property'),
        (
            TOOL_RESULT_LINE,
            "message.content.0.type",
            DELETE,
            "message.content[0]",
            'message.content[0]: "type" is a required property',
        ),
        (
            TOOL_RESULT_LINE,
            "message.content.0.tool_use_id",
            DELETE,
            "message.content[0]",
            'message.content[0]: "tool_use_id" is a required property',
        ),
        (
            TOOL_RESULT_LINE,
            "message.content.0.tool_use_id",
            3,
            "message.content[0].tool_use_id",
            'message.content[0].tool_use_id: 3 is not of type "string"',
        ),
        (
            TOOL_RESULT_LINE,
            "message.content.0.content",
            [{"type": "tool_reference"}],
            "message.content[0].content[0]",
            'message.content[0].content[0]: "tool_name" is a required property',
        ),
        (
            TOOL_RESULT_LINE,
            "message.content.0.content",
            [{"type": "image", "source": {"type": "base64"}}],
            "message.content[0].content[0].source",
            'message.content[0].content[0].source: "data" is a required property',
        ),
        (
            TOOL_RESULT_LINE,
            "toolUseResult",
            12,
            "toolUseResult",
            'toolUseResult: 12 is not of type "object", "string" or "array"',
        ),
        (ASSISTANT_LINE, "message.role", "user", "message.role", 'message.role: "assistant" was expected'),
        (
            ASSISTANT_LINE,
            "message.content.0.id",
            DELETE,
            "message.content[0]",
            'message.content[0]: "id" is a required property',
        ),
        (
            ASSISTANT_LINE,
            "message.content.0.input",
            "ls",
            "message.content[0].input",
            'message.content[0].input: "ls" is not of type "object"',
        ),
        (
            ASSISTANT_LINE,
            "message.usage.output_tokens",
            "12",
            "message.usage.output_tokens",
            'message.usage.output_tokens: "12" is not of type "integer"',
        ),
        (
            ASSISTANT_LINE,
            "message.content",
            [{"type": "thinking", "signature": "x"}],
            "message.content[0]",
            'message.content[0]: "thinking" is a required property',
        ),
        (
            BOUNDARY_LINE,
            "parentUuid",
            "ff44c48a-10bc-4e6a-8229-9e9c8bf05269",
            "parentUuid",
            'parentUuid: "ff44c48a-10bc-4e6a-8229-9e9c8bf05269" is not of type "null"',
        ),
        (
            BOUNDARY_LINE,
            "compactMetadata.preservedSegment.anchorUuid",
            DELETE,
            "compactMetadata.preservedSegment",
            'compactMetadata.preservedSegment: "anchorUuid" is a required property',
        ),
        (SNAPSHOT_LINE, "messageId", DELETE, "", '(record): "messageId" is a required property'),
        (SNAPSHOT_LINE, "type", 3, "type", 'type: 3 is not of type "string"'),
        (SNAPSHOT_LINE, "type", "", "type", 'type: "" should be non-empty'),
        (SNAPSHOT_LINE, "type", DELETE, "", '(record): "type" is a required property'),
    ],
)
def test_damage_is_schema_invalid_with_a_pointer(
    record: dict[str, Any], path: str, value: Any, pointer: str, message: str
) -> None:
    problems = CHECKER.check(_with(record, path, value))
    assert problems, "damage not detected"
    assert all(p.code == SCHEMA_INVALID and p.severity == "error" for p in problems)
    assert message in [p.message for p in problems]
    assert pointer in [p.pointer for p in problems]


def test_a_boundary_without_compact_metadata_is_not_a_schema_error() -> None:
    # Claude Code resumes it; the chain warning compact-metadata-missing names it, with its
    # fix (tests/model/test_boundary_meta.py).
    assert CHECKER.check(_with(BOUNDARY_LINE, "compactMetadata", DELETE)) == []


def test_keys_that_are_not_identifiers_are_quoted_in_the_path() -> None:
    record = copy.deepcopy(SNAPSHOT_LINE)
    record["snapshot"]["trackedFileBackups"]["util.py"]["backupTime"] = "2026-11-29 14:24"
    (problem,) = CHECKER.check(record)
    assert problem.pointer == 'snapshot.trackedFileBackups["util.py"].backupTime'
    assert problem.message == (
        'snapshot.trackedFileBackups["util.py"].backupTime: "2026-11-29 14:24" is not a valid RFC 3339 timestamp'
    )


@pytest.mark.parametrize("value", [42, "massive error", [1], None, True, 1.5])
def test_a_value_that_is_not_an_object_is_one_error_not_an_exception(value: Any) -> None:
    (problem,) = CHECKER.check(value)
    assert (problem.code, problem.severity, problem.pointer) == (SCHEMA_INVALID, "error", "")
    assert problem.message.endswith('is not of type "object"')


def test_huge_values_are_shortened_in_messages() -> None:
    record = _with(TOOL_RESULT_LINE, "message.content", {"blob": "x" * 1_000_000})
    (problem,) = CHECKER.check(record)
    assert problem.pointer == "message.content"
    assert len(problem.message) < 200
    assert problem.message.endswith('is not of type "string" or "array"')


def test_a_record_with_many_errors_is_capped() -> None:
    record = _with(ASSISTANT_LINE, "message.content", [{"type": "tool_use"}] * 50)
    problems = CHECKER.check(record)
    assert len(problems) == MAX_PROBLEMS_PER_RECORD
    assert problems[-1].message.endswith("more schema errors in this record")


# --------------------------------------------------------------------------- openness


def test_an_unknown_type_is_one_warning() -> None:
    for record in ({"type": "brand-new-record", "whatever": [1, 2]}, {"type": "tool_use", "uuid": 3}):
        assert CHECKER.check(record) == [
            SchemaProblem(
                UNKNOWN_TYPE,
                "warning",
                f"type: unknown entry type {record['type']!r}, not checked "
                "(new Claude Code versions add types; readers pass them through)",
                "type",
            )
        ]
        assert REFERENCE.is_valid(record)


@pytest.mark.parametrize(
    ("record", "path", "value"),
    [
        (TOOL_RESULT_LINE, "someField2099", {"nested": [1, None]}),
        (TOOL_RESULT_LINE, "message.someField2099", 1),
        (TOOL_RESULT_LINE, "message.content.0.someField2099", "x"),
        (ASSISTANT_LINE, "message.usage.someField2099", {"a": 1}),
        (ASSISTANT_LINE, "message.content.0.caller", {"type": "direct"}),
        (BOUNDARY_LINE, "compactMetadata.someField2099", True),
        (SNAPSHOT_LINE, "snapshot.someField2099", []),
        # new block types, subtypes, progress and attachment types
        (ASSISTANT_LINE, "message.content", [{"type": "mcp_tool_use", "id": "x", "server_name": "s"}]),
        (TOOL_RESULT_LINE, "message.content.0.content", [{"type": "search_result", "source": "s"}]),
        (BOUNDARY_LINE, "subtype", "brand_new_subtype"),
    ],
)
def test_extra_fields_and_new_kinds_are_allowed(record: dict[str, Any], path: str, value: Any) -> None:
    assert CHECKER.check(_with(record, path, value)) == []


def test_new_attachment_and_progress_types_are_allowed() -> None:
    envelope = {
        k: TOOL_RESULT_LINE[k] for k in ("parentUuid", "isSidechain", "uuid", "timestamp", "sessionId")
    }
    attachment = {**envelope, "type": "attachment", "attachment": {"type": "hologram", "beams": 3}}
    progress = {
        **envelope,
        "type": "progress",
        "data": {"type": "teleport_progress", "percent": 0.5},
        "toolUseID": "t",
        "parentToolUseID": "t",
    }
    assert CHECKER.check(attachment) == []
    assert CHECKER.check(progress) == []
    assert [p.pointer for p in CHECKER.check({**attachment, "attachment": {"beams": 3}})] == ["attachment"]


def test_the_1_0_x_system_line_without_subtype_needs_content() -> None:
    legacy = {
        k: v for k, v in BOUNDARY_LINE.items() if k not in ("subtype", "compactMetadata", "logicalParentUuid")
    }
    legacy.update(
        parentUuid="992281a8", content="Claude Opus 4 limit reached, now using Sonnet 4", level="warning"
    )
    assert CHECKER.check(legacy) == []
    del legacy["content"]
    assert [p.message for p in CHECKER.check(legacy)] == ['(record): "content" is a required property']


# --------------------------------------------------------------------------- fast path == reference


def test_json_path() -> None:
    assert json_path(["message", "content", 0, "tool_use_id"]) == "message.content[0].tool_use_id"
    assert json_path([]) == ""
    assert json_path([0]) == "[0]"
    assert json_path(["a b", "c"]) == '["a b"].c'


def test_fast_schemas_keep_no_refs_to_other_files() -> None:
    documents = load_schema_documents()
    for name in documents:
        if name in ("defs.schema.json", ENTRY_SCHEMA):
            continue
        text = json.dumps(fast_schema(documents, name))
        assert ".schema.json" not in text, name
        assert '"description"' not in text, name


def _small_records() -> list[Any]:
    records = [v for _, _, v in _all_records() if len(orjson.dumps(v)) < 20_000]
    return records + copy.deepcopy(GOOD_LINES)


SMALL_RECORDS = _small_records()
ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    1.5,
    "",
    "x",
    "2026-01-01T00:00:00Z",
    [],
    {},
    [{}],
    {"type": "text"},
    [None],
]


def _slots(value: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key or index) pair in `value`."""
    if isinstance(value, dict):
        for key, item in value.items():
            out.append((value, key))
            _slots(item, out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((value, index))
            _slots(item, out)
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fast_path_agrees_with_the_reference_on_mutated_records(data: st.DataObject) -> None:
    record = copy.deepcopy(data.draw(st.sampled_from(SMALL_RECORDS), label="record"))
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        slots = _slots(record, [])
        if not slots:
            break
        container, key = data.draw(st.sampled_from(slots), label="slot")
        if data.draw(st.booleans(), label="delete"):
            del container[key]
        else:
            container[key] = copy.deepcopy(data.draw(st.sampled_from(ODD_VALUES), label="value"))
    fast_ok = not _errors(record)
    assert fast_ok == REFERENCE.is_valid(record), orjson.dumps(record)[:500]


def test_fast_path_agrees_with_the_reference_on_every_single_field_deletion() -> None:
    # One record per shape (type, subtype, data.type, attachment.type, first block type), then
    # every key deleted in turn: this reaches each `required` and each if/then branch.
    shapes: dict[tuple[Any, ...], Any] = {}
    for _, _, value in _all_records():
        if not isinstance(value, dict) or len(orjson.dumps(value)) > 50_000:
            continue
        content = _get(value.get("message"), "content")
        block = _get(content[0], "type") if isinstance(content, list) and content else None
        key = (
            value.get("type"),
            value.get("subtype"),
            _get(value.get("data"), "type"),
            _get(value.get("attachment"), "type"),
            block,
        )
        shapes.setdefault(key, value)
    assert len(shapes) > 60
    for value in shapes.values():
        for container, key in _slots(value, []):
            mutated = copy.deepcopy(value)
            # re-find the slot in the copy by walking the same path
            path = _path_to(value, container, key)
            target: Any = mutated
            for part in path[:-1]:
                target = target[part]
            del target[path[-1]]
            assert (not _errors(mutated)) == REFERENCE.is_valid(mutated), (path, orjson.dumps(mutated)[:300])


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _path_to(root: Any, container: Any, key: Any) -> list[Any]:
    """The key path from `root` to container[key] (containers compared by identity)."""
    if root is container:
        return [key]
    items = root.items() if isinstance(root, dict) else enumerate(root) if isinstance(root, list) else ()
    for k, v in items:
        if isinstance(v, (dict, list)):
            found = _path_to(v, container, key)
            if found:
                return [k, *found]
    return []


def test_a_fresh_checker_gives_the_same_answers() -> None:
    fresh = SchemaChecker(load_schema_documents())
    assert fresh.known_types == CHECKER.known_types
    for record in GOOD_LINES:
        assert fresh.check(record) == []
    assert fresh.check(_with(TOOL_RESULT_LINE, "uuid", 3)) == CHECKER.check(
        _with(TOOL_RESULT_LINE, "uuid", 3)
    )


def test_every_entry_type_compiles_on_first_use_and_unknown_types_raise_key_error() -> None:
    # The fast validators are compiled type by type when a record first needs one: a schema
    # that did not compile would otherwise only show on a file holding its type.
    fresh = SchemaChecker(load_schema_documents())
    fast = fresh.fast_validators
    assert len(fast) == 0
    for kind in sorted(fresh.known_types):
        assert hasattr(fast[kind], "is_valid")
    assert set(fast) == fresh.known_types
    for odd in ("no-such-type", "", 5):
        with pytest.raises(KeyError):
            fast[odd]  # type: ignore[index]
    assert fresh.check({"type": "no-such-type"})[0].code == "unknown-type"


def test_the_package_copy_of_the_schemas_is_looked_for_inside_the_package() -> None:
    first, second = schema_module._schema_dirs()
    assert first == ROOT / "transcript_tools" / "schemas"  # where the wheel puts them
    assert second == ROOT / "schemas"


# SCRT-HQ/runlog 0/full.jsonl (commit 03654b1b), line 3, byte for byte: a 2.1.266 record the
# fixture cut from that file leaves out (fixtures/real/SOURCES.tsv).
ARTIFACT_COMMENT_MONITOR = (
    b'{"type":"artifact-comment-monitor","v":1,"sessionId":"e72ee5b1-7270-4fac-abcc-53994b037403",'
    b'"artifacts":{"4ff2fe2d-f8f8-4f09-b7fa-9c72773d4c3c":{"state":"armed","writtenAtMs":1789319248612,'
    b'"title":"Runlog Market Position"},"1d2fa419-59c9-49e2-8855-cb7eea063ada":{"state":"armed",'
    b'"writtenAtMs":1789318864812,"title":"The Socket Runs One Way"},"bb053849-cb2d-4a8f-b934-9a9f93250f54":'
    b'{"state":"armed","writtenAtMs":1789261875127,"title":"Runlog Testing Pack Plan"},'
    b'"a5ba0233-398a-4642-81ff-152676cda94a":{"state":"armed","writtenAtMs":1789261875095,'
    b'"title":"Runlog Open Calls"},"1fc61694-63a0-4eaa-9a6f-59a36509b028":{"state":"armed",'
    b'"writtenAtMs":1789261875095,"title":"Runlog UX Plan"}}}'
)


def test_the_2_1_266_artifact_comment_monitor_record_is_known_and_checked() -> None:
    rec = orjson.loads(ARTIFACT_COMMENT_MONITOR)
    assert CHECKER.check(rec) == []  # was an unknown-type warning on every 2.1.266 session holding one
    bad = orjson.loads(
        ARTIFACT_COMMENT_MONITOR.replace(b'"writtenAtMs":1789319248612', b'"writtenAtMs":"soon"', 1)
    )
    [problem] = CHECKER.check(bad)
    assert problem.code == "schema-invalid"
    assert problem.pointer == 'artifacts["4ff2fe2d-f8f8-4f09-b7fa-9c72773d4c3c"].writtenAtMs'


# Uplift-Foundation/Claude-Buddy tests/IntegrationTests/TranscriptIdentityWindowTests.cs
# (commit a25635a1), lines 25 and 31: "row shapes taken verbatim off a real machine (26 Aug
# 2026)", byte for byte as the transcript holds them.
HISTORY_SUPPRESSION = (
    b'{"type":"history-suppression","sessionId":"0e9677a5-8813-4800-8b8b-e786d701c097",'
    b'"cause":"fork_inherit","ts":"2026-08-26T17:32:07.036Z"}'
)
AGENT_COLOR = (
    b'{"type":"agent-color","agentColor":"green","sessionId":"cd7a3a49-fb64-47a7-9dec-471ee884afc1"}'
)


def test_the_2_1_24x_fork_and_agent_records_are_known_and_checked() -> None:
    for line in (HISTORY_SUPPRESSION, AGENT_COLOR):
        assert CHECKER.check(orjson.loads(line)) == [], line  # were unknown-type warnings
    [problem] = CHECKER.check(orjson.loads(AGENT_COLOR.replace(b'"green"', b"7")))
    assert problem.code == "schema-invalid" and problem.pointer == "agentColor"


def _load_policies(binary: bytes) -> dict[str, str]:
    """Claude Code's own table of the record types it loads from a transcript, each with
    how it loads them (``"custom-title":"last-wins"``, ``user:"transcript"`` …): the
    object literal holding ``"custom-title":"last-wins"`` in the bundled binary."""
    at = binary.find(b'"custom-title":"last-wins"')
    assert at > 0, "the load-policy table moved: read the binary again"
    start, end = binary.rfind(b"={", 0, at) + 1, binary.find(b"}", at) + 1
    pairs = re.findall(rb'(?:"([a-z-]+)"|([a-z]+)):"([a-z-]+)"', binary[start:end])
    return {(quoted or bare).decode(): policy.decode() for quoted, bare, policy in pairs}


@pytest.mark.claude
def test_every_record_type_claude_code_2_1_332_loads_is_known_to_the_schemas() -> None:
    # The type names and fields of tt's schemas for 2.1.332's client-state records come from
    # its writer in the bundled binary (docs/format.md §3.6); this pins the list: a pin that
    # loads a type tt does not know fails here, not as an unknown-type warning on users' files.
    from tests.support.claude_cli import bundled_cli

    cli = bundled_cli()
    if cli is None:
        pytest.skip("claude-agent-sdk's bundled Claude Code is not installed")
    binary = cli.path.read_bytes()
    policies = _load_policies(binary)
    assert policies["user"] == "transcript" and policies["history-suppression"] == "last-wins"
    assert len(policies) >= 45
    assert set(policies) - CHECKER.known_types == set()
    # Written but not in that table: metadata its writer batches with the others, and the
    # workflow journal's records (its journal reader's cases).
    written = {"repl-mode", "host-row", "hybrid-organization", "launched", "started", "result", "failed"}
    for t in written:
        assert b'{type:"' + t.encode() + b'"' in binary, t
    assert written - CHECKER.known_types == set()


def test_the_last_prompt_shapes_2_1_332_writes_are_valid() -> None:
    # Its writer (bundled binary): no leafUuid while the session has no leaf yet, and a
    # withdrawn leaf checkpoint as leafUuid null with explicit: true.
    sid = "4cd0c8e6-36cd-4af9-9a2d-9191b504fada"
    for rec in (
        {"type": "last-prompt", "lastPrompt": "hi", "sessionId": sid},
        {"type": "last-prompt", "leafUuid": None, "explicit": True, "sessionId": sid},
    ):
        assert CHECKER.check(rec) == [], rec
    [problem] = CHECKER.check({"type": "last-prompt", "leafUuid": 7, "sessionId": sid})
    assert problem.pointer == "leafUuid"
