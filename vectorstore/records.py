"""What the store keeps of a paper: its Chroma metadata and back (:func:`paper_metadata`, :func:`paper_from_record`),
the hash that tells a changed paper (:func:`content_hash`), and the ``where`` of a filter."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from askpapers.vectorstore.types import Filters, Paper


def content_hash(p: Paper) -> str:
    """Changes when anything a user gave for the paper changes (a derived title does not count)."""
    parts = [p.abstract, p.venue, str(p.year or ""), p.url, "|".join(p.authors), "|".join(p.keywords)]
    if not p.title_derived:
        parts.append(p.title)
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:20]


def where_clause(filters: Filters | None) -> dict[str, Any] | None:
    """The Chroma ``where`` for validated filters (venue, year, has_code), or None for no filter."""
    conds: list[dict[str, Any]] = []
    if filters is not None:
        if filters.venue is not None:
            conds.append({"venue": filters.venue})
        if filters.year is not None:
            conds.append({"year": filters.year})
        if filters.has_code:
            conds.append({"has_code": True})
    if not conds:
        return None
    return conds[0] if len(conds) == 1 else {"$and": conds}


def format_spans(spans: Sequence[tuple[int, int]]) -> str:
    """Chunk offsets as stored in a paper's metadata: ``"0-512,480-900"``."""
    return ",".join(f"{s}-{e}" for s, e in spans)


def parse_spans(text: str, n_chunks: int, length: int) -> tuple[tuple[int, int], ...]:
    """The chunk offsets of :func:`format_spans`, or () when they are missing, malformed, not one per chunk, or
    outside the abstract (then a chunk's text is read from Chroma)."""
    out = []
    for part in text.split(",") if text else []:
        s, sep, e = part.partition("-")
        if not sep or not s.isdigit() or not e.isdigit() or not int(s) < int(e) <= length:
            return ()
        out.append((int(s), int(e)))
    return tuple(out) if len(out) == n_chunks else ()


def paper_metadata(
    p: Paper, n_chunks: int, ingested_at: float = 0.0, spans: Sequence[tuple[int, int]] = ()
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "paper_id": p.paper_id,
        "title": p.title,
        "title_derived": p.title_derived,
        "venue": p.venue,
        "url": p.url,
        "authors": json.dumps(list(p.authors), ensure_ascii=False),
        "keywords": json.dumps(list(p.keywords), ensure_ascii=False),
        "code_urls": json.dumps(list(p.code_urls)),
        "has_code": p.has_code,
        "source": p.source,
        "hash": content_hash(p),
        "n_chunks": n_chunks,
        "ingested_at": ingested_at,  # when this record was written: derived indexes fetch what changed since
    }
    if spans:
        meta["spans"] = format_spans(spans)
    if p.year is not None:
        meta["year"] = p.year
    return meta


def paper_from_record(pid: str, document: str | None, meta: dict[str, Any]) -> Paper:
    return Paper(
        paper_id=pid,
        title=str(meta.get("title", "")),
        abstract=document or "",
        venue=str(meta.get("venue", "")),
        year=int(meta["year"]) if "year" in meta else None,
        url=str(meta.get("url", "")),
        authors=tuple(json.loads(str(meta.get("authors", "[]")))),
        keywords=tuple(json.loads(str(meta.get("keywords", "[]")))),
        code_urls=tuple(json.loads(str(meta.get("code_urls", "[]")))),
        title_derived=bool(meta.get("title_derived", False)),
        source=str(meta.get("source", "")),
        spans=parse_spans(str(meta.get("spans", "")), int(meta.get("n_chunks", 0) or 0), len(document or "")),
    )


@dataclass(frozen=True)
class StoredPaper:
    hash: str
    n_chunks: int
    title: str
