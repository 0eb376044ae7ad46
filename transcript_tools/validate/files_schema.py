"""Reading tt's JSON Schemas (`schemas/*.schema.json`) for `validate.schema`: the file side.

The wheel ships the schemas inside the package (pyproject: hatch force-include
``schemas`` -> ``transcript_tools/schemas``); editable installs and source checkouts read
the repository's top-level folder. `default_checker` is the process-wide
`schema.SchemaChecker` built from them.

Invariants: reads the schema files only, once per process (`default_checker` is cached);
a missing schema folder is a broken install, answered with a traceback, not an exit code.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import orjson

from .schema import ENTRY_SCHEMA, SchemaChecker

_SCHEMA_SUFFIX = ".schema.json"


def _schema_dirs() -> list[Path]:
    # The package's copy (the wheel), then the repository's (module docstring). A plain
    # path, not importlib.resources: the wheel installs as files, and importing
    # importlib.resources (tempfile, shutil, zipfile) cost every run ~4 ms of start-up.
    here = Path(__file__).resolve()
    return [here.parents[1] / "schemas", here.parents[2] / "schemas"]


def load_schema_documents() -> dict[str, dict[str, Any]]:
    """Every `*.schema.json`, by file name, from the first place that has `entry.schema.json`."""
    tried = _schema_dirs()
    for folder in tried:
        if not (folder / ENTRY_SCHEMA).is_file():
            continue
        return {
            item.name: orjson.loads(item.read_bytes())
            for item in folder.iterdir()
            if item.name.endswith(_SCHEMA_SUFFIX)
        }
    # A broken install, not a problem in a transcript: a traceback is the right answer.
    raise FileNotFoundError(
        f"tt's JSON Schemas ({ENTRY_SCHEMA}) are in none of: {', '.join(map(str, tried))}"
    )


@cache
def default_checker() -> SchemaChecker:
    """The process-wide checker (reading the schemas takes ~3 ms; each entry type's validator
    is compiled when a record of that type first comes)."""
    return SchemaChecker(load_schema_documents())
