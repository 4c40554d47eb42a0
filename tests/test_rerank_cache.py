"""The reranker's per-paper data made faster without changing a feature: DocText built in one pass equals the
plain construction, and the features of the warmed (bulk) path equal those of the lazy path."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

import askpapers.vectorstore.store as store_module
from askpapers.rag.api import AskPapers
from askpapers.rag.retrieve.chroma_index import PaperIndex
from askpapers.rag.retrieve.rank_features import FEATURES
from askpapers.rag.retrieve.rerank import LearnedRanker, Pool
from askpapers.rag.retrieve.retrieval import FusionRetriever, hybrid
from askpapers.rag.settings import RetrievalSettings, Settings
from askpapers.vectorstore.embed import Embedder
from askpapers.vectorstore.errors import StoreError
from askpapers.vectorstore.features import DocText, encode
from askpapers.vectorstore.parse import parse_paths
from askpapers.vectorstore.pipeline import ingest
from askpapers.vectorstore.text import acronym_definitions, phrase_forms, sentence_spans, stems
from askpapers.vectorstore.text import tokens as word_tokens
from askpapers.vectorstore.types import Paper
from tests.conftest import CORPUS, make_settings

PROPERTY = hyp_settings(deadline=None, max_examples=300, database=None, suppress_health_check=[HealthCheck.too_slow])


def reference_doc(title: str, abstract: str) -> dict[str, object]:
    """DocText's fields as first written (each field from the text helpers directly): the oracle."""
    sent_stems = [frozenset(stems(abstract[s:e])) for s, e in sentence_spans(abstract)]
    if title:
        sent_stems.append(frozenset(stems(title)))
    return {
        "sent_stems": sent_stems,
        "title_stems": frozenset(stems(title)) if title else frozenset(),
        "all_stems": frozenset().union(*sent_stems) if sent_stems else frozenset(),
        "forms": phrase_forms(f"{title}. {abstract}" if title else abstract),
        "title_forms": phrase_forms(title) if title else set(),
        "acro": [(" " + " ".join(stems(lf)) + " ", a.lower()) for lf, a in acronym_definitions(abstract)],
        "n_tok": len(word_tokens(abstract)),
        "upper": abstract.upper(),
    }


def fields(dt: DocText) -> dict[str, object]:
    out: dict[str, object] = {name: getattr(dt, name) for name in DocText.FIELDS}
    for name in ("forms", "title_forms"):  # NUL-joined sets of forms (in the set's order)
        value = out[name]
        assert isinstance(value, str)
        out[name] = set(value.split("\0")) if value else set()
    return out


# Text that exercises the shortcuts: sentence ends and abbreviations, every kind of blank, hyphens that
# phrase_forms joins, case mappings that depend on context or change the length (final sigma, dotted I),
# acronym definitions, digits, underscores and punctuation.
PIECES = st.sampled_from(
    ["graph", "neural", "networks", "Networks", "(GNNs)", "(IB)", "information", "bottleneck", "state-of-the-art",
     "fine‐tuning", "pre‑trained", "e.g.", "et al.", "Fig.", "ΣΑΣ", "ΟΔΟΣ.", "İstanbul", "ǅ", "ﬁ", "x_1",
     "3.5", "U.S.", "LLMs", "LoRA", "-", "--", "(", ")", ".", "!", "?", '"', "'", "”", ";", "a", "of", "the", "A",
     "We", "1", "é", "ß", "\u0130", "\u03a3", "\u2010", "\u00ad"]
)  # fmt: skip
BLANKS = st.sampled_from([" ", "  ", "\n", "\t", " \n ", "", ". ", "? ", "! "])
TEXT = st.lists(st.tuples(PIECES, BLANKS), max_size=40).map(lambda parts: "".join(p + b for p, b in parts))


@PROPERTY
@given(title=TEXT, abstract=TEXT)
def test_doc_text_equals_the_reference_construction(title: str, abstract: str) -> None:
    assert fields(DocText(title, abstract)) == reference_doc(title, abstract)


@PROPERTY
@given(title=TEXT, abstract=TEXT)
def test_doc_text_stored_at_ingest_decodes_to_the_one_built_from_the_text(title: str, abstract: str) -> None:
    assert fields(DocText.decode(encode(title, abstract), abstract)) == reference_doc(title, abstract)


def test_doc_text_equals_the_reference_on_the_bundled_papers() -> None:
    papers = parse_paths([CORPUS]).papers
    assert len(papers) == 38
    for p in papers:
        title = "" if p.title_derived else p.title
        assert fields(DocText(title, p.abstract)) == reference_doc(title, p.abstract), p.paper_id
        assert fields(DocText(p.title, p.abstract)) == reference_doc(p.title, p.abstract), p.paper_id
        stored = DocText.decode(encode(title, p.abstract), p.abstract)
        assert fields(stored) == reference_doc(title, p.abstract), p.paper_id


def test_stemming_from_several_threads_at_once() -> None:
    """The warm-up stems in a background thread while questions stem in theirs (and the web app answers several
    questions at once): the Snowball stemmer object keeps its state between calls, so concurrent calls must not
    share it unguarded (they raised IndexError or returned another word's stem)."""
    import threading

    from askpapers.vectorstore.text import stem

    uncached = stem.__wrapped__  # (each call stems: no cache hits)
    words = sorted({w for p in parse_paths([CORPUS]).papers for w in word_tokens(p.abstract)})
    words += [w + suffix for w in words for suffix in ("ing", "ations", "ness", "ly")]
    expected = [uncached(w) for w in words]
    errors: list[BaseException] = []
    results: dict[int, list[str]] = {}

    def work(i: int) -> None:
        try:
            results[i] = [uncached(w) for w in words]
        except BaseException as e:  # (collected: asserted below)
            errors.append(e)

    for _ in range(3):
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors[:3]
        assert all(r == expected for r in results.values())


# -- the warm-up: the store's per-paper data built ahead of the questions -----------------------------------------
QUERIES = [
    "Which papers use information bottleneck?",
    "graph contrastive learning for recommendation",
    "quantization of large language models",
    "Which papers study diffusion models?",
    "LoRA fine-tuning",
    "reinforcement learning from human feedback (RLHF)",
]


def pools(retriever: FusionRetriever, app: AskPapers) -> list[Pool]:
    out = []
    for text in QUERIES:
        query = app.search_query(text)
        results, fused = retriever.fuse(query)
        out.append(retriever.pool(query, None, results, fused))
    return out


def assert_same_pools(got: list[Pool], expected: list[Pool]) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert g.ids == e.ids
        assert g.features.shape == e.features.shape and g.features.shape[0] > 0
        assert np.array_equal(g.features, e.features), [
            FEATURES[j] for j in np.nonzero((g.features != e.features).any(axis=0))[0]
        ]


def cut_off_from_the_store(index: PaperIndex) -> None:
    """Make every read of records and vectors from Chroma fail: what the index returns then comes from its caches."""

    def fail(*_: object) -> NoReturn:
        raise AssertionError("read from the store: not warmed")

    index.store.get_papers = fail  # type: ignore[method-assign]
    index.store.chunk_vectors = fail  # type: ignore[method-assign]
    index.store.paper_vectors = fail  # type: ignore[method-assign]


def test_warmed_features_equal_the_lazy_ones(app: AskPapers, corpus_settings: Settings, embedder: Embedder) -> None:
    lazy = hybrid(PaperIndex(corpus_settings.store, embedder), RetrievalSettings())
    warmed = hybrid(PaperIndex(corpus_settings.store, embedder), RetrievalSettings())
    assert isinstance(warmed.ranker, LearnedRanker)
    assert warmed.ranker.warm() == 38  # every paper of the store
    cut_off_from_the_store(warmed.index)  # so the warmed pools below are made from the warm-up's data alone
    assert_same_pools(pools(warmed, app), pools(lazy, app))


class TextBuildingRanker(LearnedRanker):
    """The reranker as it was: each paper's text data built from its record on the query path (the oracle)."""

    def _doc_texts(self, ids: Sequence[str]) -> dict[str, DocText]:
        papers = self.index.papers(ids)
        return {pid: DocText("" if p.title_derived else p.title, p.abstract) for pid, p in papers.items()}


def test_a_first_time_search_derives_no_paper_text_data(
    corpus_settings: Settings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The papers' stems, sentences and phrase forms are derived when they are indexed, not per query: in a new
    app (nothing cached, no warm-up), first-time searches tokenise and stem no paper, and their pools' features
    equal those of the text-building reranker."""
    from askpapers.vectorstore import features

    built: list[str] = []
    real = features._parts

    def counted(title: str, abstract: str) -> object:
        built.append(title)
        return real(title, abstract)

    monkeypatch.setattr(features, "_parts", counted)
    app = AskPapers(corpus_settings, warm=False)
    ranker = app.parts.retriever.ranker
    assert isinstance(ranker, LearnedRanker) and app._warmer is None
    for text in QUERIES:
        assert app.search(text)
    got = pools(app.parts.retriever, app)
    assert built == [], f"{len(built)} papers' text data built on the query path"
    assert len(ranker._docs) > 20  # (read from the BM25 index)
    oracle = hybrid(PaperIndex(corpus_settings.store, embedder), RetrievalSettings())
    oracle.ranker = TextBuildingRanker(oracle.index)
    assert_same_pools(got, pools(oracle, app))
    assert len(built) > 20  # (the oracle built them: the counter counts)


@pytest.mark.parametrize("guessed", [1, 2, store_module.GUESSED_CHUNKS])
def test_chunk_vectors_read_by_id_equal_those_read_by_metadata(
    app: AskPapers, guessed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every chunk of every paper, in order, whether a paper's chunks are all among the positions read by id or
    some are read again by paper_id (fewer positions guessed than a paper has)."""
    monkeypatch.setattr(store_module, "GUESSED_CHUNKS", guessed)
    store = app.index.store
    ids = [p.paper_id for p in app.papers()]
    res = store.chunks.get(where={"paper_id": {"$in": ids}}, include=["embeddings", "metadatas"])
    rows: dict[str, list[tuple[int, np.ndarray]]] = {}
    for e, m in zip(res["embeddings"], res["metadatas"], strict=True):
        rows.setdefault(str(m["paper_id"]), []).append((int(m["position"]), np.asarray(e, np.float32)))
    got = store.chunk_vectors([*ids, "no such paper"])
    assert set(got) == set(rows) == set(ids)
    for pid, r in rows.items():
        assert np.array_equal(got[pid], np.asarray([e for _, e in sorted(r, key=lambda x: x[0])]))
        assert len(got[pid]) == len(r)
    assert any(len(r) > 1 for r in rows.values())  # (papers with several chunks, in order)
    if guessed == 1:  # (papers with more chunks than the positions read by id: the rest read by paper_id)
        assert any(len(r) > guessed for r in rows.values())


def _jsonl(path: Path, papers: list[Paper]) -> Path:
    path.write_text("".join(json.dumps({"id": p.paper_id, "title": p.title, "abstract": p.abstract}) + "\n"
                            for p in papers))  # fmt: skip
    return path


def test_the_warm_up_follows_the_store(tmp_path: Path, embedder: Embedder) -> None:
    """Opening the store warms it in the background; adding papers builds the new revision's data again, with
    the new papers; the features stay those of the lazy path."""
    papers = parse_paths([CORPUS]).papers
    settings = make_settings(tmp_path / "store")
    ingest([_jsonl(tmp_path / "a.jsonl", papers[:20])], settings.store, progress=False, embedder=embedder)
    app = AskPapers(settings)
    ranker = app.parts.retriever.ranker
    assert isinstance(ranker, LearnedRanker) and app._warmer is not None
    app._warmer.join(60)
    assert set(ranker._docs) == {p.paper_id for p in papers[:20]}
    revision = app.index.seen_revision

    app.add_files([_jsonl(tmp_path / "b.jsonl", papers[20:])])
    assert app._warmer is not None
    app._warmer.join(60)
    assert app.index.seen_revision != revision and ranker._docs_key == app.index.seen_revision
    assert set(ranker._docs) == {p.paper_id for p in papers}  # the new papers too
    lazy = hybrid(PaperIndex(settings.store, embedder), RetrievalSettings())
    warmed = pools(app.parts.retriever, app)
    assert {pid for pool in warmed for pid in pool.ids} & {p.paper_id for p in papers[20:]}
    assert_same_pools(warmed, pools(lazy, app))


def test_a_failing_warm_up_is_not_fatal(app: AskPapers, corpus_settings: Settings, embedder: Embedder) -> None:
    """The warm-up is an optimisation: when it fails, questions (which wait for it) are answered the lazy way."""
    index = PaperIndex(corpus_settings.store, embedder)
    retriever = hybrid(index, RetrievalSettings())
    assert retriever.ranker is not None

    def broken(*_: object) -> NoReturn:
        raise StoreError("the store went away")

    index.preload = broken  # type: ignore[method-assign]
    thread = retriever.ranker.warm_in_background(wait=True)
    assert thread is not None
    thread.join(60)
    assert not retriever.ranker._docs
    assert_same_pools(pools(retriever, app), pools(app.parts.retriever, app))


def test_a_store_larger_than_the_warm_up_covers_is_not_warmed(
    corpus_settings: Settings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Up to :data:`WARM` papers, the warm-up reads the whole store and questions wait for it. Past it, it would
    cover a fraction of the store and take the cores the first questions need: none is started, and questions
    read their own papers' data (the same pools)."""
    from askpapers.rag.retrieve import rerank

    ranker = LearnedRanker(PaperIndex(corpus_settings.store, embedder))
    thread = ranker.warm_in_background(wait=True)
    assert thread is not None
    thread.join(60)
    assert ranker._warming is not None and len(ranker._docs) == 38  # 38 papers: all covered, worth waiting for
    monkeypatch.setattr(rerank, "WARM", 37)
    ranker = LearnedRanker(PaperIndex(corpus_settings.store, embedder))
    assert ranker.warm_in_background(wait=True) is None
    assert ranker._warming is None and not ranker._docs
    app = AskPapers(corpus_settings.model_copy(update={"retrieval": RetrievalSettings(k=9)}))  # (an app of its own)
    assert app.search("information bottleneck")
    assert app._warmer is None
    lazy = hybrid(PaperIndex(corpus_settings.store, embedder), RetrievalSettings())
    assert_same_pools(pools(app.parts.retriever, app), pools(lazy, app))


def test_no_warm_up_without_the_learned_ranker(corpus_settings: Settings) -> None:
    rrf_app = AskPapers(corpus_settings.model_copy(update={"retrieval": RetrievalSettings(ranker="rrf")}))
    assert rrf_app.search("information bottleneck", 3)
    assert rrf_app.parts.retriever.ranker is None and rrf_app._warmer is None
    assert AskPapers(corpus_settings, warm=False).parts is not None


def test_one_shot_commands_do_not_warm_up(
    corpus_settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`askpapers ask` and `askpapers search` answer one question and exit: a warm-up of the store would only
    compete with it (and a cold start on a large store would pay for it). The module functions warm up."""
    from askpapers.rag import api
    from askpapers.ui import cli

    started: list[bool] = []
    real = LearnedRanker.warm_in_background

    def spy(self: LearnedRanker, *, wait: bool) -> threading.Thread:
        started.append(wait)
        return real(self, wait=wait)

    settings = corpus_settings.model_copy(update={"retrieval": RetrievalSettings(k=7)})  # (an app of its own)
    monkeypatch.setattr(LearnedRanker, "warm_in_background", spy)
    monkeypatch.setattr(api, "get_settings", lambda: settings)
    assert cli.main(["ask", "Which papers use information bottleneck?", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["citations"]
    assert cli.main(["search", "information bottleneck", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"]
    assert started == []
    assert api.search("information bottleneck", settings=settings)
    assert started == [True]


def test_exit_stops_a_running_warm_up_and_waits_for_it(corpus_settings: Settings, embedder: Embedder) -> None:
    """A daemon thread still inside Chroma's native code while the interpreter shuts down crashed a one-question
    process on a 2,610-paper store (SIGSEGV after the answer was printed): at exit the warm-up is stopped, and
    the exit waits for it to end its batch."""
    from askpapers.rag.retrieve import rerank

    index = PaperIndex(corpus_settings.store, embedder)
    ranker = LearnedRanker(index)
    reading = threading.Event()
    real = index.preload

    def huge_store(most: int, stop: threading.Event | None = None) -> list[Paper]:
        reading.set()
        while stop is not None and not stop.is_set():  # (still reading a store far larger than this one)
            index.store.paper_vectors([p.paper_id for p in real(1)])
        return real(most, stop)

    index.preload = huge_store  # type: ignore[method-assign]
    thread = ranker.warm_in_background(wait=False)
    try:
        assert reading.wait(60)
        assert thread.is_alive()
        rerank._stop_warming()  # (what atexit runs)
        assert not thread.is_alive()
        assert not ranker._docs  # it stopped rather than finished
    finally:
        rerank._exiting.clear()


def test_nearest_chunks_equal_the_full_query(corpus_settings: Settings, embedder: Embedder) -> None:
    """The dense search asks Chroma for chunk ids and distances only, the texts coming from a cache: the same
    hits (paper, text, similarity, position, in order) as the query that reads documents and metadata, before and
    after a warm-up filled the cache, with and without filters."""
    from askpapers.vectorstore.records import where_clause
    from askpapers.vectorstore.types import Filters

    index = PaperIndex(corpus_settings.store, embedder)
    scopes = [None, Filters(has_code=True), Filters(year=2026), Filters(venue="NeurIPS 2019")]
    for warmed in (False, True):
        if warmed:
            assert index.preload(100) and index.caches.chunk_texts
        for text in QUERIES:
            for scope in scopes:
                for n in (1, 7, 100):
                    expected = index.store.query_chunks(index.embed(text), n, where_clause(scope))
                    assert index.nearest_chunks(text, n, scope) == expected
    assert index.nearest_chunks(QUERIES[0], 100)  # (hits to compare)
    assert not index.nearest_chunks(QUERIES[0], 5, Filters(venue="NeurIPS 2019"))


def test_snippets_from_the_warmed_sentence_stems_equal_the_computed_ones(app: AskPapers) -> None:
    """search's snippets read each sentence's stems from the reranker's per-paper data when it has them: the same
    sentence as computing them, for every bundled paper and several queries; nothing for another revision."""
    from askpapers.rag.decide import snippets
    from askpapers.vectorstore.text import content_stems

    ranker = app.parts.retriever.ranker
    assert ranker is not None
    app.search("Which papers use information bottleneck?")  # (the warm-up has run by the time it answers)
    papers = app.papers()
    assert all(ranker.sentence_stems(p.paper_id) is not None for p in papers)
    for query, phrases in [("information bottleneck", ["information bottleneck"]), ("federated learning", []),
                           ("rate gap of WaterSIC", ["WaterSIC"]), ("mutual information estimators", [])]:  # fmt: skip
        terms = content_stems(query)
        for p in papers:
            given = snippets.best_snippet(p, terms, phrases, "", ranker.sentence_stems(p.paper_id))
            assert given == snippets.best_snippet(p, terms, phrases, ""), p.paper_id
    key, ranker._docs_key = ranker._docs_key, "another revision"
    try:
        assert ranker.sentence_stems(papers[0].paper_id) is None
    finally:
        ranker._docs_key = key


@PROPERTY
@given(title=TEXT, abstract=TEXT, absent=st.sampled_from(["graph", "neural", "zzz", "a", "1", "networks"]))
def test_a_stem_is_found_where_the_sets_hold_it(title: str, abstract: str, absent: str) -> None:
    """Decoding builds no set of a paper's words: the text features search the blank-joined stems, a sentence
    (or the title) at a time. Each search answers as the sets do, anywhere and in each segment."""
    for dt in (DocText(title, abstract), DocText.decode(encode(title, abstract), abstract)):
        assert len(dt.segments) == len(dt.sent_stems)
        words = set(dt.all_stems) | {absent}
        for w in words:
            assert dt.find(f" {w} ") == (w in dt.all_stems), w
            for segment, sentence in zip(dt.segments, dt.sent_stems, strict=True):
                assert dt.find(f" {w} ", segment) == (w in sentence), (w, segment)
            if dt.title_segment is not None:
                assert dt.find(f" {w} ", dt.title_segment) == (w in dt.title_stems), w


def reference_text_features(query: str, phrases: Sequence[str], idf: dict[str, float], title: str,
                            abstract: str) -> list[float]:  # fmt: skip
    """The first 7 text features as first written, over the reference's sets of stems (the oracle)."""
    from askpapers.rag.retrieve.rank_features import QueryText

    qt, ref = QueryText(query, phrases, idf), reference_doc(title, abstract)
    want, n = qt.want, max(len(qt.want), 1)
    all_stems, title_stems = ref["all_stems"], ref["title_stems"]
    sent_stems = ref["sent_stems"]
    assert isinstance(all_stems, frozenset) and isinstance(title_stems, frozenset) and isinstance(sent_stems, list)
    got = want & all_stems
    best, best_idf = 0, 0.0
    for s in sent_stems:
        if hit := got & s:
            best, best_idf = max(best, len(hit)), max(best_idf, sum(qt.idf.get(t, 0.0) for t in hit))
    cov_idf = sum(qt.idf.get(t, 0.0) for t in got)
    return [best / n, best_idf / qt.idf_sum, len(got) / n, cov_idf / qt.idf_sum, len(want & title_stems) / n]


@PROPERTY
@given(title=TEXT, abstract=TEXT, query=TEXT)
def test_text_features_equal_the_set_construction(title: str, abstract: str, query: str) -> None:
    from askpapers.rag.retrieve.rank_features import QueryText, text_features

    idf = {w: 1.0 + len(w) / 3 for w in word_tokens(query)}
    expected = reference_text_features(query, (), idf, title, abstract)
    for dt in (DocText(title, abstract), DocText.decode(encode(title, abstract), abstract)):
        got = text_features(QueryText(query, (), idf), dt)
        assert got[:4] + got[6:7] == pytest.approx(expected, abs=1e-12)
