"""Read corpus files into :class:`Paper` records.

Inputs: the plain-text list shape (optional header line naming the list, then one abstract per
blank-line-separated paragraph), JSONL, a JSON array, CSV, or a folder of such files. Every error
names the file (and the line where there is one); nothing is written until every file has parsed. The files are
read, and their records found, by :mod:`vectorstore.formats`; an upload's limits are checked by
:mod:`vectorstore.upload`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from askpapers.vectorstore.errors import BadLinesError, InputError
from askpapers.vectorstore.formats import MAX_FIELD, records_of
from askpapers.vectorstore.text import normalise, one_line
from askpapers.vectorstore.titles import code_urls, derive_title, unique_titles
from askpapers.vectorstore.types import Paper

SUFFIXES = {".txt", ".jsonl", ".json", ".csv"}


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
    if len(abstract) > MAX_FIELD:
        raise InputError(f"{where}: abstract is {len(abstract):,} characters (limit {MAX_FIELD:,})")
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
