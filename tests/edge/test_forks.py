"""`edge.forks.run_forked`: every task once, results in order, failures raised here, and
no worker left behind (module docstring of `transcript_tools.edge.forks`)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from transcript_tools.edge import forks
from transcript_tools.model.errors import Unreadable


@pytest.fixture(autouse=True)
def _the_signal_mask_is_left_as_it_was() -> Iterator[None]:
    # Every call leaves the caller's mask as it found it, interrupted or not: the signal
    # storm once left the test process with every signal blocked, and every later child
    # process of the run inherited that (the Ctrl-C tests of tt resume and chat failed).
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    yield
    assert signal.pthread_sigmask(signal.SIG_BLOCK, ()) == before


pytestmark = pytest.mark.skipif(not forks.available(), reason="forks are used on Linux only")


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_every_task_once_in_order_spread_over_the_processes(workers: int) -> None:
    def job(i: int) -> tuple[int, int]:
        time.sleep(0.005)  # long enough that every process takes some
        return i * i, os.getpid()

    out = forks.run_forked(job, 40, workers)
    assert [sq for sq, _ in out] == [i * i for i in range(40)]
    assert len({pid for _, pid in out}) == workers
    assert os.getpid() in {pid for _, pid in out}  # this process takes tasks too
    assert _no_children_left()


def test_no_tasks_and_one_task() -> None:
    assert forks.run_forked(lambda i: i, 0, 2) == []
    assert forks.run_forked(lambda i: i + 1, 1, 2) == [1]


def test_a_worker_s_exception_is_raised_here_with_its_hint() -> None:
    me = os.getpid()

    def job(i: int) -> int:
        time.sleep(0.005)
        if os.getpid() != me and i > 3:
            raise Unreadable("x.jsonl: read failed", hint="check the disk")
        return i

    with pytest.raises(Unreadable) as e:
        forks.run_forked(job, 40, 2)
    assert e.value.hint == "check the disk"
    assert _no_children_left()


def test_an_exception_that_cannot_be_sent_is_a_worker_failure() -> None:
    me = os.getpid()

    class Local(Exception):  # defined here: pickle cannot find it by name
        pass

    def job(i: int) -> int:
        time.sleep(0.005)
        if os.getpid() != me:
            raise Local(threading.Lock())
        return i

    with pytest.raises(forks.WorkerFailed, match="a worker failed"):
        forks.run_forked(job, 20, 2)
    assert _no_children_left()


def test_a_worker_that_dies_is_a_worker_failure_not_a_hang() -> None:
    me = os.getpid()

    def job(i: int) -> int:
        time.sleep(0.005)
        if os.getpid() != me and i > 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return i

    with pytest.raises(forks.WorkerFailed):
        forks.run_forked(job, 40, 2)
    assert _no_children_left()


def test_when_this_process_fails_its_workers_are_killed() -> None:
    me = os.getpid()

    def job(i: int) -> int:
        if os.getpid() == me:
            raise ValueError("here")
        time.sleep(10)  # a worker that would outlive the call
        return i

    t0 = time.monotonic()
    with pytest.raises(ValueError, match="here"):
        forks.run_forked(job, 4, 3)
    assert time.monotonic() - t0 < 5
    assert _no_children_left()


def test_too_many_tasks_is_refused_before_any_fork() -> None:
    with pytest.raises(ValueError):
        forks.run_forked(lambda i: i, forks.MAX_TASKS + 1, 2)
    assert _no_children_left()


# --- what a review's scripts found (each failed on the first version) -------------------


def test_an_exception_the_caller_is_handling_is_not_taken_for_a_worker_s() -> None:
    try:
        raise LookupError("handled by the caller")
    except LookupError:
        out = forks.run_forked(lambda i: i, 20, 2)
    assert out == list(range(20))
    assert _no_children_left()


def test_with_sigchld_ignored_the_results_still_come_back() -> None:
    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        assert forks.run_forked(lambda i: i * 2, 20, 3) == [i * 2 for i in range(20)]
    finally:
        signal.signal(signal.SIGCHLD, old)


class _TwoArgs(Exception):
    def __init__(self, what: str, why: str) -> None:
        super().__init__(what)  # pickles with one argument: it cannot be made again from it
        self.why = why


def test_an_exception_that_cannot_be_read_back_is_a_worker_failure() -> None:
    me = os.getpid()

    def job(i: int) -> int:
        time.sleep(0.005)
        if os.getpid() != me:
            raise _TwoArgs("x", "y")
        return i

    with pytest.raises(forks.WorkerFailed, match="could not be read back"):
        forks.run_forked(job, 20, 2)
    assert _no_children_left()


def test_an_interrupt_while_waiting_for_a_worker_leaves_none_behind() -> None:
    me = os.getpid()

    class Interrupted(Exception):
        pass

    def alarm(signum: int, frame: object) -> None:
        raise Interrupted

    def job(i: int) -> int:
        time.sleep(5 if os.getpid() != me else 0.1)  # the worker takes a task; this process waits
        return i

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    t0 = time.monotonic()
    try:
        with pytest.raises(Interrupted):
            forks.run_forked(job, 2, 2)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert time.monotonic() - t0 < 3
    assert _no_children_left()


def _memfds() -> int:
    return sum(1 for fd in os.listdir("/proc/self/fd") if "memfd:" in _link(fd))


def _link(fd: str) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def test_a_fork_that_fails_leaks_no_memory_file(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    before = _memfds()
    monkeypatch.setattr(os, "fork", no_fork)
    with pytest.raises(BlockingIOError):
        forks.run_forked(lambda i: i, 4, 2)
    assert _memfds() == before


def test_a_signal_storm_never_sends_a_worker_back_into_the_caller() -> None:
    # A handler that raises (as Ctrl-C's does) landing in a worker between the fork and its
    # guarded block made it return into the caller's code; signals are now blocked there.
    me = os.getpid()
    armed = False

    class Poke(Exception):
        pass

    def handler(signum: int, frame: object) -> None:
        if armed:
            raise Poke

    old = signal.signal(signal.SIGUSR1, handler)
    told_r, told_w = os.pipe()  # a worker that returns into the caller's code writes here
    os.set_blocking(told_r, False)
    sender = os.fork()
    if sender == 0:  # keeps poking this process and its workers (its process group)
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            try:
                os.kill(me, signal.SIGUSR1)
                for pid in forks._UNREAPED.copy():
                    os.kill(pid, signal.SIGUSR1)
            except ProcessLookupError:
                pass
            time.sleep(0.0005)
        os._exit(0)
    try:
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            try:
                try:
                    armed = True
                    forks.run_forked(lambda i: i, 8, 4)
                finally:
                    armed = False
                    if os.getpid() != me:  # a worker here: in the caller's code
                        os.write(told_w, b"x")
                        os._exit(0)
            except (Poke, forks.WorkerFailed):
                pass
    finally:
        armed = False
        _, status = os.waitpid(sender, 0)
        signal.signal(signal.SIGUSR1, old)
    try:
        escaped = bool(os.read(told_r, 1))
    except BlockingIOError:
        escaped = False
    os.close(told_r)
    os.close(told_w)
    assert not escaped and os.waitstatus_to_exitcode(status) == 0
    forks._reap(set(forks._UNREAPED))
    assert _no_children_left()


def test_not_available_while_another_thread_runs() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert not forks.available()
    finally:
        stop.set()
        t.join()
    assert forks.available()
