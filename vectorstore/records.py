"""What the store keeps of a paper: its Chroma metadata and back (:func:`paper_metadata`, :func:`paper_from_record`),
the hash that tells a changed paper (:func:`content_hash`), and the ``where`` of a filter."""

from __future__ import annotations

import hashlib
import json
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


def paper_metadata(p: Paper, n_chunks: int, ingested_at: float = 0.0) -> dict[str, Any]:
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
    )


@dataclass(frozen=True)
class StoredPaper:
    hash: str
    n_chunks: int
    title: str
