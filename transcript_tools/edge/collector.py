"""Pausing Python's cyclic garbage collector around a pass that makes many small objects
and no reference cycles (records decoded line by line, a chain index, prepared rows):
refcounting frees them all, and the collector's passes would only rescan them (a sixth of
`tt stats`'s time on the `tt ls` bench set, ~15% of `tt validate` on a 50 MB file).

Invariants: the pause is process-wide, as the gc module is; collection resumes when the
block ends, whatever happens in it; a nested pause leaves resuming to the outer one.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off for the block (and back on after, if it was on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
