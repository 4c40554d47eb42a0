"""One contract for both implementations of :class:`rag.retrieve.index.Index`: the Chroma-backed
:class:`~rag.retrieve.chroma_index.PaperIndex` and the in-memory :class:`~rag.retrieve.memory_index.MemoryIndex`, on the
same small corpus (the memory index is given the records the store holds). Reads, vector search, BM25 search, filters,
lexical statistics, unknown ids and an empty store; then the two side by side, score for score."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from askpapers.rag.retrieve.chroma_index import PaperIndex
from askpapers.rag.retrieve.index import Index
from askpapers.rag.retrieve.memory_index import MemoryIndex
from askpapers.vectorstore.types import Filters
from tests.conftest import make_settings

GITHUB = "https://github.com/example/code"
ROWS: list[dict[str, Any]] = [
    {"id": "gnn", "title": "Graph neural networks for molecules", "venue": "ICML 2024", "year": 2024, "url": GITHUB,
     "abstract": "Graph neural networks pass messages between atoms to predict molecular properties. Message passing "
                 "on molecular graphs is accurate and cheap."},
    {"id": "gnn2", "title": "Scalable graph learning", "venue": "NeurIPS 2023", "year": 2023,
     "abstract": "We train graph neural networks on large citation graphs by sampling neighbourhoods."},
    {"id": "diff", "title": "Diffusion models for images", "venue": "ICML 2024", "year": 2024, "url": GITHUB,
     "abstract": "Diffusion models generate images by reversing a noising process. Diffusion sampling is slow, so "
                 "we distil the sampler into one step."},
    {"id": "rl", "title": "Offline reinforcement learning", "venue": "ICLR 2024", "year": 2024,
     "abstract": "Reinforcement learning from logged data without interaction: we regularise the policy towards the "
                 "data and learn safely."},
    {"id": "bandit", "title": "Contextual bandits with delays", "venue": "NeurIPS 2023", "year": 2023,
     "abstract": "Contextual bandits choose actions from side information; rewards arrive late and the regret "
                 "bounds still hold."},
    {"id": "fed", "title": "Federated learning under drift", "venue": "ICML 2024", "year": 2024,
     "abstract": "Clients train a shared model with federated learning, and a drift correction keeps the shared "
                 "model accurate on every client."},
    {"id": "speech",  # no title: a derived one, which the lexical index leaves out
     "abstract": "Speech recognition improves with self-training on unlabelled audio recordings of meetings."},
]  # fmt: skip
IDS = [r["id"] for r in ROWS]


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> PaperIndex:
    from askpapers.vectorstore.pipeline import ingest

    root = tmp_path_factory.mktemp("contract")
    (root / "papers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    settings = make_settings(root / "store")
    assert ingest([root / "papers.jsonl"], settings.store, progress=False, embedder=embedder).added == len(ROWS)
    return PaperIndex(settings.store, embedder)


@pytest.fixture(scope="module")
def memory(chroma: PaperIndex, embedder: Any) -> MemoryIndex:
    return MemoryIndex(chroma.all_papers(), embedder)  # the records the store holds, derived title included


@pytest.fixture(params=["chroma", "memory"])
def index(request: pytest.FixtureRequest) -> Iterator[Index]:
    yield request.getfixturevalue(request.param)


@pytest.fixture(params=["chroma", "memory"])
def empty(request: pytest.FixtureRequest, tmp_path: Path, embedder: Any) -> Index:
    if request.param == "memory":
        return MemoryIndex([], embedder)
    return PaperIndex(make_settings(tmp_path / "store").store, embedder)


# -- reads ------------------------------------------------------------------------------------------------------------
def test_reads(index: Index) -> None:
    assert index.count() == index.size() == len(ROWS)
    got = index.papers(["diff", "gnn"])
    assert list(got) == ["diff", "gnn"]  # in the order asked
    assert got["gnn"].title == "Graph neural networks for molecules" and got["gnn"].venue == "ICML 2024"
    assert got["gnn"].year == 2024 and got["gnn"].has_code and not got["gnn"].title_derived
    speech = index.papers(["speech"])["speech"]
    assert speech.title_derived and speech.title  # a title was derived for the paper that had none
    every = index.all_papers()
    assert sorted(p.paper_id for p in every) == sorted(IDS)
    assert [p.title.lower() for p in every] == sorted(p.title.lower() for p in every)
    assert len(index.all_papers(2)) == 2
    texts = index.doc_texts(["rl", "gnn"])
    assert set(texts) == {"rl", "gnn"}
    assert "reinforc" in texts["rl"].all_stems and "molecul" in texts["gnn"].all_stems
    assert {p.paper_id for p in index.preload(3)} <= set(IDS) and len(index.preload(3)) == 3


def test_unknown_ids_are_left_out(index: Index) -> None:
    assert index.papers(["nope", "gnn", ""]).keys() == {"gnn"}
    assert index.papers([]) == {}
    assert index.vectors(["nope"]) == {} and index.chunk_vectors(["nope"]) == {}
    assert index.doc_texts(["nope"]) == {}
    assert index.field_scores("graph", ["nope"]) == {}
    assert index.best_chunks_within("graph neural networks", ["nope"]) == {}
    assert index.best_chunks_within("graph neural networks", []) == {}


# -- vector search ----------------------------------------------------------------------------------------------------
def test_vector_search_ranks_the_closest_paper_first(index: Index) -> None:
    hits = index.nearest_chunks("predicting properties of molecules with message passing", 5)
    assert hits[0].paper_id == "gnn"
    sims = [h.similarity for h in hits]
    assert sims == sorted(sims, reverse=True) and -1.0 <= sims[-1] <= sims[0] <= 1.0
    assert hits[0].text and hits[0].text in index.papers(["gnn"])["gnn"].abstract
    best = index.best_chunks("image generation by denoising", 10)
    assert max(best.values(), key=lambda h: h.similarity).paper_id == "diff"
    assert len(best) == len({h.paper_id for h in index.nearest_chunks("image generation by denoising", 10)})
    within = index.best_chunks_within("image generation by denoising", ["rl", "bandit", "nope"])
    assert set(within) == {"rl", "bandit"}
    vector = index.embed("regret of bandit algorithms with delayed rewards")
    assert index.nearest_paper_ids(vector, 3)[0] == "bandit"


def test_vectors(index: Index) -> None:
    vecs = index.vectors(["gnn", "rl"])
    assert set(vecs) == {"gnn", "rl"}
    assert abs(float(np.linalg.norm(vecs["gnn"])) - 1.0) < 1e-4  # the normalised mean of the chunks
    chunks = index.chunk_vectors(["gnn"])["gnn"]
    assert chunks.ndim == 2 and chunks.shape[1] == vecs["gnn"].shape[0] == index.embedder.dim
    mean = chunks.mean(axis=0)
    assert np.allclose(mean / np.linalg.norm(mean), vecs["gnn"], atol=1e-4)


# -- lexical search ---------------------------------------------------------------------------------------------------
def test_bm25_ranks_by_the_words(index: Index) -> None:
    found = index.lexical_search("diffusion sampling", 10)
    assert found[0][0] == "diff" and {pid for pid, _ in found} == {"diff", "gnn2"}  # ("sampling" neighbourhoods)
    scores = [s for _, s in found]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    assert index.lexical_search("the of and", 10) == []  # stop-words only
    assert len(index.lexical_search("graph learning", 1)) == 1


def test_phrases_facets_and_all_words(index: Index) -> None:
    assert {p for p, _ in index.phrase_search(["graph neural networks"], 10)} == {"gnn", "gnn2"}
    assert {p for p, _ in index.phrase_search(["neural graph networks"], 10)} == set()  # (words in another order)
    assert {p for p, _ in index.phrase_search(["contextual bandit", "federated learning"], 10)} == {"bandit", "fed"}
    facets = [["graph neural networks"], ["molecules", "molecular"]]
    assert [p for p, _ in index.facet_search(facets, 10)] == ["gnn"]
    assert {p for p, _ in index.all_words_search(["learning data"], 10)} == {"rl"}
    assert {p for p, _ in index.all_words_search(["learning model"], 10)} == {"fed"}


def test_unranked_ids_are_every_paper_the_searches_find(index: Index) -> None:
    """The sets the matcher pools candidates from: every paper, with no score and no cut."""
    assert index.phrase_ids(["graph neural networks"]) == {"gnn", "gnn2"}
    assert index.phrase_ids(["contextual bandit", "federated learning"]) == {"bandit", "fed"}
    assert index.phrase_ids(["neural graph networks"]) == set() and index.phrase_ids([]) == set()
    assert index.all_words_ids(["learning data"]) == {"rl"} and index.all_words_ids(["learning model"]) == {"fed"}
    assert index.phrase_ids(["graph neural networks"], Filters(year=2023)) == {"gnn2"}
    assert index.phrase_ids(["graph neural networks"], Filters(venue="ICLR 2024")) == set()
    for words in ("learning", "graph", "diffusion sampling"):
        ranked = {p for p, _ in index.all_words_search([words], 1000)}
        assert index.all_words_ids([words]) == ranked and len(ranked) >= 1


def test_surface_ids_find_the_words_as_written(index: Index) -> None:
    """The words as written, not their stems: "learn" is in one abstract ("learn safely"), while its stem is in
    four ("learning"); a phrase's slots are consecutive, each slot any of its words; without ``in_a_row``, each
    slot's word anywhere. A derived title is not searched."""
    assert index.surface_ids([[["learn"]]]) == {"rl"}
    assert len(index.phrase_ids(["learn"])) >= 3  # (stems: learning, learn)
    assert index.surface_ids([[["graph"], ["neural"], ["network", "networks"]]]) == {"gnn", "gnn2"}
    assert index.surface_ids([[["graph"], ["neural"], ["network"]]]) == set()  # (only "networks" is written)
    assert index.surface_ids([[["neural"], ["graph"], ["networks"]]]) == set()  # (another order)
    assert index.surface_ids([[["contextual"], ["bandits"]], [["federated"], ["learning"]]]) == {"bandit", "fed"}
    assert index.surface_ids([[["graph"], ["molecules", "molecular"]]], in_a_row=False) == {"gnn"}
    assert index.surface_ids([[["graph"], ["molecules"]]]) == set()
    assert index.surface_ids([[["speech"], ["recognition"]]]) == {"speech"}  # (its abstract)
    assert index.surface_ids([]) == set() and index.surface_ids([[[]]]) == set()


def test_field_scores(index: Index) -> None:
    scores = index.field_scores("diffusion images", ["diff", "gnn", "rl"])
    assert set(scores) == {"diff"}  # a paper holding none of the words is left out
    both, title, abstract = scores["diff"]
    assert both > 0 and title > 0 and abstract > 0
    only_title = index.field_scores("molecules", ["gnn"])["gnn"]  # "molecules" is in the title alone
    assert only_title[1] > 0 and only_title[2] == 0


def test_filters(index: Index) -> None:
    icml = Filters(venue="ICML 2024")
    assert {p for p, _ in index.lexical_search("graph diffusion federated", 10, icml)} == {"gnn", "diff", "fed"}
    assert {p for p, _ in index.lexical_search("graph", 10, Filters(year=2023))} == {"gnn2"}
    assert {p for p, _ in index.lexical_search("graph diffusion", 10, Filters(has_code=True))} == {"gnn", "diff"}
    near = index.nearest_chunks("graph neural networks", 20, Filters(year=2023))
    assert near and {h.paper_id for h in near} <= {"gnn2", "bandit"}
    assert set(index.best_chunks("graph", 20, Filters(has_code=True))) <= {"gnn", "diff"}
    assert set(index.nearest_paper_ids(index.embed("graph"), 20, icml)) <= {"gnn", "diff", "fed"}
    assert index.phrase_search(["graph neural networks"], 10, Filters(venue="ICLR 2024")) == []


# -- lexical statistics -----------------------------------------------------------------------------------------------
def test_lexical_statistics(index: Index) -> None:
    assert index.word_df(["graph", "graphs", "learning", "speech", "never", "diffusion"]) == {
        "graph": 2, "graphs": 2, "learning": 3, "speech": 1, "diffusion": 1
    }  # fmt: skip
    assert index.word_df([]) == {}
    assert sorted(index.words_with_stems(["graph"])) == [("graph", 2), ("graphs", 2)]
    vocab = dict(index.vocabulary(min_df=3))
    assert vocab == {w: n for w, n in index.vocabulary() if n >= 3} and vocab["learning"] == 3
    assert index.phrase_count("graph neural networks") == 2
    assert index.phrase_count("Graph Neural Network") == 2  # stemmed, any case
    assert index.phrase_count("neural graph") == 0 and index.phrase_count("") == 0
    assert index.facet_count([["graph neural networks"], ["molecules"]]) == 1
    assert index.facet_count([["graph neural networks"], [""]]) == 0
    assert index.venues() == ["ICLR 2024", "ICML 2024", "NeurIPS 2023"]
    assert index.years() == [2024, 2023]


def test_listing_and_hash_sample(index: Index) -> None:
    """The Papers tab's sort keys of every paper (a derived title as shown), and the map's sample: the papers
    whose id hashes lowest, the same whatever order they came in, nested as ``n`` grows."""
    from askpapers.vectorstore.lexical import rowid_of

    listed = {r.paper_id: r for r in index.listing()}
    assert sorted(listed) == sorted(IDS)
    assert listed["gnn"] == ("gnn", "Graph neural networks for molecules", "ICML 2024", 2024)
    assert listed["speech"].title == index.papers(["speech"])["speech"].title != ""
    assert listed["speech"].year is None and listed["speech"].venue == ""
    by_hash = sorted(IDS, key=rowid_of)
    assert index.sample_ids(3) == by_hash[:3]
    assert index.sample_ids(100) == by_hash and index.sample_ids(0) == []
    assert set(index.sample_ids(2)) < set(index.sample_ids(5))


def test_a_derived_title_is_not_indexed(index: Index) -> None:
    title = index.papers(["speech"])["speech"].title
    words = [w for w in title.lower().split() if w.isalpha() and w not in index.papers(["speech"])["speech"].abstract]
    assert not words or not index.word_df(words)  # (a derived title is made of the abstract's words)
    assert index.field_scores("speech", ["speech"])["speech"][1] == 0  # no title to score


# -- empty ------------------------------------------------------------------------------------------------------------
def test_an_empty_index(empty: Index) -> None:
    with empty.pinned():
        assert empty.count() == 0 and empty.size() == 0
        assert empty.papers(["gnn"]) == {} and empty.all_papers() == [] and empty.doc_texts(["gnn"]) == {}
        assert empty.nearest_chunks("graph", 5) == [] and empty.best_chunks("graph", 5) == {}
        assert empty.nearest_paper_ids(empty.embed("graph"), 5) == []
        assert empty.best_chunks_within("graph", ["gnn"]) == {} and empty.vectors(["gnn"]) == {}
        assert empty.lexical_search("graph", 5) == [] and empty.phrase_search(["graph"], 5) == []
        assert empty.facet_search([["graph"]], 5) == [] and empty.all_words_search(["graph"], 5) == []
        assert empty.field_scores("graph", ["gnn"]) == {}
        assert empty.word_df(["graph"]) == {} and empty.vocabulary() == [] and empty.words_with_stems(["graph"]) == []
        assert empty.phrase_count("graph") == 0 and empty.facet_count([["graph"]]) == 0 and empty.venues() == []
        assert empty.years() == [] and empty.listing() == [] and empty.sample_ids(5) == []


# -- the two side by side ---------------------------------------------------------------------------------------------
def test_both_give_the_same_scores(chroma: PaperIndex, memory: MemoryIndex) -> None:
    """FTS5's bm25 and the in-memory one agree score for score, and the vectors are the store's."""
    for query in ["graph neural networks", "diffusion sampling images", "learning model data", "bandits regret"]:
        a, b = chroma.lexical_search(query, 10), memory.lexical_search(query, 10)
        assert [p for p, _ in a] == [p for p, _ in b], query
        assert np.allclose([s for _, s in a], [s for _, s in b], rtol=1e-6), query
        fa, fb = chroma.field_scores(query, IDS), memory.field_scores(query, IDS)
        assert fa.keys() == fb.keys() and all(np.allclose(fa[p], fb[p], rtol=1e-6) for p in fa), query
    phrases = ["graph neural networks", "federated learning"]
    assert np.allclose(
        [s for _, s in chroma.phrase_search(phrases, 10)], [s for _, s in memory.phrase_search(phrases, 10)]
    )
    assert dict(chroma.vocabulary()) == dict(memory.vocabulary())
    for pid, vec in chroma.vectors(IDS).items():
        assert np.allclose(vec, memory.vectors([pid])[pid], atol=1e-5), pid
    near_a = chroma.nearest_chunks("reinforcement learning from logged data", 5)
    near_b = memory.nearest_chunks("reinforcement learning from logged data", 5)
    assert [(h.paper_id, h.position) for h in near_a] == [(h.paper_id, h.position) for h in near_b]
    assert np.allclose([h.similarity for h in near_a], [h.similarity for h in near_b], atol=1e-4)


def test_the_memory_index_changes_revision_when_papers_are_added(memory: MemoryIndex, embedder: Any) -> None:
    other = MemoryIndex(memory.all_papers(), embedder)
    before = other.revision
    gnn = other.papers(["gnn"])["gnn"]
    from dataclasses import replace

    other.add([replace(gnn, paper_id="gnn3", title="Graph transformers")])
    assert other.revision != before and other.count() == len(ROWS) + 1
    assert other.word_df(["graph"]) == {"graph": 3}
    assert "gnn3" in other.vectors(["gnn3"])


def test_a_facade_over_a_given_index(memory: MemoryIndex, tmp_path: Path) -> None:
    """The facade answers from the index it is given, and refuses what only a store can do."""
    from askpapers.rag.api import AskPapers
    from askpapers.vectorstore.errors import StoreError

    app = AskPapers(make_settings(tmp_path / "store"), warm=False, index=memory)
    assert app.index is memory
    hits = app.search("diffusion sampling", 3)
    assert hits[0].paper_id == "diff" and hits[0].snippet in memory.papers(["diff"])["diff"].abstract
    assert app.ask("Which papers use contextual bandits?", mode="extractive").paper_ids == ["bandit"]
    with pytest.raises(StoreError):
        app.add_files([tmp_path / "more.jsonl"])
    with pytest.raises(StoreError):
        app.store_index  # noqa: B018
    assert not (tmp_path / "store").exists()  # no store was made
