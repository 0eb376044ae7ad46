"""`edge.forks.run_forked`: every task once, results in order, failures raised here, and
no worker left behind (module docstring of `transcript_tools.edge.forks`)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from transcript_tools.edge import forks
from transcript_tools.model.errors import Unreadable

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
