"""``askpapers embed``: embed a corpus once and write it back as JSONL with an ``embedding`` per record.

The output holds each paper's fields plus ``embedding`` (one vector per askpapers chunk) and ``embedder``.
Ingesting it skips the model, so a corpus embedded once (or on a bigger machine) loads at Chroma's write
speed. Writing is resumable: a rerun keeps the records already written and embeds the rest.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.embed import Embedder, get_embedder
from askpapers.vectorstore.errors import InputError
from askpapers.vectorstore.parse import parse_paths
from askpapers.vectorstore.pipeline import embed_batch, progress_bar

DECIMALS = 6  # cosine similarities move by less than 1e-5


def _done_ids(out: Path) -> set[str]:
    """Ids already in ``out``; a partial last line (a killed run) is cut off first."""
    if not out.exists():
        return set()
    data = out.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with out.open("r+b") as fh:
            fh.truncate(end)
    ids = set()
    for n, line in enumerate(data[:end].splitlines(), start=1):
        if line.strip():
            try:
                ids.add(str(json.loads(line)["id"]))
            except (ValueError, KeyError, TypeError) as e:
                raise InputError(f"{out}:{n}: not a record written by `askpapers embed` ({e}); remove the file") from e
    return ids


def embed_to_jsonl(
    paths: Iterable[str | os.PathLike[str]],
    out: Path,
    settings: StoreSettings,
    *,
    skip_bad: bool = False,
    progress: bool | None = None,
    embedder: Embedder | None = None,
) -> tuple[int, int]:
    """Embed the papers of ``paths`` into ``out``; returns (written now, already there)."""
    papers = parse_paths(paths, skip_bad=skip_bad).papers
    done = _done_ids(out)
    todo = [p for p in papers if p.paper_id not in done]  # in input order: the first N records are a sample too
    embedder = embedder or get_embedder()
    out.parent.mkdir(parents=True, exist_ok=True)
    bar = progress_bar(len(todo), progress)
    try:
        with out.open("a", encoding="utf-8") as fh:
            for start in range(0, len(todo), settings.batch_size):
                batch = todo[start : start + settings.batch_size]
                lines = []
                for p, _chunks, vectors in embed_batch(batch, embedder, settings):
                    rec: dict[str, Any] = {
                        "id": p.paper_id,
                        "title": "" if p.title_derived else p.title,
                        "abstract": p.abstract,
                        "venue": p.venue,
                        "year": p.year,
                        "url": p.url,
                        "authors": list(p.authors),
                        "keywords": list(p.keywords),
                        "embedder": embedder.embedder_id,
                        "embedding": [[round(float(x), DECIMALS) for x in v] for v in vectors],
                    }
                    lines.append(json.dumps(rec, ensure_ascii=False) + "\n")
                fh.write("".join(lines))
                fh.flush()
                bar.update(len(batch))  # type: ignore[attr-defined]
    finally:
        bar.close()  # type: ignore[attr-defined]
    return len(todo), len(done)
