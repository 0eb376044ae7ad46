"""Ctrl-C, at the edge: a turn ends on SIGINT whatever the process inherited.

A launcher without job control (``tt resume -p … &`` in a script, ``nohup``, a CI runner)
starts its child with SIGINT *ignored*, and Python then never installs its handler; a
process can also inherit SIGINT *blocked* (the signal mask survives ``exec``). Either way
the SIGINT sent to close a turn would be lost and the request would run on. Claude Code
runs on Node, which at start-up unblocks SIGINT and, with ``process.on("SIGINT")``, handles
it whatever was inherited (both checked with node); the commands that run a turn
(``tt resume``, ``tt chat``) call `answer_interrupts` so that "SIGINT closes the turn in
the file and exits 130" holds for every launcher, as it does for the client.

Invariants: only an *ignored* SIGINT gets Python's handler (a handler someone installed
stays); only SIGINT is unblocked; only the main thread may do either, so called from any
other thread this does nothing; the library (`query()`) never calls it, since a process's
signals belong to the program that embeds it.
"""

from __future__ import annotations

import signal
import threading


def answer_interrupts() -> bool:
    """Make SIGINT raise KeyboardInterrupt if it is ignored or blocked; True when
    something was changed."""
    if threading.current_thread() is not threading.main_thread():
        return False
    changed = False
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        changed = True
    if signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, ()):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        changed = True
    return changed
