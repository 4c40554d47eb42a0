"""Read corpus files into :class:`Paper` records.

Inputs: the plain-text list shape (optional header line naming the list, then one abstract per
blank-line-separated paragraph), JSONL, a JSON array, CSV, or a folder of such files. Every error
names the file (and the line where there is one); nothing is written until every file has parsed.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .errors import BadLinesError, InputError
from .text import normalise, one_line
from .titles import code_urls, derive_title, unique_titles
from .types import Paper

SUFFIXES = {".txt", ".jsonl", ".json", ".csv"}
_HEADER_VENUE = re.compile(r"\b([A-Z][A-Za-z-]{1,20})\s*['’]?\s*((?:19|20)\d{2})(?!\d)")
_MAX_FIELD = 2_000_000


@dataclass
class ParseResult:
    papers: list[Paper]
    skipped: int = 0
    messages: list[str] = field(default_factory=list)
    files: int = 0


def abstract_key(abstract: str) -> str:
    return one_line(abstract).lower()


def short_hash(text: str) -> str:
    return hashlib.sha256(abstract_key(text).encode("utf-8")).hexdigest()[:16]


def expand_paths(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files to read: each file given, and the corpus files found under each folder given."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise InputError(f"{p}: no such file or folder")
        if p.is_dir():
            seen: set[str] = set()
            for root, dirs, files in os.walk(p, followlinks=True):
                real = os.path.realpath(root)
                if real in seen:  # a symlink loop
                    dirs[:] = []
                    continue
                seen.add(real)
                dirs.sort()
                for name in sorted(files):
                    f = Path(root) / name
                    if f.suffix.lower() in SUFFIXES and not name.startswith(".") and f.is_file():
                        out.append(f)
        else:
            out.append(p)
    return out


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
    csv.field_size_limit(_MAX_FIELD * 4)
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


def _as_tuple(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        return tuple(v.strip() for v in re.split(r"[;|]", value) if v.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(v).strip() for v in value if str(v).strip())
    return (str(value),)


def _year(value: Any, venue: str, where: str) -> int | None:
    """The record's year (an integer or a string of digits), else one named in the venue, else None."""
    if isinstance(value, str) and re.fullmatch(r"\s*\d{1,12}\s*", value):  # not isdigit(): int("²") fails
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        if not 0 < value < 10_000:  # 10**30 would overflow the stores' 64-bit integers after the chunks are written
            raise InputError(f"{where}: 'year' is {value}, which is not a year")
        return value
    m = re.search(r"(?:19|20)\d{2}", venue or "")
    return int(m.group(0)) if m else None


def _embedding(value: Any, where: str) -> np.ndarray | None:
    """A precomputed embedding: one vector (the whole abstract is one chunk) or one vector per chunk.

    Kept as a float32 matrix (one row per chunk): 50k papers' vectors as Python floats would take gigabytes.
    """
    if value is None:
        return None
    rows = value if isinstance(value, list) and value and all(isinstance(v, list) for v in value) else [value]
    for row in rows:
        if (
            not isinstance(row, list)
            or not row
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row)
        ):
            raise InputError(f"{where}: 'embedding' must be a list of numbers, or a list of such lists (one per chunk)")
    if len({len(r) for r in rows}) > 1:
        dims = "/".join(str(n) for n in sorted({len(r) for r in rows}))
        raise InputError(f"{where}: the vectors of 'embedding' have different lengths ({dims})")
    try:
        matrix = np.asarray(rows, dtype=np.float32)
    except OverflowError:  # an integer beyond any float, such as 10**400
        raise InputError(f"{where}: 'embedding' holds a number too large for a vector") from None
    if not np.isfinite(matrix).all():
        raise InputError(f"{where}: 'embedding' holds a NaN or infinite value")
    return matrix


def to_paper(rec: dict[str, Any], where: str, source: str) -> Paper | None:
    """A paper from one record, or None when it has no abstract."""
    abstract = rec.get("abstract") or rec.get("text") or ""
    if not isinstance(abstract, str):
        raise InputError(f"{where}: 'abstract' must be a string")
    abstract = one_line(normalise(abstract))
    if not abstract:
        return None
    if len(abstract) > _MAX_FIELD:
        raise InputError(f"{where}: abstract is {len(abstract):,} characters (limit {_MAX_FIELD:,})")
    title = one_line(normalise(str(rec.get("title") or "")))
    venue = one_line(str(rec.get("venue") or ""))
    # a blank id counts as none: an empty id would fail in the store after the paper's chunks are written
    given_id = str(rec["id"]).strip() if rec.get("id") is not None else ""
    url = str(rec.get("url") or "")
    authors, keywords = _as_tuple(rec.get("authors")), _as_tuple(rec.get("keywords"))
    embedded_with = str(rec.get("embedder") or "")
    try:  # JSON can escape a lone surrogate ("\ud800"), which cannot be encoded, hashed or stored
        "".join((abstract, title, venue, given_id, url, embedded_with, *authors, *keywords)).encode("utf-8")
    except UnicodeEncodeError as e:
        bad = e.object[e.start : e.start + 1]
        raise InputError(f"{where}: the record holds {bad!r}, a lone surrogate that is not valid text") from None
    paper_id = given_id or short_hash(abstract)
    links = code_urls(abstract + " " + url)
    return Paper(
        paper_id=paper_id,
        title=title or derive_title(abstract),
        title_derived=not title,
        abstract=abstract,
        venue=venue,
        year=_year(rec.get("year"), venue, where),
        url=url,
        authors=authors,
        keywords=keywords,
        code_urls=links,
        source=source,
        embedding=_embedding(rec.get("embedding"), where),
        embedded_with=embedded_with,
    )


def parse_file(path: Path, *, skip_bad: bool = False, messages: list[str] | None = None) -> tuple[list[Paper], int]:
    """Papers in one file, and how many records were skipped (no abstract, or bad with skip_bad)."""
    messages = messages if messages is not None else []
    return _papers(path, records_of(path, skip_bad, messages), messages, skip_bad)


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


def _papers(
    path: Path, records: Iterable[tuple[int, dict[str, Any] | None]], messages: list[str], skip_bad: bool = False
) -> tuple[list[Paper], int]:
    """The papers of a file's records. A file that yields none is an error naming what is missing (with
    ``skip_bad``: its records are skipped and counted)."""
    papers: list[Paper] = []
    skipped = 0
    fields: set[str] = set()  # the field names the records had
    bad = 0  # records that were malformed (skipped with skip_bad)
    for lineno, rec in records:
        if rec is None:
            skipped += 1
            bad += 1
            continue
        fields.update(k for k, v in rec.items() if v not in (None, ""))
        paper = to_paper(rec, f"{path}:{lineno}", str(path))
        if paper is None:
            skipped += 1
            messages.append(f"skipped {path}:{lineno}: record has no abstract")
        else:
            papers.append(paper)
    if not papers and not skip_bad:
        raise BadLinesError(f"{path}: {_no_paper(path, fields, skipped - bad)}", "fix the file or pass --skip-bad")
    return papers, skipped


def _no_paper(path: Path, fields: set[str], records: int) -> str:
    """Why a file yielded no paper, in words: the column or field that is missing."""
    suffix = path.suffix.lower()
    if suffix in (".txt", ""):
        return "no abstract found (only a header line)"
    if not records:
        return "no records found"
    if "abstract" in fields or "text" in fields:
        return f"no paper found: the abstracts of all {records} records are empty"
    what = "column" if suffix == ".csv" else "field"
    has = ", ".join(sorted(fields)[:8]) or "none"
    return f"no paper found: no 'abstract' or 'text' {what} (the records have: {has})"


def parse_paths(paths: Iterable[str | os.PathLike[str]], *, skip_bad: bool = False) -> ParseResult:
    """Parse every file, then merge: identical abstracts become one paper; a repeated id keeps the later text."""
    files = expand_paths(paths)
    if not files:
        raise InputError("no corpus files found (.txt, .jsonl, .json or .csv)")
    result = ParseResult(papers=[], files=len(files))
    by_id: dict[str, Paper] = {}
    by_text: dict[str, str] = {}
    for f in files:
        papers, skipped = parse_file(f, skip_bad=skip_bad, messages=result.messages)
        result.skipped += skipped
        for p in papers:
            key = abstract_key(p.abstract)
            if key in by_text:  # the same abstract again: one paper
                result.skipped += 1
                result.messages.append(f"skipped {p.source}: duplicate of paper {by_text[key]}")
                continue
            if p.paper_id in by_id and abstract_key(by_id[p.paper_id].abstract) != key:
                by_text.pop(abstract_key(by_id[p.paper_id].abstract), None)
                result.messages.append(
                    f"{p.source}: id {p.paper_id} appears again with different text; the later one wins"
                )
            by_id[p.paper_id] = p
            by_text[key] = p.paper_id
    derived = [(pid, p.title) for pid, p in by_id.items() if p.title_derived]
    fixed = unique_titles(derived, taken={p.title.lower() for p in by_id.values() if not p.title_derived})
    result.papers = [replace(p, title=fixed[pid]) if pid in fixed else p for pid, p in by_id.items()]
    return result
