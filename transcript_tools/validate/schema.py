"""Check one decoded transcript record against tt's JSON Schemas (`schemas/*.schema.json`).

The schemas (JSON Schema 2020-12) describe every entry type seen in real Claude Code files from
1.0.51 to 2.1.332; `entry.schema.json` dispatches on `type`. They are the single source of truth:
this module only decides how to run them fast (`files_schema` reads them).

Two validators run the same schemas:

- the *fast path*, `jsonschema-rs` (Rust), answers valid/invalid. Python picks the entry type's
  schema (one dict lookup) and Rust checks the record in place, without converting it. A valid
  record costs only that: about 2 us for a typical line, 0.6x what `orjson.loads` spent on it.
- the *reference*, `jsonschema` (Python), runs only on a record the fast path rejected, to say
  what is wrong and where. It runs the schema files as written.

For speed (jsonschema-rs spends roughly 0.05-0.1 us per keyword it evaluates) the fast path
compiles a derived form of each entry schema: `$ref`s inlined (a recursive one becomes a local
`$defs` entry), annotations dropped, the envelope `allOf` folded into the entry, and keywords
dropped that something else already proves (the entry's own `type` const, which the dispatch
on `type` chose; in a dispatch `then`, what its `if` tested; in an `if`, what the enclosing
schema asserts). Each rewrite keeps the set of valid instances the same; `tests/validate/test_schema.py`
checks that the two validators agree on every real fixture line and on mutated copies of them.

Invariants:
- Pure: no printing, no clock, no I/O. The schema documents are handed to the constructor;
  `validate.files_schema` reads them (from the installed package, else the repository's
  top-level `schemas/`) and keeps the process-wide checker.
- `check` never raises for any JSON value; a valid record gives `[]`.
- An unknown but well-formed `type` gives exactly one "unknown-type" warning and no errors:
  Claude Code adds record types every few releases and readers must pass them through.
- Unknown fields are never an error (the schemas allow them everywhere).
"""

from __future__ import annotations

import ast
import json
import re
import reprlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jsonschema_rs

if TYPE_CHECKING:
    import jsonschema

__all__ = [
    "SCHEMA_INVALID",
    "UNKNOWN_TYPE",
    "SchemaChecker",
    "SchemaProblem",
]

SCHEMA_INVALID = "schema-invalid"
UNKNOWN_TYPE = "unknown-type"

ENTRY_SCHEMA = "entry.schema.json"
# A record with more errors than this is reported with its first ones and a count.
MAX_PROBLEMS_PER_RECORD = 20


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """One way a record does not fit the schemas."""

    code: str  # SCHEMA_INVALID (error) | UNKNOWN_TYPE (warning)
    severity: str  # "error" | "warning"
    message: (
        str  # human text incl. the JSON path: "message.content[0].tool_use_id: 3 is not of type 'string'"
    )
    pointer: str  # JSON path of the offending value, e.g. "message.content[0]"; "" for the record itself


# --------------------------------------------------------------------------- the documents


def _entry_types(entry: Mapping[str, Any]) -> dict[str, str]:
    """type value -> schema file name, read from entry.schema.json's if/then dispatch."""
    out: dict[str, str] = {}
    for case in entry["allOf"]:
        value = case["if"]["properties"]["type"]["const"]
        out[value] = case["then"]["$ref"]
    return out


# --------------------------------------------------------------------------- fast-path derivation

# Keywords whose value is a subschema, a list of them, or a name -> subschema map. Everything
# else (const, enum, required, pattern, ...) is data and is copied as is.
_SUBSCHEMA = frozenset({"additionalProperties", "items", "contains", "not", "propertyNames"}).union(
    {"if", "then", "else", "unevaluatedItems", "unevaluatedProperties"}
)
_SUBSCHEMA_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SUBSCHEMA_MAP = frozenset({"properties", "patternProperties", "dependentSchemas", "$defs"})
# Annotations (and identifiers, meaningless once refs are inlined) do not affect validity.
_DROPPED = frozenset({"$schema", "$id", "$defs", "$comment", "title", "description", "examples", "default"})


def _map_subschemas(
    node: dict[str, Any], f: Callable[[Any], Any], drop: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """A copy of `node` without the `drop` keywords and with `f` applied to each direct subschema."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in drop:
            continue
        if key in _SUBSCHEMA:
            out[key] = f(value)
        elif key in _SUBSCHEMA_LIST:
            out[key] = [f(v) for v in value]
        elif key in _SUBSCHEMA_MAP:
            out[key] = {k: f(v) for k, v in value.items()}
        else:
            out[key] = value
    return out


class _Inliner:
    """Inline `$ref`s of one entry schema; a ref met again inside itself becomes a local `$defs` entry."""

    def __init__(self, documents: Mapping[str, Mapping[str, Any]]) -> None:
        self._documents = documents
        self._hoisted: dict[str, str] = {}  # absolute ref -> local $defs name

    def _target(self, ref: str, base: str) -> tuple[str, str, Any]:
        name, _, fragment = ref.partition("#")
        name = name or base
        node: Any = self._documents[name]
        for part in filter(None, fragment.split("/")):
            node = node[part]
        return f"{name}#{fragment}", name, node

    def walk(self, node: Any, base: str, stack: frozenset[str]) -> Any:
        if not isinstance(node, dict):
            return node  # a boolean schema
        out = _map_subschemas(node, lambda sub: self.walk(sub, base, stack), _DROPPED | {"$ref"})
        if "$ref" not in node:
            return out
        key, name, target = self._target(node["$ref"], base)
        if key in stack:
            local = self._hoisted.setdefault(key, f"r{len(self._hoisted)}")
            inlined: Any = {"$ref": f"#/$defs/{local}"}
        else:
            inlined = self.walk(target, name, stack | {key})
        # 2020-12: a $ref beside other keywords applies in addition to them.
        return {"allOf": [inlined], **out} if out else inlined

    def root(self, name: str) -> dict[str, Any]:
        schema: dict[str, Any] = self.walk(self._documents[name], name, frozenset({f"{name}#"}))
        defs: dict[str, Any] = {}
        done = 0
        while done < len(self._hoisted):  # walking a hoisted schema can hoist another
            key, local = list(self._hoisted.items())[done]
            _, base, target = self._target(key, name)
            defs[local] = self.walk(target, base, frozenset({key}))
            done += 1
        if defs:
            schema["$defs"] = defs
        return schema


def _simplify(node: Any) -> Any:
    """Bottom-up rewrites of a subschema that keep its set of valid instances (see `_prove`, `_fold`, `_trim`)."""
    if not isinstance(node, dict):
        return node
    return _trim(_fold(_prove(_map_subschemas(node, _simplify))))


def _prove(node: dict[str, Any]) -> dict[str, Any]:
    """In `if {object, required [f], f: const} then T`, T need not check `type: object` or that const."""
    cond, then = node.get("if"), node.get("then")
    if not (
        isinstance(cond, dict)
        and isinstance(then, dict)
        and cond.get("type") == "object"
        and len(cond.get("properties", {})) == 1
        and set(cond.get("required", ())) == set(cond["properties"])
    ):
        return node
    ((field, proved),) = cond["properties"].items()
    then = dict(then)
    if then.get("type") == "object":
        del then["type"]
    properties = then.get("properties")
    if isinstance(properties, dict) and properties.get(field) == proved:
        then["properties"] = {k: v for k, v in properties.items() if k != field}
    return {**node, "then": then}


_FOLDABLE = frozenset({"type", "required", "properties"})


def _fold(node: dict[str, Any]) -> dict[str, Any]:
    """Merge `allOf` members made only of type/required/properties into the node itself.

    Sound when the member's type equals the node's and their property names are disjoint:
    `properties` then checks each name once either way. (The envelope `allOf` of every entry.)
    """
    members = node.get("allOf")
    if not members:
        return node
    out = {k: v for k, v in node.items() if k != "allOf"}
    kept = []
    for member in members:
        if (
            isinstance(member, dict)
            and member
            and set(member) <= _FOLDABLE
            and member.get("type", out.get("type")) == out.get("type")
            and not set(member.get("properties", {})) & set(out.get("properties", {}))
        ):
            if "required" in member:
                out["required"] = list(dict.fromkeys([*out.get("required", []), *member["required"]]))
            if "properties" in member:
                out["properties"] = {**out.get("properties", {}), **member["properties"]}
        else:
            kept.append(member)
    if kept:
        out["allOf"] = kept
    return out


def _trim(node: dict[str, Any]) -> dict[str, Any]:
    """Drop from the `if`s of the node's dispatch chains what the node itself asserts.

    When the node's own `type: object` / `required` fail, the whole node fails whatever a branch
    says, so an `if` may assume them.
    """
    if node.get("type") != "object" or "allOf" not in node:
        return node
    required = set(node.get("required", ()))

    def trim(step: Any) -> Any:
        if not isinstance(step, dict) or not isinstance(step.get("if"), dict):
            return step
        cond = dict(step["if"])
        if cond.get("type") == "object":
            del cond["type"]
        if set(cond.get("required", ())) <= required:
            cond.pop("required", None)
        out = {**step, "if": cond}
        if "else" in out:
            out["else"] = trim(out["else"])
        return out

    return {**node, "allOf": [trim(member) for member in node["allOf"]]}


def fast_schema(documents: Mapping[str, Mapping[str, Any]], name: str) -> dict[str, Any]:
    """The derived schema the fast path compiles for the entry schema file `name`.

    Valid only for records whose `type` already equals the file's type (the caller dispatched on it).
    """
    schema: dict[str, Any] = _simplify(_Inliner(documents).root(name))
    properties = schema.get("properties", {})
    if isinstance(properties.get("type"), dict) and "const" in properties["type"]:
        schema["properties"] = {k: v for k, v in properties.items() if k != "type"}
    return schema


# --------------------------------------------------------------------------- messages

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxlist = _repr.maxdict = 4
_repr.maxlevel = 2


def json_path(parts: Iterable[str | int]) -> str:
    """["message", "content", 0, "tool_use_id"] -> "message.content[0].tool_use_id"."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def _show(value: Any, depth: int = 0) -> str:
    """A value as JSON writes it (null, true, "text"), cut short (a record can be
    megabytes): messages speak of the record's JSON, not of the Python objects it was
    read into."""
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 60 else value[:57] + "...", ensure_ascii=False)
    if isinstance(value, dict):
        if depth >= 2:
            return "{...}" if value else "{}"
        items = [f"{_show(str(k))}: {_show(v, depth + 1)}" for k, v in list(value.items())[:4]]
        return "{" + ", ".join(items + (["..."] if len(value) > 4 else [])) + "}"
    if isinstance(value, list):
        if depth >= 2:
            return "[...]" if value else "[]"
        shown = [_show(v, depth + 1) for v in value[:4]]
        return "[" + ", ".join(shown + (["..."] if len(value) > 4 else [])) + "]"
    try:
        return json.dumps(value)
    except (TypeError, ValueError):  # not a JSON value (a caller's object)
        return _repr.repr(value)


def _describe(error: jsonschema.ValidationError) -> str:
    """jsonschema's message in JSON's words (null, not None; "text", not 'text'), with the
    offending value shortened (it can be megabytes)."""
    kind, expected = error.validator, error.validator_value
    title = error.schema.get("title") if isinstance(error.schema, dict) else None
    value = _show(error.instance)
    if kind == "pattern" and title:
        return f"{value} is not a valid {title}"
    if kind == "type":
        names = [expected] if isinstance(expected, str) else list(expected)
        quoted = [json.dumps(n) for n in names]
        either = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
        return f"{value} is not of type {either}"
    if kind == "const":
        return f"{_show(expected)} was expected"
    if kind == "pattern":
        return f"{value} does not match {json.dumps(expected)}"
    if kind == "required" and error.message.endswith(" is a required property"):
        name = error.message[: -len(" is a required property")]
        try:
            name = json.dumps(ast.literal_eval(name), ensure_ascii=False)
        except (ValueError, SyntaxError):
            pass
        return f"{name} is a required property"
    message = str(error.message)
    shown = repr(error.instance)
    if message.startswith(shown):  # "'' should be non-empty", "[] is too short", ...
        message = value + message[len(shown) :]
    elif len(message) > 200:
        return f"{value}: {message[-120:]}"
    return message if len(message) <= 200 else f"{message[:197]}..."


# --------------------------------------------------------------------------- the checker


class _Compiled(dict[str, Any]):
    """Entry type -> compiled fast-path validator, each compiled when first asked for
    (``compiled[kind]``); an unknown type raises KeyError, as a plain dict would."""

    def __init__(self, documents: Mapping[str, Mapping[str, Any]], files: Mapping[str, str]) -> None:
        super().__init__()
        self._documents = documents
        self._files = files

    def __missing__(self, kind: str) -> Any:
        name = self._files[kind]  # KeyError for a type the schemas do not know
        validator = self[kind] = jsonschema_rs.validator_for(fast_schema(self._documents, name))
        return validator


class SchemaChecker:
    """Checks records against the schemas. Build once (each type's schema is compiled at its first record), call `check` per record."""

    __slots__ = ("_documents", "_fast", "_files", "_reference", "known_types")

    known_types: frozenset[str]

    def __init__(self, documents: Mapping[str, dict[str, Any]]) -> None:
        """``documents``: every schema file's JSON by file name (`files_schema.load_schema_documents`)."""
        self._documents = dict(documents)
        self._files = _entry_types(self._documents[ENTRY_SCHEMA])  # type value -> schema file
        self.known_types = frozenset(self._files)
        # Compiled on first use, type by type: a file uses a handful of the ~30 types, and
        # deriving and compiling one costs ~0.3 ms of every run's start-up.
        self._fast = _Compiled(self._documents, self._files)
        # Built on the first invalid record: valid files never import jsonschema (~0.1 s).
        self._reference: dict[str, jsonschema.Draft202012Validator] = {}

    @property
    def fast_validators(self) -> Mapping[str, Any]:
        """Entry type -> compiled jsonschema-rs validator (``.is_valid(record)``).

        For hot loops that answer the common case (a valid record) without a Python call:
        when ``fast_validators[record["type"]].is_valid(record)`` is not True (or raises
        KeyError/TypeError), `check` says what is wrong.
        """
        return self._fast

    def check(self, record: dict[str, Any]) -> list[SchemaProblem]:
        """[] for a valid record; otherwise what is wrong, each with its JSON path.

        Any decoded JSON value is accepted: a line holding `42` or `[]` gets a schema-invalid
        problem, not an exception.
        """
        # The hot path is two subscripts and one Rust call: every Python operation here costs as
        # much as a schema keyword. Anything unusual raises and is sorted out below.
        try:
            if self._fast[record["type"]].is_valid(record):
                return []
        except (KeyError, TypeError):  # not an object, no/unhashable/unknown `type`
            kind = record.get("type") if isinstance(record, dict) else None
            if isinstance(kind, str) and kind and kind not in self._files:
                return [
                    SchemaProblem(
                        UNKNOWN_TYPE,
                        "warning",
                        f"type: unknown entry type {kind!r}, not checked "
                        "(new Claude Code versions add types; readers pass them through)",
                        "type",
                    )
                ]
            # Not an object, or no usable `type`: the dispatcher says which.
            return self._explain(ENTRY_SCHEMA, record)
        return self._explain(self._files[record["type"]], record)

    def reference_validator(self, name: str) -> jsonschema.Draft202012Validator:
        """The `jsonschema` (reference) validator of the schema file `name`, run as written."""
        validator = self._reference.get(name)
        if validator is None:
            import jsonschema
            import referencing
            from referencing.jsonschema import DRAFT202012

            registry: Any = referencing.Registry().with_resources(
                (doc["$id"], DRAFT202012.create_resource(doc)) for doc in self._documents.values()
            )
            validator = jsonschema.Draft202012Validator(self._documents[name], registry=registry)
            self._reference[name] = validator
        return validator

    def _explain(self, name: str, record: Any) -> list[SchemaProblem]:
        found: dict[str, SchemaProblem] = {}
        for error in self.reference_validator(name).iter_errors(record):
            pointer = json_path(error.absolute_path)
            message = f"{pointer or '(record)'}: {_describe(error)}"
            found.setdefault(message, SchemaProblem(SCHEMA_INVALID, "error", message, pointer))
        problems = sorted(found.values(), key=lambda p: (p.pointer, p.message))
        if not problems:
            # The two validators disagree: a bug in tt (tests pin their agreement). Say so rather
            # than pass the record silently or stop the user's whole run.
            message = "(record): rejected by jsonschema-rs but not by jsonschema; please report this tt bug"
            return [SchemaProblem(SCHEMA_INVALID, "error", message, "")]
        if len(problems) > MAX_PROBLEMS_PER_RECORD:
            extra = len(problems) - MAX_PROBLEMS_PER_RECORD + 1
            problems = problems[: MAX_PROBLEMS_PER_RECORD - 1]
            problems.append(
                SchemaProblem(
                    SCHEMA_INVALID, "error", f"(record): {extra} more schema errors in this record", ""
                )
            )
        return problems
