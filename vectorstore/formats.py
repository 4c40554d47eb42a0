"""Reading corpus files: text checked to be UTF-8 and not binary, JSONL one line at a time, and the records of the
four formats (.txt paragraphs under an optional venue header, .jsonl, .json, .csv), with their line numbers.
:mod:`vectorstore.parse` makes papers of them."""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from askpapers.vectorstore.errors import BadLinesError, InputError
from askpapers.vectorstore.text import normalise

_HEADER_VENUE = re.compile(r"\b([A-Z][A-Za-z-]{1,20})\s*['’]?\s*((?:19|20)\d{2})(?!\d)")
MAX_FIELD = 2_000_000


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """An operating-system error while reading ``path`` becomes an :class:`InputError` naming it."""
    try:
        yield
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None


def _check_not_binary(path: Path) -> None:
    """A NUL byte anywhere means a binary file (text after 8 KB of binary-looking data is still not a corpus)."""
    with _reading(path), path.open("rb") as fh:
        while block := fh.read(1 << 20):
            if b"\x00" in block:
                raise InputError(f"{path}: looks like a binary file, not text")


def _not_utf8(path: Path, line: int, byte: int) -> InputError:
    return InputError(f"{path}:{line}: not UTF-8 text (byte 0x{byte:02x}); save it as UTF-8")


def read_text(path: Path) -> str:
    """The whole file as normalised text (for the formats that need all of it: .txt, .json, .csv)."""
    _check_not_binary(path)
    with _reading(path):
        data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise _not_utf8(path, data[: e.start].count(b"\n") + 1, data[e.start]) from None
    return normalise(text)


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, normalised line) one at a time, so a large JSONL file is never held whole.

    A JSONL corpus with precomputed embeddings runs to hundreds of megabytes; decoding and NFKC-normalising it
    as one string took about 16 times its size in memory.
    """
    _check_not_binary(path)
    with _reading(path), path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw = raw[len(codecs.BOM_UTF8) :]
            raw = raw.removesuffix(b"\n").removesuffix(b"\r")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise _not_utf8(path, lineno, raw[e.start]) from None
            yield lineno, normalise(line)


def _venue_from_header(line: str) -> tuple[str, int | None]:
    m = _HEADER_VENUE.search(line)
    if not m:
        return "", None
    return f"{m.group(1)} {m.group(2)}", int(m.group(2))


def _is_header(paragraph: str) -> bool:
    line = paragraph.strip()
    return "\n" not in line and len(line) <= 120 and len(line.split()) <= 12 and not line.endswith(".")


def _paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, paragraph) for each blank-line-separated paragraph."""
    buf: list[str] = []
    start = 1
    for lineno, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            if not buf:
                start = lineno
            buf.append(line)
        elif buf:
            yield start, "\n".join(buf)
            buf = []
    if buf:
        yield start, "\n".join(buf)


def parse_txt(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    venue, year = "", None
    paras = list(_paragraphs(text))
    if paras and _is_header(paras[0][1]) and len(paras) > 1:
        venue, year = _venue_from_header(paras[0][1])
        paras = paras[1:]
    for lineno, para in paras:
        yield lineno, {"abstract": para, "venue": venue, "year": year}


def parse_jsonl(
    path: Path, lines: Iterable[tuple[int, str]], skip_bad: bool, messages: list[str]
) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """Records of a JSONL file; a malformed line aborts, or with ``skip_bad`` yields None for it."""
    blank = True
    for lineno, line in lines:
        if not line.strip():
            continue
        blank = False
        try:
            rec = json.loads(line)
            if not isinstance(rec, dict):
                raise ValueError("expected a JSON object")
        except (ValueError, RecursionError) as e:
            why = "nested too deeply" if isinstance(e, RecursionError) else getattr(e, "msg", e)
            msg = f"{path}:{lineno}: malformed JSON line ({why})"
            if not skip_bad:
                raise BadLinesError(msg) from None
            messages.append("skipped " + msg)
            yield lineno, None
            continue
        yield lineno, rec
    if blank:
        raise InputError(f"{path}: the file is empty")


def parse_json(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        data = json.loads(text)
    except RecursionError:
        raise InputError(f"{path}: malformed JSON (nested too deeply)") from None
    except ValueError as e:
        raise InputError(f"{path}:{getattr(e, 'lineno', '?')}: malformed JSON ({getattr(e, 'msg', e)})") from None
    if isinstance(data, dict):
        data = data.get("papers", data.get("records"))
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON array of paper objects")
    for i, rec in enumerate(data, start=1):
        if not isinstance(rec, dict):
            raise InputError(f"{path}: item {i} is not a JSON object")
        yield i, rec


def parse_csv(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows as dicts keyed by the lower-cased header, each with the line its record starts on.

    Strict: a stray or unterminated quote is an error naming the line of the record it is in, rather than
    silently merging the following rows into one field.
    """
    csv.field_size_limit(MAX_FIELD * 4)
    reader = csv.reader(io.StringIO(text), strict=True)
    start = 1
    try:
        header: list[str] = []
        while not header:
            start = reader.line_num + 1
            row = next(reader, None)
            if row is None:
                raise InputError(f"{path}: empty CSV file")
            header = row
        fields = [h.strip().lower() for h in header]
        start = reader.line_num + 1
        for row in reader:
            if row:  # blank lines are no records
                rec: dict[str, Any] = {}
                for i, name in enumerate(fields):
                    rec[name] = row[i] if i < len(row) else None
                yield start, rec
            start = reader.line_num + 1
    except csv.Error as e:
        raise InputError(f"{path}:{start}: malformed CSV in the record starting on this line ({e})") from None


def records_of(
    path: Path, skip_bad: bool = False, messages: list[str] | None = None
) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """The records of one file, one at a time (with their line numbers)."""
    messages = messages if messages is not None else []
    suffix = path.suffix.lower()
    records: Iterable[tuple[int, dict[str, Any] | None]]
    if suffix == ".jsonl":  # read line by line: embedded corpora are large
        yield from parse_jsonl(path, read_lines(path), skip_bad, messages)
        return
    if suffix not in (".json", ".csv", ".txt", ""):
        raise InputError(f"{path}: unsupported file type '{suffix}' (use .txt, .jsonl, .json or .csv)")
    text = read_text(path)
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    if suffix == ".json":
        records = parse_json(path, text)
    elif suffix == ".csv":
        records = parse_csv(path, text)
    else:
        records = parse_txt(path, text)
    yield from records
