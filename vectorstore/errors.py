"""One exception family for everything a user can cause.

The CLI and UI catch :class:`AskPapersError` and show its message; anything else is a bug.
"""

from __future__ import annotations


class AskPapersError(Exception):
    """An error whose message is written for the user."""


class InputError(AskPapersError):
    """A corpus file that cannot be read or parsed (names the file and line)."""


class BadLinesError(InputError):
    """Malformed records, or a file with no paper, that ``skip_bad`` would skip. ``detail`` says what is wrong
    without the CLI's "pass --skip-bad", for a front end that offers the choice in its own terms."""

    def __init__(self, detail: str, hint: str = "fix it or pass --skip-bad") -> None:
        super().__init__(f"{detail}; {hint}")
        self.detail = detail


class StoreError(AskPapersError):
    """The store cannot be opened, read or written."""


class EmbedderMismatchError(StoreError):
    """The store was built with a different embedder than the one configured."""


class QuestionError(AskPapersError):
    """A question that cannot be answered as asked (for example an empty one)."""


class ConfigError(AskPapersError):
    """A setting (an environment variable or ``.env`` entry) that is malformed."""
