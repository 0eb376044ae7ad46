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

Invariants (each tried by tests/edge/test_forks.py, most found by a review's scripts):
- every task runs exactly once, in one process; the results come back in task order;
- a job's exception in a worker is raised here (`WorkerFailed` when it cannot be sent or
  read back); a worker that dies without reporting is `WorkerFailed`;
- a worker never returns into its caller's code: signals stay blocked from before the fork
  until it is inside the block that ends in ``os._exit``;
- the caller's signal mask is the same after a call as before, however the call ends (a
  handler raising at any instant included);
- no worker outlives a failure here (a job's exception, an interrupt, even while waiting
  for a worker): the workers not yet collected are killed and reaped; a worker whose
  parent has gone takes no further task;
- an exception the caller was handling when it called is never taken for a worker's;
- only where the platform forks, has memory files (Linux) and this process runs a single
  thread (forking a threaded process can leave a worker waiting forever on a lock another
  thread held): `available`; callers keep another way for the rest.
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

#: What a result or an exception that cannot be read back raises while it is unpickled.
_UNREADABLE = (pickle.UnpicklingError, TypeError, AttributeError, ImportError, EOFError, ValueError)


#: Workers forked and not yet reaped. Empty between calls, unless a second interrupt cut a
#: call's cleaning short (a signal can land as its ``finally`` begins, before it blocks
#: signals): the next call kills and reaps them first.
_UNREAPED: set[int] = set()


class WorkerFailed(RuntimeError):
    """A worker process ended without its results, or with an exception that could not be
    sent back as it was."""


def available() -> bool:
    """Can `run_forked` run here (module docstring)?"""
    if sys.platform != "linux" or not hasattr(os, "fork") or not hasattr(os, "memfd_create"):
        return False
    threading = sys.modules.get("threading")  # never imported: no thread was started with it
    return threading is None or threading.active_count() == 1


def run_forked(job: Callable[[int], T], n: int, workers: int) -> list[T]:
    """``[job(i) for i in range(n)]``, computed by this process and ``workers - 1`` forked
    ones (module docstring). ``job`` runs in the forks with this process's memory as it is
    at the call: it reads what it needs from there, and returns what pickles."""
    if not 0 <= n <= MAX_TASKS:
        raise ValueError(f"{n} tasks: at most {MAX_TASKS}")
    _reap(set(_UNREAPED))
    r, w = os.pipe()
    try:
        os.write(w, b"".join(i.to_bytes(2, "little") for i in range(n)))
    finally:
        os.close(w)
    parent = os.getpid()
    children: list[tuple[int, int]] = []  # (pid, memory file) of the workers not yet collected
    try:
        for k in range(max(0, workers - 1)):
            out = os.memfd_create(f"tt-worker-{k}")
            # No signal between the fork and the worker's guarded block, nor between the
            # fork and this process's record of the worker. The mask is read before it is
            # changed, and changed inside the `try`: a handler that raises as the blocking
            # call returns must still find the `finally` that restores it.
            mask = _mask()
            try:
                signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
                pid = os.fork()
                if pid == 0:  # the worker: never returns
                    _work(job, r, out, mask, parent)
                children.append((pid, out))
                _UNREAPED.add(pid)
            except OSError:
                os.close(out)  # the fork failed: this memory file has no worker
                raise
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        results: dict[int, Any] = {i: job(i) for i in _tasks(r)}
        while children:
            pid, out = children[0]
            done = _collected(pid, out)  # reaped (and out of `_UNREAPED`) once it has waited
            children.pop(0)
            os.close(out)
            results.update(done)
    finally:
        # This process failed first (or all went well and none is left): its workers must
        # not outlive it, and a second interrupt must not stop the cleaning halfway.
        mask = _mask()
        try:
            signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
            # Only workers not reaped yet: a reaped worker's pid may be another process's.
            _reap({pid for pid, _ in children} & _UNREAPED)
            for _, out in children:
                os.close(out)
            os.close(r)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if len(results) != n:
        raise WorkerFailed(f"{n - len(results)} of {n} tasks have no result")
    return [results[i] for i in range(n)]


def _mask() -> set[int | signal.Signals]:
    """This thread's signal mask, unchanged. (Reading it through the call that blocks
    everything left the caller with every signal blocked for good when a handler raised
    as that call returned, before the `try` that restores it: a Ctrl-C at that instant,
    or tests/edge/test_forks.py's signal storm, after which no later child process of
    the test run could be interrupted.)"""
    return signal.pthread_sigmask(signal.SIG_BLOCK, ())


def _reap(pids: set[int]) -> None:
    """Kill and reap these workers, none reaped yet (each maybe ended: a zombie keeps its
    pid, so the signal cannot reach another process)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass  # reaped already (or by the kernel: SIGCHLD ignored)
        _UNREAPED.discard(pid)


def _tasks(r: int, parent: int | None = None) -> Iterator[int]:
    """The indexes this process takes from the pipe, one when it is free, until none is
    left; a worker (``parent`` given) takes none once its parent has gone."""
    while parent is None or os.getppid() == parent:
        b = os.read(r, 2)
        if not b:
            return
        if len(b) == 1:  # (never seen: a pipe hands out what was written, whole)
            b += os.read(r, 1)
        yield int.from_bytes(b, "little")


def _work(job: Callable[[int], Any], r: int, out: int, mask: set[Any], parent: int) -> None:
    """The worker's whole life: each task's result into ``out`` as it is made (pickled
    while this process still computes, not all at the end), then what stopped it if
    anything, then ``os._exit``, whatever happens: it must never return into its parent's
    code. Signals are blocked on entry and let through only inside that block."""
    code, finished = 2, False
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for i in _tasks(r, parent):
            _frame(out, pickle.dumps((True, i, job(i)), pickle.HIGHEST_PROTOCOL))
        code, finished = 0, True
    finally:
        try:
            # Only when the tasks did not finish: `sys.exc_info` is then what propagates;
            # otherwise it could be one the caller was handling when it called.
            stopped = None if finished else sys.exc_info()[1]
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
    """A worker's results once it has ended (reaped here); its exception raised here."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        # SIGCHLD ignored (inherited so): the kernel reaped it, once it and its siblings
        # had ended. Its frames say what it did; missing tasks are counted by the caller.
        status = 0
    _UNREAPED.discard(pid)
    os.lseek(out, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(out, 1 << 20):
        chunks.append(chunk)
    data = memoryview(b"".join(chunks))
    done: list[tuple[int, Any]] = []
    at = 0
    while at + 8 <= len(data):
        n = int.from_bytes(data[at : at + 8], "little")
        if at + 8 + n > len(data):
            break  # a frame cut short: the worker died writing it (its status says so)
        try:
            ok, i, value = pickle.loads(data[at + 8 : at + 8 + n])
        except _UNREADABLE as e:
            raise WorkerFailed(f"a worker's result could not be read back: {e!r}") from e
        if not ok:
            raise value
        done.append((i, value))
        at += 8 + n
    if status != 0:
        raise WorkerFailed(f"a worker process ended without all its results (wait status {status})")
    return done
