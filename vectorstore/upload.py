"""What one upload to the web app may hold, checked before anything is embedded (``askpapers ingest`` has no such
limits)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from askpapers.vectorstore.errors import InputError
from askpapers.vectorstore.formats import records_of
from askpapers.vectorstore.parse import expand_paths
from askpapers.vectorstore.text import one_line


@dataclass(frozen=True)
class UploadLimits:
    """What one upload to the web app may hold (``askpapers ingest`` has no such limits)."""

    max_papers: int = 20_000  # records in all its files
    max_bytes: int = 50_000_000  # text, after decoding
    min_abstract: int = 20  # characters: a shorter abstract is not a paper worth embedding


BULK = "use `askpapers ingest` for bulk loads"


def check_upload(paths: Iterable[str | os.PathLike[str]], limits: UploadLimits, skip_bad: bool = False) -> int:
    """Check an upload against ``limits`` before anything is embedded; return its records.

    The files are read one record at a time and nothing is kept: the size is checked before reading, and the
    records are counted to the end (for the message) without building papers. Raises :class:`InputError` with
    the number found and the limit, or for the first malformed record, as ingest would (with ``skip_bad``, a
    malformed record is skipped, as ingest skips it).
    """
    files = expand_paths(paths)
    size = sum(f.stat().st_size for f in files)  # (UTF-8: the decoded text has at most as many bytes)
    if size > limits.max_bytes:
        raise InputError(f"this upload holds {size / 1e6:,.1f} MB of text; the limit per upload is "
                         f"{limits.max_bytes / 1e6:,.1f} MB — {BULK}")  # fmt: skip
    records = 0
    short = ""  # the first record whose abstract is too short to be worth a paper
    for f in files:
        for lineno, rec in records_of(f, skip_bad):  # (a malformed record is reported as ingest would report it)
            records += 1
            if rec is None or short or records > limits.max_papers:
                continue
            abstract = rec.get("abstract") or rec.get("text") or ""
            if isinstance(abstract, str) and abstract.strip() and len(one_line(abstract)) < limits.min_abstract:
                short = (f"{f}:{lineno}: the abstract has {len(one_line(abstract))} characters; an upload needs at "
                         f"least {limits.min_abstract} per abstract (remove or complete such records)")  # fmt: skip
    if records > limits.max_papers:
        what = "this file has" if len(files) == 1 else "these files have"
        raise InputError(f"{what} {records:,} records; the limit per upload is {limits.max_papers:,} — {BULK}")
    if short:
        raise InputError(short)
    return records
