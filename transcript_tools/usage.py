"""The disk side of `tt stats`: stream a session's files into `stats.Collector`.

Invariants:
- Streams every file (any size, bounded memory: the collector keeps one small record per
  API call and tool call, never the lines).
- Damage never raises: unreadable pieces of lines are reported as `stats.SkippedLine`s
  and the rest of the file is counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from .catalog import LegacyAgents, agent_files
from .lines import Entry
from .reader import iter_lines
from .stats import Collector, Stats, combine
from .session import session_id_from_name


def session_stats(path: Path, *, subagents: bool = True, agents: Callable[[Path], list[Path]] = agent_files) -> Stats:
    """Statistics of one session: its main file and (by default) its subagent files."""
    c = Collector(session_id_from_name(path.name) or path.name)
    c.feed(_entries(path, c))
    if subagents:
        for sub in agents(path):
            c.feed(_entries(sub, c), subagent=True)
    return c.stats()


def many_stats(paths: Iterable[Path], *, subagents: bool = True) -> tuple[list[Stats], Stats]:
    """Each session's statistics and their total (calls shared by files counted once)."""
    agents = LegacyAgents()
    each = [session_stats(p, subagents=subagents, agents=agents) for p in paths]
    return each, combine(each)


def _entries(path: Path, c: Collector) -> Iterator[Entry]:
    for ln in iter_lines(path):
        for p in ln.pieces:
            if p.code != "blank-line":
                c.skipped(str(path), ln.line, p.code)
        yield from ln.entries
