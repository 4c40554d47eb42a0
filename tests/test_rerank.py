"""The learned reranker: its features, the shipped model, and search with and without it."""

from __future__ import annotations

import numpy as np
import pytest

from askpapers.rag.api import AskPapers
from askpapers.rag.retrieve.forest import Forest
from askpapers.rag.retrieve.rank_features import FEATURES, N_TEXT, QueryText, text_features
from askpapers.rag.retrieve.rerank import LearnedRanker, model_path
from askpapers.rag.retrieve.retrieval import Query, hybrid
from askpapers.rag.settings import RetrievalSettings, Settings
from askpapers.vectorstore.features import DocText

TEXT = FEATURES[FEATURES.index("cov_best_sent") : FEATURES.index("cov_best_sent") + N_TEXT]


def _text(query: str, title: str, abstract: str, phrases: tuple[str, ...] = ()) -> dict[str, float]:
    idf = {"bottleneck": 3.0, "information": 1.0, "graph": 1.0}
    return dict(zip(TEXT, text_features(QueryText(query, phrases, idf), DocText(title, abstract)), strict=True))


def test_text_features_on_hand_made_pairs() -> None:
    abstract = "We compress graph features. The information bottleneck (IB) keeps what predicts labels."
    got = _text("information bottleneck graph", "", abstract, ("information bottleneck",))
    assert got["cov_doc"] == 1.0  # all three query words are in the text
    assert got["cov_best_sent"] == pytest.approx(2 / 3)  # but no single sentence holds all three
    assert got["cov_best_sent_idf"] == pytest.approx(4 / 5)  # the best sentence holds the rarer words
    assert got["bigram_hit"] == pytest.approx(1 / 2)  # "information bottleneck" is stated, "bottleneck graph" is not
    assert got["topic_phrase_hit"] == 1.0 and got["topic_phrase_in_title"] == 0.0 and got["title_cov"] == 0.0
    assert _text("IB for graphs", "", abstract)["acro_longform_hit"] == 1.0  # the abstract defines the acronym
    assert _text("IB for graphs", "", abstract)["q_acronym_in_doc"] == 1.0  # and uses it
    assert _text("Ib for graphs", "", abstract)["q_acronym_in_doc"] == 0.0  # one capital: a word, not an acronym
    titled = _text("information bottleneck", "Graph Information Bottleneck", "Nothing about it here.")
    assert titled["title_cov"] == 1.0 and titled["title_bigram_hit"] == 1.0 and titled["cov_doc"] == 1.0
    none = _text("protein folding", "", abstract)
    assert none["cov_doc"] == 0.0 and none["bigram_hit"] == 0.0 and none["acro_longform_hit"] == 0.0


def test_the_shipped_model_reads_these_features() -> None:
    import lightgbm as lgb

    assert model_path().is_file()
    booster = lgb.Booster(model_file=str(model_path()))
    assert booster.feature_name() == FEATURES
    assert booster.num_trees() > 0


def test_the_numpy_forest_scores_as_lightgbm(app: AskPapers) -> None:
    """The query path evaluates the model with numpy (no LightGBM import): the same scores, on a real pool and on
    random rows spread over and beyond each feature's range (thresholds, ties, extremes, NaN)."""
    import lightgbm as lgb

    booster = lgb.Booster(model_file=str(model_path()))
    forest = Forest.load(model_path())
    query = app.search_query("Which papers use information bottleneck?")
    results, fused = app.parts.retriever.fuse(query)
    pool = app.parts.retriever.pool(query, None, results, fused).features
    rng = np.random.default_rng(0)
    lo, hi = pool.min(axis=0) - 1, pool.max(axis=0) + 1
    noise = (lo + (hi - lo) * rng.random((500, len(FEATURES)))).astype(np.float32)
    noise[::7, 3] = np.nan
    for x in (pool, noise, np.zeros((3, len(FEATURES)), np.float32)):
        assert np.allclose(forest.predict(x), booster.predict(np.nan_to_num(x, nan=0.0)), atol=1e-9)
    assert not np.allclose(forest.predict(pool), forest.predict(pool)[0])  # the scores tell papers apart


def level_by_level(forest: Forest, x: np.ndarray) -> np.ndarray:
    """The forest evaluated as first written: every (row, tree) walk stepped together to the deepest tree's depth
    (the oracle)."""
    x = np.nan_to_num(np.asarray(x, dtype=np.float64), nan=0.0)
    rows, trees = np.arange(len(x))[:, None], np.arange(len(forest.start))[None, :]
    node = np.tile(forest.start, (len(x), 1))
    for _ in range(forest.depth):
        inner = node >= 0
        at = np.where(inner, node, 0)
        go_left = x[rows, forest.split[trees, at]] <= forest.threshold[trees, at]
        node = np.where(inner, np.where(go_left, forest.left[trees, at], forest.right[trees, at]), node)
    out: np.ndarray = forest.leaves[trees, ~node].sum(axis=1)
    return out


def test_the_numpy_forest_scores_both_shipped_models_as_lightgbm() -> None:
    """Each (row, tree) walk stops at its leaf while deeper trees go on: both shipped models (the reranker's
    shallow trees and the membership model's deeper ones) give LightGBM's raw scores on rows just either side of
    every threshold, and the level-by-level walk's scores bit for bit on those, on rows at the thresholds, on one
    row and on none."""
    import lightgbm as lgb

    from askpapers.rag.decide import membership

    for path in (model_path(), membership.model_path()):
        booster, forest = lgb.Booster(model_file=str(path)), Forest.load(path)
        n = booster.num_feature()
        thresholds = np.unique(forest.threshold)
        rng = np.random.default_rng(1)
        near = rng.choice(np.concatenate([thresholds + 1e-9, thresholds - 1e-9, [1e9, -1e9]]), size=(700, n))
        near[::11, 0] = np.nan
        expected = booster.predict(np.nan_to_num(near, nan=0.0), raw_score=True)
        assert np.allclose(forest.predict(near), expected, rtol=0, atol=1e-9), path.name
        at = rng.choice(thresholds, size=(300, n))
        for x in (near, at, near[:1], np.zeros((0, n))):
            assert forest.predict(x).shape == (len(x),)
            assert np.array_equal(forest.predict(x), level_by_level(forest, x)), path.name


def test_search_and_extractive_answers_never_import_lightgbm_or_langchain(corpus_settings: Settings) -> None:
    """Start-up cost: LightGBM pulls in scikit-learn, and LangChain takes about a second; neither is needed
    without a model."""
    import subprocess
    import sys

    code = (
        "import sys; from askpapers.rag.api import AskPapers; from askpapers.rag.settings import Settings; from "
        "askpapers.vectorstore.config import "
        f"StoreSettings; a = AskPapers(Settings(store=StoreSettings(data_dir={str(corpus_settings.store.data_dir)!r}, "
        f"collection={corpus_settings.store.collection!r}))); assert a.search('information bottleneck', 3); "
        "assert a.ask('Which papers use information bottleneck?', mode='extractive').citations; "
        "assert a.ask('What rate gap does WaterSIC reach?', mode='extractive').citations; "
        "print('lightgbm' in sys.modules, 'sklearn' in sys.modules, 'langchain_core' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "False", "False"]


def test_the_pool_and_its_features(app: AskPapers) -> None:
    retriever = app.parts.retriever
    assert retriever.ranker is not None, "the learned ranker is the default"
    query = app.search_query("Which papers use information bottleneck?")
    results, fused = retriever.fuse(query)
    pool = retriever.pool(query, None, results, fused)
    assert pool.features.shape == (len(pool.ids), len(FEATURES))
    assert np.isfinite(pool.features).all()
    assert len(set(pool.ids)) == len(pool.ids) and set(pool.ids) <= {c.paper_id for c in fused} | set(pool.ids)
    col = {name: pool.features[:, i] for i, name in enumerate(FEATURES)}
    assert (col["topic_phrase_hit"] == 1).sum() >= 5  # the bundled papers that state the topic
    # a paper stating the phrase has BM25 over its abstract; the pool's own rank feature is its position
    stating = col["topic_phrase_hit"] == 1
    assert (col["bm25_abs"][stating] > 0).all()
    assert np.allclose(np.exp(col["log_pool_rank"]), np.arange(1, len(pool.ids) + 1))


def test_learned_and_rrf_rank_the_same_candidates(app: AskPapers, corpus_settings: Settings) -> None:
    query = Query("graph contrastive learning for recommendation")
    learned = app.parts.retriever.retrieve(query)
    plain = hybrid(app.index, RetrievalSettings(ranker="rrf"))
    assert plain.ranker is None
    fused = plain.retrieve(query)
    assert {c.paper_id for c in learned} >= {c.paper_id for c in fused}
    _, expected = plain.fuse(query)
    assert [c.paper_id for c in fused] == [c.paper_id for c in expected], "rrf is the fused order, unchanged"
    # the model's scores order the pool
    scores = [c.score for c in learned[: len(learned)]]
    head = scores[: min(len(scores), 100)]
    assert head == sorted(head, reverse=True)


def test_a_paper_stating_the_query_in_its_title_ranks_first(app: AskPapers) -> None:
    hits = app.search("Graph Contrastive Information Bottleneck", 5)
    assert "Graph Contrastive Information Bottleneck" in hits[0].title


def test_ranker_setting(corpus_settings: Settings) -> None:
    assert Settings(store=corpus_settings.store).retrieval.ranker == "learned"
    rrf_app = AskPapers(Settings(store=corpus_settings.store, retrieval=RetrievalSettings(ranker="rrf")))
    assert rrf_app.parts.retriever.ranker is None
    assert rrf_app.search("information bottleneck", 3)
    with pytest.raises(ValueError):
        RetrievalSettings(ranker="bm25")  # type: ignore[arg-type]


def test_field_scores_separate_title_and_abstract(app: AskPapers) -> None:
    hits = app.search("Graph Contrastive Information Bottleneck", 3)
    ids = [h.paper_id for h in hits]
    scores = app.index.field_scores("contrastive bottleneck", ids)
    top = scores[ids[0]]
    assert top[0] > 0 and top[2] > 0  # stated in the abstract
    # a derived title is not indexed (it is made of the abstract's words): only a real title scores
    assert (top[1] > 0) == (not app.index.papers(ids[:1])[ids[0]].title_derived)
    assert app.index.field_scores("zzzqqq", ids) == {}


def test_ranker_caches_follow_the_store(app: AskPapers) -> None:
    ranker = app.parts.retriever.ranker
    assert isinstance(ranker, LearnedRanker)
    app.search("information bottleneck", 3)
    assert ranker._docs and ranker._docs_key == app.index.seen_revision
