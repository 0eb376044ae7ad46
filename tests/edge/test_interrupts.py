"""`edge.interrupts.answer_interrupts`: an ignored SIGINT is made to raise, and nothing else is
touched (the subprocess tests in tests/resume run the whole Ctrl-C path both ways)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest

from transcript_tools.edge.interrupts import answer_interrupts


@pytest.fixture
def restore_sigint() -> Iterator[None]:
    before = signal.getsignal(signal.SIGINT)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    yield
    signal.signal(signal.SIGINT, before)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def test_an_ignored_sigint_raises_keyboardinterrupt_again(restore_sigint: None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    assert answer_interrupts() is True
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)


def test_a_handler_someone_installed_is_kept(restore_sigint: None) -> None:
    seen: list[int] = []

    def mine(signum: int, frame: object) -> None:
        seen.append(signum)

    signal.signal(signal.SIGINT, mine)
    assert answer_interrupts() is False
    signal.raise_signal(signal.SIGINT)
    assert seen == [signal.SIGINT] and signal.getsignal(signal.SIGINT) is mine


def test_from_another_thread_nothing_changes(restore_sigint: None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    got: list[bool] = []
    t = threading.Thread(target=lambda: got.append(answer_interrupts()))
    t.start()
    t.join()
    assert got == [False] and signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_a_blocked_sigint_is_let_through_and_nothing_else(restore_sigint: None) -> None:
    # The signal mask survives exec: a process can start with SIGINT blocked (Node
    # unblocks it at start-up; checked with node). Only SIGINT is unblocked.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGUSR2})
    assert answer_interrupts() is True
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    assert signal.SIGINT not in blocked and signal.SIGUSR2 in blocked
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
