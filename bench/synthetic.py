"""A large corpus for the scale benchmark: the real dev papers, then synthetic ones (issue 25).

Embedding a million abstracts with the model takes about 12 hours on 2 cores, so the rows past the real corpus
are **synthetic**: each is made of real sentences (a real title, and 3–8 sentences drawn from the abstracts of
different real papers) under a new id, ``synthetic:NNNNNNN``, with ``"synthetic": true`` in its record. Every paper,
real or synthetic, carries one seeded random unit vector (the abstract is then one chunk), so only the timings of
a store built from these files mean anything: the dense neighbours are arbitrary.

The files are written once into the benchmark cache, in shards of :data:`SHARD` papers, and reused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

SHARD = 100_000  # papers a shard file holds (one ingest each, so progress shows and memory stays bounded)
DIM = 384  # the embedder's dimensions
SENTENCES = (3, 8)  # sentences of a synthetic abstract, at least and at most
_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")


def _real(corpus: Path) -> list[dict[str, str]]:
    seen: set[str] = set()
    out = []
    for line in corpus.open(encoding="utf-8"):
        if not line.strip():
            continue
        rec = json.loads(line)
        if rec["id"] in seen or not rec.get("abstract"):
            continue
        seen.add(rec["id"])
        out.append({"id": rec["id"], "title": rec.get("title", ""), "abstract": rec["abstract"]})
    return out


def records(corpus: Path, n: int, seed: int = 25, prefix: str = "") -> Iterator[dict[str, object]]:
    """The first ``n`` records: the real papers of ``corpus`` (distinct ids), then synthetic ones, each with one
    random vector; with ``prefix``, ``n`` synthetic records only, their ids ``synthetic-PREFIX:NNNNNNN``."""
    rng = np.random.default_rng(seed)
    real = _real(corpus)
    sentences = [_SPLIT.split(p["abstract"]) for p in real]

    def vector() -> list[float]:
        v = rng.standard_normal(DIM).astype(np.float32)
        out: list[float] = np.round(v / np.linalg.norm(v), 4).tolist()
        return out

    head = [] if prefix else real[:n]
    for p in head:
        yield {**p, "embedding": vector()}
    for i in range(n - len(head)):
        k = int(rng.integers(SENTENCES[0], SENTENCES[1] + 1))
        donors = rng.integers(0, len(real), size=k)
        picked = []
        for d in donors:
            sents = sentences[int(d)]
            picked.append(sents[int(rng.integers(0, len(sents)))])
        title = real[int(rng.integers(0, len(real)))]["title"]
        pid = f"synthetic-{prefix}:{i:07d}" if prefix else f"synthetic:{i:07d}"
        yield {"id": pid, "title": title, "abstract": " ".join(picked), "synthetic": True, "embedding": vector()}


def shards(corpus: Path, n: int, cache: Path, start: int = 0) -> list[Path]:
    """Shard files of the first ``n`` records (see :func:`records`), written once into ``cache``; with ``start``,
    records ``start`` to ``n`` only (the papers added to a store that already holds the first ``start``)."""
    folder = cache / f"synthetic-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    done = folder / "ready"
    if not done.exists():
        out = None
        for i, rec in enumerate(records(corpus, n)):
            if i % SHARD == 0:
                if out is not None:
                    out.close()
                out = (folder / f"shard-{i // SHARD:03d}.jsonl").open("w", encoding="utf-8")
            assert out is not None
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        if out is not None:
            out.close()
        done.write_text(str(n))
    files = sorted(folder.glob("shard-*.jsonl"))
    if start:
        first, skip = divmod(start, SHARD)
        if skip:
            raise ValueError(f"start must be a multiple of {SHARD:,}")
        files = files[first:]
    return files


def extra(corpus: Path, n: int, label: str, cache: Path) -> Path:
    """``n`` more synthetic papers, ids ``synthetic-LABEL:NNNNNNN`` (the papers of an incremental update)."""
    out = cache / f"synthetic-{label}-{n}.jsonl"
    if not out.exists():
        tmp = out.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for rec in records(corpus, n, seed=26, prefix=label):
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        tmp.replace(out)
    return out
