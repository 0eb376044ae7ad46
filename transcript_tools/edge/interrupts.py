"""Ctrl-C, at the edge: a turn ends on SIGINT whatever disposition the process inherited.

A launcher without job control (``tt resume -p … &`` in a script, ``nohup``, a CI runner)
starts its child with SIGINT *ignored*, and Python then never installs its handler: the
SIGINT sent to close a turn would be lost and the request would run on. Claude Code runs on
Node, whose ``process.on("SIGINT")`` installs a handler whatever was inherited; the commands
that run a turn (``tt resume``, ``tt chat``) call `answer_interrupts` so that "SIGINT closes
the turn in the file and exits 130" holds for every launcher, as it does for the client.

Invariants: only an *ignored* SIGINT is replaced (a handler someone installed stays); only
the main thread may set one, so called from any other thread this does nothing; the library
(`query()`) never calls it, since a process's signals belong to the program that embeds it.
"""

from __future__ import annotations

import signal
import threading


def answer_interrupts() -> bool:
    """Make SIGINT raise KeyboardInterrupt if it is ignored; True when it was changed."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        return False
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return True
