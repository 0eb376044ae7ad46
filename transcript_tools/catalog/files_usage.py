"""The disk side of `tt stats`: stream a session's files into `stats.Collector`.

Invariants:
- Streams every file (any size, bounded memory: the collector keeps one small record per
  API call and tool call, never the lines).
- Damage never raises: unreadable pieces of lines are reported as `stats.SkippedLine`s
  and the rest of the file is counted.
- Same numbers on every path: a line msgspec decodes with `_FAST`'s types, or else orjson
  reads as one object, goes straight to the collector (no `Entry` built; `_FAST` gives the
  fields the collector reads, with the values orjson would give); any other line goes
  through `lines.decode_line`, as every reader of tt does, so what is counted and what is
  skipped does not depend on the path taken, nor on how many processes read.
- Many sessions are read from `PARALLEL_FROM` on in several processes, this one included
  (`_in_processes`: runs of consecutive sessions); their statistics are combined in the
  order of ``paths`` (`stats.combine`), so the result is the one a single process gives.

Measured (`benchmarks/bench_stats.py`, issue 18 item 16; cProfile first): on the 1.3 GB
`tt ls` bench set, with orjson, one process spent ~0.5 s iterating lines, ~1.4 s in
`orjson.loads` and ~1.1 s in the collector. Every line is decoded because the user lines
(two thirds of the bytes) carry the turns, the tool errors and the time span. A byte
prefilter that spared the decoder the tool-result lines (proving from the bytes alone that
a line is a user tool result with no error and one timestamp) was tried and was slower:
its four or five searches through each large line cost more than one decoding pass. What
helped: decoding only the fields counted (`_FAST`, msgspec: 0.9 s where orjson took 1.6 s),
making the per-call tuples with ``tuple.__new__``, skipping `is_prompt` for tool results,
and, for ``--json``, turning each session into its dictionary in the worker that read it
(`many_stats_dicts`), and pausing the cyclic collector while a session is read: 4.4 s of CPU
became 2.8 s. A 4 MiB read buffer (`BUFFER`) took 3% off reading and decoding.
Tried and dropped: msgspec's ``decode_lines`` on whole blocks (several times slower here;
tried again with structs on 4 MiB to 64 KiB blocks of whole lines, checked to be one record
each: within 5-10% in one process and no faster in two, so not worth the check),
reading whole files and slicing memoryviews (no faster than iterating the file); reading
1 MiB blocks and decoding each line as a memoryview of its block (interleaved on 400 bench
sessions: 0.44 s of CPU against 0.32 s for iterating the file; the per-line Python loop of
``bytes.find`` and slicing costs more than the copies it saves: iterating a file is slow
only with the default 8 KiB buffer); the cyclic collector paused for a worker's whole run
rather than per session, and the collector's per-line calls inlined (both within 2%, not
kept). Where the rest goes: a decoder of the ``type`` field alone takes three quarters of
`_FAST`'s time (skipping the bytes is most of decoding), and user lines are 73% of the bytes.

Then (same set, interleaved A/B of CPU time): decoding into msgspec structs read by
attribute (`stats.Collector` counts them in `decoded`) rather than typed dicts read with
``.get``: 2.45 s of CPU for ``tt stats --all --json`` became 2.3 s (the collector alone,
fed the decoded records of 1,000 sessions: 0.18 s where it was 0.24 s; the decoding itself
barely changes). Per 1,000 sessions (655 MB, 183k lines) one process now spends 0.12 s iterating
lines, 0.41 s decoding (a decoder of nothing but the JSON's validity, ``msgspec.Raw``, takes
0.31 s: skipping the bytes is the floor, and every line must be decoded whole, since a line
that is not valid JSON is counted otherwise), 0.19 s in the collector and 0.05 s making the
dictionaries; two worker processes add 0.12 s (their results pickled). Measured and
dropped: a tagged union of one struct per record type (slower: unknown types raise and
the tag is looked ahead for), leaving the text of blocks undecoded (no change), mmap and
``readline`` instead of iterating the file (no faster), counting lines with ``enumerate``
and taking the offset from ``tell()`` only on the slow path (1-2%), the per-line
collector inlined into the reading loop (3%), 3 or 4 workers on 2 cores (no difference
beyond the noise of a machine at load 4-6). Kept: the cyclic collector paused for a
worker's whole run (the dictionaries made and pickled) and in the parent while it takes
the results: perf gave the collector's passes 3.3% of the samples of ``tt stats --all
--json``, 0.7% after (CPU 2.50 s -> 2.36 s, medians of 5 interleaved); this process
reading runs too, with one worker process fewer (`_in_processes`: 2.82 s -> 2.69 s of CPU,
medians of 5 interleaved at load 5; half the results are no longer pickled).

Round 6 (paired with ccusage, `benchmarks/bench_stats.py`): a timeline of each run in both
processes showed this process idle 0.1-0.2 s at the end, waiting for runs that
`ProcessPoolExecutor` had queued to its busy worker; the runs now go through `edge.forks`,
where each process takes the next run when it is free (1.01-1.10x ccusage -> 0.83-0.94x).
Each file is read by `_feed`, which calls the collector from the reading loop (the
generator it replaced cost 7% of the CPU), and `Stats.to_dict` makes a session's
dictionary in one pass over its calls.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import orjson

from ..edge.collector import gc_paused
from ..edge.reader import _open
from ..model.errors import Unreadable
from ..model.lines import decode_line, split_terminator
from ..model.session import session_id_from_name
from .files_scope import LegacyAgents, agent_files
from .stats import Collector, Stats, combine


def session_stats(
    path: Path, *, subagents: bool = True, agents: Callable[[Path], list[Path]] = agent_files
) -> Stats:
    """Statistics of one session: its main file and (by default) its subagent files."""
    with gc_paused():
        c = Collector(session_id_from_name(path.name) or path.name, agent_file=path.name.startswith("agent-"))
        _feed(path, c, False)
        if subagents:
            for sub in agents(path):
                _feed(sub, c, True)
        return c.stats()


#: From how many sessions `many_stats` spreads them over processes (starting a worker
#: costs ~30 ms; a session ~2 ms on the `tt ls` bench set).
PARALLEL_FROM = 200


#: Into how many runs per worker the sessions are cut: the pool hands a run to whichever
#: worker is free, so the last run is all one worker may wait for at the end. On the
#: bench set with two workers (three trials each, at load 4 on 2 cores), 8 runs each left
#: one idle 0.01-0.19 s at the end, 16 runs 0.01-0.04 s, 32 runs 0.01-0.03 s; each run
#: adds to the peak memory (45 MiB with 8, 52 MiB with 16, 63 MiB with 32).
RUNS_PER_WORKER = 16


def sessions_in(dirs: list[Path]) -> list[Path]:
    """The session files of the project folders ``dirs``, oldest first (by mtime);
    `NotFound` when there are none."""
    from ..edge import claude_dir as store
    from ..model.errors import NotFound

    paths = [p for d in dirs for p in store.session_files(d)]
    if not paths:
        raise NotFound("no sessions in " + ", ".join(str(d) for d in dirs))
    return sorted(paths, key=lambda p: os.stat(p).st_mtime)


def many_stats(
    paths: Iterable[Path], *, subagents: bool = True, workers: int | None = None
) -> tuple[list[Stats], Stats]:
    """Each session's statistics and their total (calls shared by files counted once).

    ``workers``: processes to read with; by default one per CPU (up to 4) from
    `PARALLEL_FROM` sessions on, else this process (decoding JSON holds the GIL, so
    threads would not help)."""
    paths = list(paths)
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if len(paths) >= PARALLEL_FROM else 1
    if workers <= 1:
        agents = LegacyAgents()
        each = [session_stats(p, subagents=subagents, agents=agents) for p in paths]
    else:
        each = [s for part in _in_processes(_stats_run, paths, workers, subagents) for s in part]
    return each, combine(each)


def many_stats_dicts(
    paths: Iterable[Path], *, subagents: bool = True, workers: int | None = None
) -> tuple[list[dict[str, Any]], Stats]:
    """`many_stats` for output as JSON: each session's ``Stats.to_dict()`` and their total.

    In several processes each reads a run of consecutive sessions and returns their
    dictionaries with their combined statistics; the runs' totals are combined in order.
    `combine` is associative in order (sums, first and last, first-seen order of keys, a
    shared call's first turn and last usage), so the total is the one `many_stats` gives,
    while the per-session ledgers never cross between processes."""
    paths = list(paths)
    if workers is None:
        workers = min(os.cpu_count() or 1, 4) if len(paths) >= PARALLEL_FROM else 1
    if workers <= 1:
        each, total = many_stats(paths, subagents=subagents, workers=1)
        return [s.to_dict() for s in each], total
    parts = _in_processes(_dicts_run, paths, workers, subagents)
    return [d for ds, _ in parts for d in ds], combine(t for _, t in parts)


_T = TypeVar("_T")


def _in_processes(
    run: Callable[[list[Path], bool, LegacyAgents], _T], paths: list[Path], workers: int, subagents: bool
) -> list[_T]:
    """``run`` of each run of consecutive ``paths`` (`RUNS_PER_WORKER` per worker), in order,
    by this process and ``workers - 1`` others (this one's results are not pickled).

    Forked where the platform allows (`edge.forks`: each process takes the next run when it
    is free); elsewhere a `ProcessPoolExecutor` takes the runs from the first on while this
    process takes them from the last back, each one no worker has taken yet."""
    from ..edge import forks

    size = max(1, len(paths) // (workers * RUNS_PER_WORKER), -(-len(paths) // forks.MAX_TASKS))
    runs = [paths[i : i + size] for i in range(0, len(paths), size)]
    if forks.available():
        agents_here = LegacyAgents()  # each fork fills its own copy: a project read once per process
        with gc_paused():
            return forks.run_forked(lambda i: run(runs[i], subagents, agents_here), len(runs), workers)
    from concurrent.futures import ProcessPoolExecutor

    mine: dict[int, _T] = {}
    with gc_paused(), ProcessPoolExecutor(max_workers=workers - 1) as pool:
        futures = [pool.submit(_worker_run, run, r, subagents) for r in runs]
        agents = LegacyAgents()  # this call's own: the folders may change between calls
        for i in range(len(runs) - 1, -1, -1):
            if not futures[i].cancel():
                break  # the pool has taken this run, and so every run before it
            mine[i] = run(runs[i], subagents, agents)
        return [mine[i] if i in mine else f.result() for i, f in enumerate(futures)]


def _stats_run(paths: list[Path], subagents: bool, agents: LegacyAgents) -> list[Stats]:
    with gc_paused():
        return [session_stats(p, subagents=subagents, agents=agents) for p in paths]


def _dicts_run(
    paths: list[Path], subagents: bool, agents: LegacyAgents
) -> tuple[list[dict[str, Any]], Stats]:
    with gc_paused():
        each = [session_stats(p, subagents=subagents, agents=agents) for p in paths]
        return [s.to_dict() for s in each], combine(each)


_AGENTS: LegacyAgents | None = None


def _worker_run(
    run: Callable[[list[Path], bool, LegacyAgents], _T], paths: list[Path], subagents: bool
) -> _T:
    global _AGENTS  # one per worker process: a project's legacy agent files read once
    if _AGENTS is None:
        _AGENTS = LegacyAgents()
    return run(paths, subagents, _AGENTS)


# --- the fast decoder ------------------------------------------------------------------
#
# `tt stats` reads a dozen fields of a line; the rest (tool results, file contents, tool
# inputs, thinking: ~90% of the bytes) need no Python objects. msgspec decodes a line into
# structs of just the fields below and skips the rest without building it: half of orjson's
# time on the `tt ls` bench set.
#
# It gives the collector what orjson would, or raises and the line takes the orjson path:
# - every field the collector or `prompts.is_prompt` reads is declared (a field left out
#   would read as absent), each with the one type Claude Code writes; any other type, and
#   an integer outside int64 (orjson makes a float of a number past 64 bits), raises;
# - the values accepted decode alike in both (strings must be valid UTF-8 without lone
#   surrogates in both; a repeated key keeps its last value in both);
# - a line msgspec accepts and orjson refuses has its damage in a field stats skips
#   (invalid UTF-8, a number past the float range in a tool result): the common reader
#   decodes it leniently into one record whose read fields are these same values, so the
#   numbers do not change (asserted by tests/catalog/test_stats.py).
# Without msgspec installed every line takes the orjson path.

_FAST: Callable[[bytes], Any] | None = None  # msgspec's decoder of `_Record`
_FastError: tuple[type[Exception], ...] = (ValueError,)
try:
    import msgspec
except ImportError:  # pragma: no cover - the orjson path alone
    pass
else:
    from typing import Annotated

    _Int = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]

    # Structs, not typed dicts: one object per JSON object decoded, its fields read as
    # attributes (an absent field is None, as ``.get`` gives it). ``gc=False``: they hold
    # only strings, numbers and other such structs (no cycles). `stats.Collector` counts
    # them directly (`Collector.feed_records`), and the few lines it does not count that
    # way (a prompt, an error message, a progress copy: see there) it counts as the
    # dictionary `as_mapping` makes, with every declared field, through the common rules.

    class _Fields(msgspec.Struct, gc=False):
        def as_mapping(self) -> dict[str, Any]:
            out: dict[str, Any] = msgspec.to_builtins(self)
            return out

    class _CacheCreation(_Fields, gc=False):
        ephemeral_1h_input_tokens: _Int | bool | None = None
        ephemeral_5m_input_tokens: _Int | bool | None = None

    class _Usage(_Fields, gc=False):
        input_tokens: _Int | bool | None = None
        output_tokens: _Int | bool | None = None
        cache_creation_input_tokens: _Int | bool | None = None
        cache_read_input_tokens: _Int | bool | None = None
        cache_creation: _CacheCreation | None = None
        speed: str | None = None

    class _Block(_Fields, gc=False):
        type: str | None = None
        id: str | None = None
        name: str | None = None
        is_error: bool | None = None
        tool_use_id: str | None = None
        text: str | None = None

    class _Message(_Fields, gc=False):
        model: str | None = None
        id: str | None = None
        usage: _Usage | None = None
        content: list[_Block] | str | None = None

    class _Copy(_Fields, gc=False):  # an agent_progress line's copy of a subagent's line
        type: str | None = None
        message: _Message | None = None
        requestId: str | None = None
        isApiErrorMessage: bool | None = None

    class _Data(_Fields, gc=False):
        type: str | None = None
        message: _Copy | None = None

    class _Record(_Fields, gc=False):
        type: str | None = None
        timestamp: str | None = None
        isSidechain: bool | None = None
        message: _Message | None = None
        requestId: str | None = None
        subtype: str | None = None
        durationMs: _Int | None = None
        data: _Data | None = None
        isApiErrorMessage: bool | None = None
        isCompactSummary: bool | None = None
        parentUuid: str | None = None
        isMeta: bool | None = None
        isVisibleInTranscriptOnly: bool | None = None
        promptSource: str | None = None

    _FAST = msgspec.json.Decoder(_Record).decode
    # A ValidationError is a DecodeError; nesting deeper than msgspec's limit (lower than
    # orjson's) raises RecursionError.
    _FastError = (msgspec.DecodeError, RecursionError)


#: The read buffer: iterating lines copies each from it, and long lines (tool results of
#: hundreds of KB) are cut less often in a larger one (reading and decoding 700 bench
#: sessions: 0.48 s with 1 MiB, 0.46 s with 4 MiB, 0.51 s with 128 KiB).
BUFFER = 4 << 20


def _feed(path: Path, c: Collector, subagent: bool) -> None:
    # reader.iter_raw, flattened, and the collector called from the reading loop itself
    # (no generator between: 10-15% of the CPU of a run): a line that fits `_FAST` (what
    # Claude Code writes) is decoded into the fields the collector reads, the rest skipped
    # unbuilt; any other line goes to orjson, which takes the line with its terminator
    # (trailing whitespace is allowed JSON), and a line orjson refuses is split and decoded
    # as every reader does. A line without terminator can only be the last, which is all
    # `is_last` tells `decode_line`.
    fast, loads, bad = _FAST, orjson.loads, orjson.JSONDecodeError
    record, decoded = c.record, c.decoded
    c.file(subagent=subagent)
    records = number = offset = 0
    with _open(path, BUFFER) as f:
        try:
            for chunk in f:
                number += 1
                if fast is not None:
                    try:
                        r = fast(chunk)
                    except _FastError:
                        pass
                    else:
                        decoded(r, subagent)
                        records += 1
                        offset += len(chunk)
                        continue
                try:
                    rec = loads(chunk)
                except bad:
                    rec = None
                if type(rec) is dict:
                    record(rec, subagent)
                    records += 1
                else:
                    data, term = split_terminator(chunk)
                    ln = decode_line(number, offset, data, term, is_last=not term)
                    for p in ln.pieces:
                        if p.code != "blank-line":
                            c.skipped(str(path), number, p.code)
                    for e in ln.entries:
                        record(e.record, subagent)
                    records += len(ln.entries)
                offset += len(chunk)
        except OSError as e:
            raise Unreadable(f"{path}: read failed at byte {offset} ({e.strerror})") from e
    c.out.lines += records
