"""Tasks spread over forked worker processes: `run_forked` gives ``[job(0), ..., job(n - 1)]``.

Why not `concurrent.futures.ProcessPoolExecutor`, which `tt stats` used: its call queue
hands a worker its next task before the worker is free (one or two ahead), so at the end
the process that takes tasks too (this one) waited idle while a busy worker finished the
runs queued to it: 0.1-0.2 s of a 1.3 s ``tt stats --all --json`` on the `tt ls` bench set
(a timeline of each run's start and end in both processes); and importing it costs ~20 ms
(multiprocessing, tempfile, subprocess, ...). Here every process, this one included, takes
the next task's index from one pipe when it is free, so the processes end within one task
of each other.

How: the indexes are written to a pipe before forking (two bytes each; a task count that
fits a pipe's smallest buffer, `MAX_TASKS`); each process reads an index, runs the task,
and reads the next until the pipe is empty. A worker pickles each result as it is made, and
the exception that stopped it if one did, into a memory file (``memfd``) this process made
for it, and ends with ``os._exit`` (no exit handlers, no flushing of the buffers it
inherited).

Invariants:
- every task runs exactly once, in one process; the results come back in task order;
- a job's exception in a worker is raised here (`WorkerFailed` when it cannot be sent);
  a worker that dies without reporting is `WorkerFailed`; an exception here (a job's, or an
  interrupt) kills the workers before it propagates;
- only where the platform forks and has memory files (Linux: `available`); callers keep
  another way for the rest.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

#: Two-byte indexes in a pipe that is never read before it is full: 4 KiB, the smallest
#: buffer Linux gives a pipe, holds 2,048 of them.
MAX_TASKS = 2048


class WorkerFailed(RuntimeError):
    """A worker process ended without its results, or with an exception that could not be
    sent back as it was."""


def available() -> bool:
    """Can `run_forked` run here?"""
    return sys.platform == "linux" and hasattr(os, "fork") and hasattr(os, "memfd_create")


def run_forked(job: Callable[[int], T], n: int, workers: int) -> list[T]:
    """``[job(i) for i in range(n)]``, computed by this process and ``workers - 1`` forked
    ones (module docstring). ``job`` runs in the forks with this process's memory as it is
    at the call: it reads what it needs from there, and returns what pickles."""
    if not 0 <= n <= MAX_TASKS:
        raise ValueError(f"{n} tasks: at most {MAX_TASKS}")
    r, w = os.pipe()
    try:
        os.write(w, b"".join(i.to_bytes(2, "little") for i in range(n)))
    finally:
        os.close(w)
    children: list[tuple[int, int]] = []  # (pid, memory file) of the workers not yet collected
    try:
        for k in range(max(0, workers - 1)):
            out = os.memfd_create(f"tt-worker-{k}")
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                _work(job, r, out)
            children.append((pid, out))
        results: dict[int, Any] = {i: job(i) for i in _tasks(r)}
        while children:
            pid, out = children.pop(0)
            results.update(_collected(pid, out))
    finally:
        for pid, out in children:  # this process failed first: its workers must not outlive it
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            os.close(out)
        os.close(r)
    if len(results) != n:
        raise WorkerFailed(f"{n - len(results)} of {n} tasks have no result")
    return [results[i] for i in range(n)]


def _tasks(r: int) -> Iterator[int]:
    """The indexes this process takes from the pipe, one when it is free, until none is left."""
    while True:
        b = os.read(r, 2)
        if not b:
            return
        if len(b) == 1:  # (never seen: a pipe hands out what was written, whole)
            b += os.read(r, 1)
        yield int.from_bytes(b, "little")


def _work(job: Callable[[int], Any], r: int, out: int) -> None:
    """The worker's whole life: each task's result into ``out`` as it is made (pickled
    while this process still computes, not all at the end), then what stopped it if
    anything, then ``os._exit``, whatever happens: it must never return into its parent's
    code."""
    code = 2
    try:
        for i in _tasks(r):
            _frame(out, pickle.dumps((True, i, job(i)), pickle.HIGHEST_PROTOCOL))
        code = 0
    finally:
        try:
            stopped = sys.exc_info()[1]  # what is propagating, if anything: sent back whole
            if stopped is not None:
                code = 1
                _frame(out, _failure(stopped))
        finally:
            os._exit(code)


def _frame(out: int, data: bytes) -> None:
    """One pickled frame, after its length (8 bytes)."""
    view = memoryview(len(data).to_bytes(8, "little") + data)
    while view:
        view = view[os.write(out, view) :]


def _failure(e: BaseException) -> bytes:
    try:
        return pickle.dumps((False, None, e), pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return pickle.dumps((False, None, WorkerFailed(f"a worker failed: {e!r}")), pickle.HIGHEST_PROTOCOL)


def _collected(pid: int, out: int) -> list[tuple[int, Any]]:
    """A worker's results once it has ended (``out`` closed); its exception raised here."""
    try:
        _, status = os.waitpid(pid, 0)
        os.lseek(out, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(out, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(out)
    data = memoryview(b"".join(chunks))
    done: list[tuple[int, Any]] = []
    at = 0
    while at + 8 <= len(data):
        n = int.from_bytes(data[at : at + 8], "little")
        if at + 8 + n > len(data):
            break  # a frame cut short: the worker died writing it (its status says so)
        ok, i, value = pickle.loads(data[at + 8 : at + 8 + n])
        if not ok:
            raise value
        done.append((i, value))
        at += 8 + n
    if status != 0:
        raise WorkerFailed(f"a worker process ended without all its results (wait status {status})")
    return done
