"""One exception family for everything a user can cause.

The CLI and UI catch :class:`AskPapersError` and show its message; anything else is a bug.
"""

from __future__ import annotations


class AskPapersError(Exception):
    """An error whose message is written for the user."""


class InputError(AskPapersError):
    """A corpus file that cannot be read or parsed (names the file and line)."""


class StoreError(AskPapersError):
    """The store cannot be opened, read or written."""


class EmbedderMismatchError(StoreError):
    """The store was built with a different embedder than the one configured."""


class QuestionError(AskPapersError):
    """A question that cannot be answered as asked (for example an empty one)."""


class ConfigError(AskPapersError):
    """A setting (an environment variable or ``.env`` entry) that is malformed."""
