"""Ingestion into Chroma: idempotence, updates, atomic failure, embedder identity, no default EF."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from askpapers.rag.api import AskPapers
from askpapers.vectorstore.errors import EmbedderMismatchError, InputError
from askpapers.vectorstore.pipeline import ingest
from askpapers.vectorstore.store import Store
from tests.conftest import CORPUS, make_settings


def _write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _chunk_ids(settings, embedder) -> list[str]:  # type: ignore[no-untyped-def]
    store = Store(settings.store, embedder.embedder_id, embedder.dim)
    return list(store.chunks.get(include=[])["ids"])


def test_reingest_changes_nothing(fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    first = ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    assert (first.added, first.updated, first.unchanged) == (38, 0, 0)
    assert first.chunks > 38 and first.total_papers == 38
    ids_before = sorted(_chunk_ids(fresh_settings, embedder))
    second = ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    assert (second.added, second.updated, second.unchanged, second.chunks) == (0, 0, 38, 0)
    assert sorted(_chunk_ids(fresh_settings, embedder)) == ids_before
    assert len(ids_before) == len(set(ids_before)) == first.chunks


def test_changed_abstract_replaces_its_chunks(tmp_path, fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    long = " ".join(f"Sentence number {i} talks about graph neural networks and message passing." for i in range(60))
    f = _write_jsonl(tmp_path / "a.jsonl", [{"id": "p1", "title": "Graph paper", "abstract": long}])
    r1 = ingest([f], fresh_settings.store, progress=False, embedder=embedder)
    n_long = r1.chunks
    assert r1.added == 1 and n_long >= 3
    _write_jsonl(f, [{"id": "p1", "title": "Graph paper", "abstract": "A short abstract about kernels."}])
    r2 = ingest([f], fresh_settings.store, progress=False, embedder=embedder)
    assert (r2.added, r2.updated, r2.unchanged) == (0, 1, 0)
    ids = _chunk_ids(fresh_settings, embedder)
    assert ids == ["p1:0"], "stale chunks of the old abstract must be deleted"
    store = Store(fresh_settings.store, embedder.embedder_id, embedder.dim)
    assert store.get_papers(["p1"])["p1"].abstract == "A short abstract about kernels."


def test_failed_ingest_leaves_store_unchanged(tmp_path, fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    good = _write_jsonl(tmp_path / "good.jsonl", [{"id": "g1", "abstract": "We study sparse autoencoders."}])
    ingest([good], fresh_settings.store, progress=False, embedder=embedder)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x1", "abstract": "Fine."}\n{"id": "x2", "abstract": \n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.jsonl:2"):
        ingest([good, CORPUS, bad], fresh_settings.store, progress=False, embedder=embedder)
    store = Store(fresh_settings.store, embedder.embedder_id, embedder.dim)
    assert store.count() == 1
    assert _chunk_ids(fresh_settings, embedder) == ["g1:0"]


def test_store_records_its_embedder(fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    f = CORPUS / "002_8e94c44c859812b6.txt"
    ingest([f], fresh_settings.store, progress=False, embedder=embedder)
    with pytest.raises(EmbedderMismatchError, match="built with embedder"):
        Store(fresh_settings.store, "some-other-model@123", 384)


def test_chroma_default_embedding_function_never_runs(monkeypatch, fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    import chromadb.api.types as chroma_types

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("Chroma's default embedding function ran (it downloads a model)")

    monkeypatch.setattr(chroma_types.DefaultEmbeddingFunction, "__call__", refuse)
    from askpapers.rag.api import AskPapers

    ingest([CORPUS / "000_998e2866a7010a14.txt"], fresh_settings.store, progress=False, embedder=embedder)
    answer = AskPapers(fresh_settings).ask("Which papers are about reservoir computing?")
    assert answer.found and answer.citations[0].title == "Parallel Echo State Network (ParalESN)"


def test_duplicate_abstracts_become_one_paper(tmp_path, fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    text = "Ingestion dedupes identical abstracts across files."
    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_text(f"Lab list 2025\n\n{text}\n", encoding="utf-8")
    b.write_text(f"{text}\n\nAnother abstract entirely.\n", encoding="utf-8")
    report = ingest([a, b], fresh_settings.store, progress=False, embedder=embedder)
    assert report.added == 2 and report.skipped == 1


# --- precomputed embeddings ----------------------------------------------------------------------------


def test_embed_export_then_ingest_matches_a_normal_ingest(tmp_path, fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    from askpapers.vectorstore.embed_export import embed_to_jsonl

    out = tmp_path / "embedded.jsonl"
    assert embed_to_jsonl([CORPUS], out, fresh_settings.store, progress=False, embedder=embedder) == (38, 0)
    assert embed_to_jsonl([CORPUS], out, fresh_settings.store, progress=False, embedder=embedder) == (0, 38)
    rec = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert rec["embedder"] == embedder.embedder_id and len(rec["embedding"][0]) == 384

    class NoModel:  # ingesting the export must not run the model on abstracts
        embedder_id, dim = embedder.embedder_id, embedder.dim
        count_tokens_batch = staticmethod(embedder.count_tokens_batch)

        def embed(self, texts):  # type: ignore[no-untyped-def]
            assert not texts, "precomputed papers were embedded again"
            return embedder.embed(texts)

    report = ingest([out], fresh_settings.store, progress=False, embedder=NoModel())  # type: ignore[arg-type]
    assert report.added == 38
    normal = make_settings(tmp_path / "normal")
    ingest([CORPUS], normal.store, progress=False, embedder=embedder)
    a, b = (Store(s.store, embedder.embedder_id, embedder.dim) for s in (fresh_settings, normal))
    got = a.chunks.get(include=["embeddings", "documents"])
    want = b.chunks.get(include=["embeddings", "documents"])
    assert sorted(got["ids"]) == sorted(want["ids"])
    vec_a = dict(zip(got["ids"], got["embeddings"], strict=True))
    vec_b = dict(zip(want["ids"], want["embeddings"], strict=True))
    assert max(float(abs(vec_a[i] - vec_b[i]).max()) for i in vec_a) < 1e-5
    q = "Which papers use information bottleneck?"
    assert [c.paper_id for c in AskPapers(fresh_settings).ask(q).citations] == [
        c.paper_id for c in AskPapers(normal).ask(q).citations
    ]


def test_one_precomputed_vector_is_used_for_the_whole_abstract(tmp_path, fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    # the vector says "quantum annealing"; the text does not: dense search can only find it through the vector
    vec = embedder.embed_query("quantum annealing schedules for spin glasses").tolist()
    f = _write_jsonl(tmp_path / "v.jsonl", [{"id": "qa", "abstract": "An abstract. " * 200, "embedding": vec}])
    ingest([CORPUS, f], fresh_settings.store, progress=False, embedder=embedder)
    store = Store(fresh_settings.store, embedder.embedder_id, embedder.dim)
    assert store.stored()["qa"].n_chunks == 1
    hits = store.query_chunks(embedder.embed_query("quantum annealing schedules for spin glasses"), 3)
    assert hits[0].paper_id == "qa" and hits[0].similarity > 0.99


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"embedding": [0.1] * 383}, r"v\.jsonl: paper 'bad': 'embedding' has 383 dimensions; .* makes 384"),
        ({"embedding": [[0.1] * 384, [0.1] * 12]}, r"v\.jsonl:2: .* different lengths \(12/384\)"),
        ({"embedding": [0.1] * 384, "embedder": "text-embedding-3-small"}, r"made by 'text-embedding-3-small'"),
        ({"embedding": [[0.1] * 384] * 5}, r"has 5 vectors but askpapers cuts this abstract into 1 chunks"),
        ({"embedding": "0.1, 0.2"}, r"v\.jsonl:2: 'embedding' must be a list of numbers"),
        ({"embedding": [0.1, None]}, r"v\.jsonl:2: 'embedding' must be a list of numbers"),
    ],
)
def test_bad_precomputed_embedding_is_rejected_and_nothing_written(
    tmp_path, fresh_settings, embedder, record, message
) -> None:  # type: ignore[no-untyped-def]
    good = {"id": "good", "abstract": "We study sparse autoencoders.", "embedding": [0.05] * 384}
    f = _write_jsonl(tmp_path / "v.jsonl", [good, {"id": "bad", "abstract": "Short abstract.", **record}])
    with pytest.raises(InputError, match=message):
        ingest([f], fresh_settings.store, progress=False, embedder=embedder)
    assert Store(fresh_settings.store, embedder.embedder_id, embedder.dim).count() == 0


def test_each_committed_batch_is_seen_by_a_running_app(tmp_path, fresh_settings, embedder, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An ingest that dies part-way has changed the store: a running app must see the batches it committed,
    even when they only updated abstracts (the paper count does not change; the revision marker must)."""
    from askpapers.vectorstore.errors import StoreError

    def write(name: str, records: list[dict[str, str]]) -> Path:
        path = tmp_path / name
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
        return path

    old = [{"id": "w", "abstract": "Wombat burrows in Tasmania."}, {"id": "v", "abstract": "Vole tunnels in Wales."}]
    ingest([write("a.jsonl", old)], fresh_settings.store, progress=False, embedder=embedder)
    app = AskPapers(fresh_settings)
    assert app.search("wombat burrows")[0].abstract == "Wombat burrows in Tasmania."
    # batches of 2, shortest papers first: the first batch updates "w" and "v", the second fails
    settings = fresh_settings.store.model_copy(update={"batch_size": 2})
    longer = " It was measured over several long field seasons by many careful volunteers."
    records = [{"id": "w", "abstract": "Kiwi nest in burrows."}, {"id": "v", "abstract": "Emu run in deserts."}] + [
        {"id": f"p{i}", "abstract": f"Paper {i} about the quokka populations of Rottnest island.{longer * i}"}
        for i in range(1, 5)
    ]
    real_write, calls = Store.write, []

    def failing_write(self, items, old_counts):  # type: ignore[no-untyped-def]
        calls.append(len(items))
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real_write(self, items, old_counts)

    monkeypatch.setattr(Store, "write", failing_write)
    with pytest.raises(StoreError, match="disk full"):
        ingest([write("b.jsonl", records)], settings, progress=False, embedder=embedder)
    assert app.index.store.count() == 2
    assert [pid for pid, _ in app.index.lexical.search("kiwi emu", 5)] in (["w", "v"], ["v", "w"])
    assert app.index.lexical.search("wombat", 5) == []
    hits = {h.paper_id: h.abstract for h in app.search("kiwi nest burrows")}
    assert hits["w"] == "Kiwi nest in burrows." and hits["v"] == "Emu run in deserts."  # not the cached records
    monkeypatch.setattr(Store, "write", real_write)
    report = ingest([write("b.jsonl", records)], settings, progress=False, embedder=embedder)
    assert (report.unchanged, report.added) == (2, 4)
    quokkas = {h.paper_id for h in app.search("quokka Rottnest", k=10) if "quokka" in h.abstract}
    assert quokkas == {f"p{i}" for i in range(1, 5)}


# -- progress, re-runs and files without papers (issue 16) ----------------------------------------------------------


def test_progress_is_reported_within_the_first_batch(fresh_settings, embedder, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """All 38 papers fit one batch (one commit): progress still moves before that commit, paper by paper."""
    assert fresh_settings.store.batch_size >= 38
    reports: list[tuple[int, int]] = []
    seen_at_commit: list[int] = []
    real_write = Store.write

    def write(self, items, old_counts):  # type: ignore[no-untyped-def]
        seen_at_commit.append(len(reports))
        return real_write(self, items, old_counts)

    monkeypatch.setattr(Store, "write", write)
    ingest(
        [CORPUS],
        fresh_settings.store,
        progress=False,
        embedder=embedder,
        on_progress=lambda d, t: reports.append((d, t)),
    )
    assert reports[-1] == (38, 38) and all(t == 38 for _, t in reports)
    done = [d for d, _ in reports]
    assert done == sorted(done) and len(set(done)) == len(done)
    assert any(0 < d < 38 for d in done), "progress shown inside the batch"
    assert seen_at_commit == [len(reports)], "one commit, after every report"


def test_rerun_says_nothing_to_do(fresh_settings, embedder) -> None:  # type: ignore[no-untyped-def]
    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    again = ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    assert again.summary() == "nothing to do: all 38 papers are already indexed; store holds 38 papers"


@pytest.mark.parametrize(
    ("name", "text", "missing"),
    [
        ("no-abstract.csv", "id,title,venue\n1,A title,ICML\n2,Another,ICML\n", "no 'abstract' or 'text' column"),
        ("no-abstract.jsonl", json.dumps({"id": "x", "title": "Only a title"}) + "\n", "no 'abstract' or 'text' field"),
        ("empty-abstracts.csv", "id,abstract\n1,\n2,  \n", "the abstracts of all 2 records are empty"),
        ("header-only.csv", "id,title,abstract\n", "no records found"),
    ],
)
def test_a_file_without_papers_is_an_error_unless_skip_bad(  # type: ignore[no-untyped-def]
    tmp_path, fresh_settings, embedder, name: str, text: str, missing: str
) -> None:
    ingest([CORPUS], fresh_settings.store, progress=False, embedder=embedder)
    before = sorted(_chunk_ids(fresh_settings, embedder))
    bad = tmp_path / name
    bad.write_text(text, encoding="utf-8")
    good = _write_jsonl(tmp_path / "good.jsonl", [{"id": "new", "abstract": "Narwhal tusks sense salinity."}])
    with pytest.raises(InputError) as e:
        ingest([good, bad], fresh_settings.store, progress=False, embedder=embedder)
    assert str(e.value).startswith(f"{bad}: ") and missing in str(e.value) and "--skip-bad" in str(e.value)
    assert sorted(_chunk_ids(fresh_settings, embedder)) == before, "the store is unchanged"
    report = ingest([good, bad], fresh_settings.store, skip_bad=True, progress=False, embedder=embedder)
    assert report.added == 1 and report.total_papers == 39
