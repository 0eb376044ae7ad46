"""The one exception tree of tt: errors that mean "cannot go on".

Problems found *in* a transcript are never raised; they are `Diagnostic` values
(see `diagnostics`). An exception here means the command cannot continue, and its
class carries the process exit code, which the CLI turns into `sys.exit` in exactly
one place (`cli.main`).

    TTError                      exit 1 (generic; not raised directly)
    ├── UsageError               exit 2  bad arguments or option combinations
    ├── NotFound                 exit 3  no such file, session, project or message
    │   └── AmbiguousSession     exit 3  an id prefix matching several sessions
    ├── Unreadable               exit 4  cannot read, or not a transcript at all
    │   ├── NotATranscript       exit 4  no Claude Code record in it (a batch notes it and goes on)
    │   └── TranscriptTooLarge   exit 4  past the in-memory cap (MAX_TRANSCRIPT_READ_BYTES)
    ├── ApiError                 exit 5  the Messages API failed after retries
    │   └── CredentialsError     exit 5  no usable API key
    └── WriteFailed              exit 6  an output could not be written safely
        └── FileChanged          exit 6  the input changed while we worked on it

Foreign errors (OSError, anthropic.APIError, ...) are translated once, at the adapter
that met them, with ``raise ... from``.
"""

from __future__ import annotations


class TTError(Exception):
    """Base of every error tt raises on purpose. ``exit_code`` is the process exit status."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class UsageError(TTError):
    exit_code = 2


class NotFound(TTError):
    exit_code = 3


class AmbiguousSession(NotFound):
    pass


class Unreadable(TTError):
    exit_code = 4


class NotATranscript(Unreadable):
    """The file holds no Claude Code record (empty, NULs, random bytes, other JSON): most
    likely the wrong file. A batch (``-a``, ``-p``, a folder) notes it and goes on, as
    ``tt validate -a`` does; a file named on its own is an error."""


class TranscriptTooLarge(Unreadable):
    """A transcript is larger than the cap for loading a conversation into memory."""

    def __init__(self, path: str, size: int, cap: int) -> None:
        super().__init__(
            f"{path}: {_human(size)} is past the {_human(cap)} cap for loading a conversation into memory",
            hint="raise it with --max-bytes N, or shrink the session first with `tt compact`",
        )
        self.path = path
        self.size = size
        self.cap = cap


class ConversationEnded(TTError):
    """The model ended the conversation (an ``ended-by-model`` record): Claude Code 2.1.332
    refuses to continue it, and so does tt (`conversation.ended_by_model`)."""

    exit_code = 1


class ApiError(TTError):
    exit_code = 5


class CredentialsError(ApiError):
    pass


class WriteFailed(TTError):
    exit_code = 6


class FileChanged(WriteFailed):
    pass


def _human(n: int) -> str:
    """Bytes for people: MiB from 1 MiB up (as the 50 MiB cap is stated), else KiB or B."""
    if n >= 1024 * 1024:
        return f"{n / 2**20:.1f} MiB".replace(".0 MiB", " MiB")
    if n >= 1024:
        return f"{n / 1024:.1f} KiB".replace(".0 KiB", " KiB")
    return f"{n} B"
