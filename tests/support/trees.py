"""Folder helpers shared by the CLI tests: copy a fixture config dir, fingerprint a tree.

`digest` is how tests prove that a command left its input untouched (every file's
sha256, by relative path); `writable_copy` copies a read-only shared fixture so a test
may write into the copy.
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


def writable_copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    for p in [dest, *dest.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    return dest
