"""Folder helpers shared by the tests: stage a fixture, fingerprint a tree.

`stage` is the one way a test gets a fixture it may write into (a config dir such as
`paths.CONFIG_332`, a project folder): a copy under the test's ``tmp_path``, writable, since
shared fixtures may be read-only and Claude Code and tt append to the transcripts they resume.
`digest` is how tests prove that a command left its input untouched (every file's sha256, by
relative path).
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path


def digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def stage(src: Path, dest: Path) -> Path:
    """A writable copy of the folder ``src`` at ``dest`` (which must not exist); ``dest``."""
    shutil.copytree(src, dest, symlinks=True)
    make_writable(dest)
    return dest


def make_writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)
