"""Questions read papers and chunk texts from the BM25 index, not from Chroma (issue 25).

Chroma reads a stored document in about half a millisecond, so the records of a question's results and the texts
of its dense hits cost a first-time search more than everything else it reads. The store records each paper's
chunk offsets in its metadata; the BM25 index, derived from the store, keeps each paper's fields and offsets, and
cuts a chunk's text from the abstract. A store written before the offsets were recorded still answers the same,
reading the chunk texts from Chroma.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from askpapers.rag.api import AskPapers
from askpapers.vectorstore import store as store_module
from askpapers.vectorstore.lexical import sync_lexical
from askpapers.vectorstore.pipeline import ingest
from askpapers.vectorstore.records import paper_metadata, parse_spans
from askpapers.vectorstore.store import Store
from tests.conftest import CORPUS, make_settings

QUESTIONS = [
    "Which papers use information bottleneck?",
    "How many papers study federated learning?",
    "graph neural networks for molecules",
    "What is known about machine unlearning?",
]


def count_reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count the reads of documents from Chroma: paper records and chunk texts."""
    calls: Counter[str] = Counter()

    def counted(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: Store, *args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(self, *args, **kwargs)

        return call

    for name in ("get_papers", "chunk_texts"):
        monkeypatch.setattr(Store, name, counted(name, getattr(Store, name)))
    return calls


def answers(app: AskPapers) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for q in QUESTIONS:
        hits = app.search(q)
        a = app.ask(q, mode="extractive")
        out.append((q, [(h.paper_id, h.snippet) for h in hits], a.text, a.total, [c.paper_id for c in a.citations]))
    return out


def test_the_index_holds_the_records_and_chunk_texts_chroma_stores(fresh_settings: Any, embedder: Any) -> None:
    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    store = Store(fresh_settings.store, embedder.embedder_id, embedder.dim)
    index = sync_lexical(store, fresh_settings.store)
    stored = {p.paper_id: p for p in store.iter_papers()}
    assert len(stored) == 38
    assert any(len(p.spans) > 1 for p in stored.values()), "some abstracts have several chunks"
    from_index = index.papers(list(stored))
    assert from_index == stored
    assert {pid: p.spans for pid, p in from_index.items()} == {pid: p.spans for pid, p in stored.items()}
    chunk_ids = list(store.chunks.get(include=[])["ids"])
    assert len(chunk_ids) > len(stored)
    assert index.chunk_texts(chunk_ids) == store.chunk_texts(chunk_ids)
    assert index.papers(["no-such-paper"]) == {} and index.chunk_texts(["no-such-paper:0", "bad"]) == {}


def test_questions_read_no_document_from_chroma_and_answer_as_a_store_without_offsets(
    tmp_path: Path, fresh_settings: Any, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    calls = count_reads(monkeypatch)
    app = AskPapers(fresh_settings, warm=False)
    with_offsets = answers(app)
    assert sum(calls.values()) == 0, f"documents read from Chroma: {dict(calls)}"

    # a store written before the offsets were recorded: its chunk texts come from Chroma, and the answers are the same
    old = make_settings(tmp_path / "old-store", collection="old")
    with monkeypatch.context() as m:
        m.setattr(store_module, "paper_metadata", lambda p, n, t, spans=(): paper_metadata(p, n, t))
        ingest([CORPUS], old.store, progress=False, embedder=embedder)
    calls.clear()
    assert answers(AskPapers(old, warm=False)) == with_offsets
    assert calls["chunk_texts"] > 0


@pytest.mark.parametrize(
    ("text", "n_chunks", "length", "spans"),
    [
        ("0-10,8-20", 2, 20, ((0, 10), (8, 20))),
        ("0-10", 2, 20, ()),  # not one per chunk
        ("0-30", 1, 20, ()),  # past the abstract
        ("5-5", 1, 20, ()),  # empty
        ("a-b", 1, 20, ()),
        ("", 0, 20, ()),
    ],
)
def test_stored_offsets_are_checked(text: str, n_chunks: int, length: int, spans: tuple[tuple[int, int], ...]) -> None:
    assert parse_spans(text, n_chunks, length) == spans


def test_venues_years_and_count_are_kept_through_updates(tmp_path: Path) -> None:
    """The planner reads the distinct venues and years per question: they are recorded at build and kept right by
    each update (a replaced paper can take its venue away), as is the paper count, without a scan of every row."""
    from askpapers.vectorstore.lexical import LexicalIndex
    from askpapers.vectorstore.types import Paper

    def paper(pid: str, venue: str, year: int | None) -> Paper:
        return Paper(paper_id=pid, title=f"Title {pid}", abstract=f"We study topic {pid} in depth.", venue=venue,
                     year=year)  # fmt: skip

    def scanned(index: LexicalIndex) -> tuple[list[str], list[int], int]:
        conn = index._conn()
        assert conn is not None
        venues = sorted({v for (v,) in conn.execute("SELECT DISTINCT venue FROM papers") if v})
        years = sorted({int(y) for (y,) in conn.execute("SELECT DISTINCT year FROM papers") if y not in (None, "")})
        return venues, years[::-1], int(conn.execute("SELECT count(*) FROM papers").fetchone()[0])

    index = LexicalIndex(tmp_path / "x.lexical.sqlite")
    assert index.rebuild([paper("a", "ICML", 2024), paper("b", "ICLR", 2023), paper("c", "", None)], "r1") == 3
    assert (index.venues(), index.years(), index.size()) == (["ICLR", "ICML"], [2024, 2023], 3) == scanned(index)
    assert index.update([paper("d", "NeurIPS", 2025)], "r2", since=1.0) == 4
    assert (index.venues(), index.years(), index.size()) == (["ICLR", "ICML", "NeurIPS"], [2025, 2024, 2023], 4)
    assert scanned(index) == (index.venues(), index.years(), index.size())
    # "b" moves from ICLR 2023 to ICML 2024: ICLR and 2023 are gone
    assert index.update([paper("b", "ICML", 2024)], "r3", since=2.0) == 4
    assert (index.venues(), index.years(), index.size()) == (["ICML", "NeurIPS"], [2025, 2024], 4) == scanned(index)
    conn = index._conn()
    assert conn is not None  # (read from the meta rows, not by a scan)
    assert dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('venues', 'years')").fetchall()) == {
        "venues": '["ICML", "NeurIPS"]',
        "years": "[2024, 2025]",
    }


def test_adding_papers_reads_only_their_records(
    tmp_path: Path, fresh_settings: Any, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ingest reads the stored records of the papers it was given, not of every paper in the store (at 200k
    papers that read took a minute for a thousand new ones); every record only when a derived title must be made
    unique among them."""
    import json

    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    scans: list[int] = []
    real = Store.stored

    def stored(self: Store, ids: Any = None) -> Any:
        if ids is None:
            scans.append(1)
        return real(self, ids)

    monkeypatch.setattr(Store, "stored", stored)
    again = ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    assert (again.unchanged, again.added, scans) == (38, 0, [])
    titled = tmp_path / "titled.jsonl"
    records = [{"id": f"n{i}", "title": f"New paper {i}", "abstract": f"We study topic {i} with a new method."}
               for i in range(2)]  # fmt: skip
    titled.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = ingest([titled], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.added, report.total_papers, scans) == (2, 40, [])
    untitled = tmp_path / "untitled.jsonl"
    untitled.write_text(json.dumps({"id": "u1", "abstract": "We study topic 0 with a new method and report results."})
                        + "\n")  # fmt: skip
    report = ingest([untitled], fresh_settings.store, progress=False, embedder=embedder)
    assert (report.added, scans) == (1, [1])
    titles = [p.title.lower() for p in Store(fresh_settings.store, embedder.embedder_id, embedder.dim).iter_papers()]
    assert len(titles) == len(set(titles)) == 41


def test_a_paper_written_again_in_its_venue_and_year_needs_no_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An update scans every row for the venues and years only when a replaced paper moved (0.5 s at 900k papers,
    issue 25): a paper written again with its venue and year, or a new one, keeps the recorded sets."""
    from askpapers.vectorstore import lexical
    from askpapers.vectorstore.types import Paper

    index = lexical.LexicalIndex(tmp_path / "x.lexical.sqlite")
    index.rebuild([Paper(paper_id="a", title="A", abstract="Graphs.", venue="ICML", year=2024),
                   Paper(paper_id="b", title="B", abstract="Trees.", venue="ICLR", year=2023)], "r1")  # fmt: skip
    scans: list[int] = []
    scan = lexical._scanned_facets
    monkeypatch.setattr(lexical, "_scanned_facets", lambda conn: scans.append(1) or scan(conn))
    again = Paper(paper_id="a", title="A", abstract="Graphs, again.", venue="ICML", year=2024)
    index.update([again, Paper(paper_id="c", title="C", abstract="Sets.", venue="NeurIPS", year=2025)], "r2", since=1.0)
    assert scans == [] and (index.venues(), index.years()) == (["ICLR", "ICML", "NeurIPS"], [2025, 2024, 2023])
    index.update([Paper(paper_id="b", title="B", abstract="Trees.", venue="ICML", year=2023)], "r3", since=2.0)
    assert scans == [1] and (index.venues(), index.years()) == (["ICML", "NeurIPS"], [2025, 2024, 2023])


def test_an_update_reads_again_only_the_papers_it_does_not_hold_as_written(
    tmp_path: Path, fresh_settings: Any, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The BM25 index fetches the papers written in LEXICAL_SLACK before its mark again (a writer may commit late),
    but skips those it holds at the stamp they were written with: right after an ingest, the next one's update
    writes only its own papers and the papers written again (at 900k papers, the previous shard's last 12,000
    papers were read and rewritten in 40 s of a 48 s update, issue 25)."""
    import json

    from askpapers.vectorstore.lexical import LexicalIndex, lexical_path

    updated: list[list[str]] = []
    real = LexicalIndex.update

    def update(self: LexicalIndex, papers: Any, *args: Any, **kwargs: Any) -> int:
        papers = list(papers)
        updated.append(sorted(p.paper_id for p in papers))
        return real(self, papers, *args, **kwargs)

    monkeypatch.setattr(LexicalIndex, "update", update)
    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)  # (a rebuild: no index yet)
    assert updated == []
    index = LexicalIndex(lexical_path(fresh_settings.store))
    assert len(index.stamps([p.paper_id for p in index.listing()])) == 38  # (the rebuild kept every stamp)

    def write(name: str, records: list[dict[str, str]]) -> Path:
        path = tmp_path / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return path

    new = [{"id": f"n{i}", "title": f"Quokka study {i}", "abstract": f"We count quokkas on island {i}."}
           for i in range(2)]  # fmt: skip
    ingest([write("new.jsonl", new)], fresh_settings.store, progress=False, embedder=embedder)
    assert updated == [["n0", "n1"]]
    changed = [{"id": "n0", "title": "Quokka study 0", "abstract": "We count numbats on island 0."}]
    ingest([write("changed.jsonl", changed)], fresh_settings.store, progress=False, embedder=embedder)
    assert updated[-1] == ["n0"]
    assert index.surface_ids([[["numbats"]]]) == {"n0"} and index.surface_ids([[["quokkas"]]]) == {"n1"}
    assert index.size() == 40


def test_a_listing_stops_at_its_last_page(fresh_settings: Any, embedder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listing the papers written since a time asks Chroma once per page, not once more for an empty page (a
    filtered query over the whole store: 0.2 s at 1M papers, a fifth of a 1,000-paper update's listing)."""
    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    store = Store(fresh_settings.store, embedder.embedder_id, embedder.dim)
    asked: list[int | None] = []
    real = store.papers.get

    def get(*args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs.get("limit"))
        return real(*args, **kwargs)

    monkeypatch.setattr(store.papers, "get", get)
    assert len(store.stamps_since(0.0)) == 38 and asked == [store_module.LIST_PAGE]
    monkeypatch.setattr(store_module, "LIST_PAGE", 10)
    asked.clear()
    assert len(store.stamps_since(0.0)) == 38 and asked == [10] * 4  # (10, 10, 10 and the last 8)
    asked.clear()
    assert len(list(store.iter_papers())) == 38 and len(asked) == 4
