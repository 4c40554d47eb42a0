"""The corpus map's parts: c-TF-IDF topic names, the neighbourhood-keeping projection and its cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from askpapers.rag.report.topic_map import (
    TSNE_MIN,
    ProjectionCache,
    build_map,
    generic_terms,
    pca,
    project,
    terms,
    topic_names,
)
from askpapers.vectorstore.key_phrases import FUNCTION_WORDS
from askpapers.vectorstore.types import Paper

# Five topics. Every abstract also says "zorblax" (a made-up word no list can hold: it is generic only because
# every abstract uses it), common paper words, and a code link.
TOPICS = {
    "protein": "We fold protein structures and predict protein binding with amino acid sequence embeddings.",
    "galaxy": "We survey galaxy clusters and measure galaxy redshift with telescope spectra of dark matter halos.",
    "auction": "We design auction mechanisms where bidders report values and auction revenue meets truthful bidding.",
    "glacier": "We track glacier retreat from satellite imagery and model glacier melt under warming climate.",
    "violin": "We record violin tone and relate violin varnish to the resonance of spruce wood plates.",
}
COMMON = "Zorblax results show that our novel zorblax method improves performance. Code: https://github.com/x/y_z."


def corpus(per_topic: int = 6) -> tuple[list[Paper], np.ndarray]:
    papers, labels = [], []
    for j, (topic, text) in enumerate(TOPICS.items()):
        for i in range(per_topic):
            papers.append(Paper(f"{topic}-{i}", f"Paper {i} on {topic}", f"{text} Variant {i}. {COMMON}"))
            labels.append(j)
    return papers, np.array(labels)


def test_topic_names_are_distinctive_terms_without_generic_words_urls_or_numbers() -> None:
    papers, labels = corpus()
    names = topic_names(papers, labels)
    assert sorted(names) == list(range(len(TOPICS)))
    for j, topic in enumerate(TOPICS):
        name = names[j]
        assert topic in name, name  # the term that sets the cluster apart from the rest
        assert not name[0].isdigit() and ":" not in name, name  # no "2: …" prefix
        words = set(name.replace("·", " ").split())
        assert not words & {"zorblax", "https", "github", "com", "results", "novel", "method", "code"}, name
    assert len(set(names.values())) == len(TOPICS)


def test_generic_words_come_from_document_frequency_not_a_list() -> None:
    papers, _ = corpus()
    docs = [terms(p.abstract) for p in papers]
    generic = generic_terms(docs)
    assert "zorblax" in generic and "results" in generic  # in every abstract
    assert "protein" not in generic and "galaxy" not in generic  # in a fifth of them
    # links and code are not words at all
    assert not {t for d in docs for t in d} & {"https", "github", "com"}


def test_two_word_names_and_no_repeated_word() -> None:
    papers, labels = corpus()
    for name in topic_names(papers, labels).values():
        parts = [w for t in name.split(" · ") for w in t.split()]
        assert len(parts) == len(set(parts)), name


def clustered(k: int = 12, per: int = 20, dim: int = 48, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``k`` groups of unit vectors around random directions (as embeddings of ``k`` unrelated topics): apart in
    48 dimensions (each point's nearest neighbour is of its group), mixed in any two."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, dim))
    x = np.repeat(centres, per, axis=0) + 0.8 * rng.normal(size=(k * per, dim))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), np.repeat(np.arange(k), per)


def neighbour_agreement(xy: np.ndarray, labels: np.ndarray) -> float:
    """The share of points whose nearest point on the map is of their own group."""
    d = ((xy[:, None, :] - xy[None, :, :]) ** 2).sum(axis=2)
    np.fill_diagonal(d, np.inf)
    return float((labels[d.argmin(axis=1)] == labels).mean())


def test_the_projection_keeps_neighbourhoods_where_pca_mixes_them() -> None:
    x, labels = clustered()
    assert neighbour_agreement(pca(x), labels) < 0.8  # twelve topics do not fit in two principal components
    assert neighbour_agreement(project(x), labels) > 0.95


def test_a_few_papers_are_projected_by_pca() -> None:
    x, _ = clustered(k=2, per=(TSNE_MIN - 1) // 2)
    assert len(x) < TSNE_MIN
    assert np.allclose(project(x), pca(x))


def test_the_projection_is_fitted_once_per_revision(tmp_path: Path) -> None:
    x, _ = clustered(k=3, per=8)
    ids = [f"p{i}" for i in range(len(x))]
    cache = ProjectionCache(tmp_path / "map.npz")
    first = cache.projection("rev-1", ids, x)
    assert (tmp_path / "map.npz").exists()
    # the same revision and papers: the stored fit comes back, whatever vectors are passed (no new fit)
    noise = np.random.default_rng(5).normal(size=x.shape).astype(np.float32)
    assert np.array_equal(ProjectionCache(tmp_path / "map.npz").projection("rev-1", ids, noise), first)
    # a new revision (or other papers) is fitted anew
    assert not np.array_equal(cache.projection("rev-2", ids, noise), first)
    assert not np.array_equal(cache.projection("rev-2", ids[::-1], x[::-1]), cache.load(cache.key("rev-2", ids), 24))


def test_an_unwritable_cache_only_loses_the_cache(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    x, _ = clustered(k=3, per=8)
    xy = ProjectionCache(blocked / "map.npz").projection("rev", [str(i) for i in range(len(x))], x)
    assert xy.shape == (len(x), 2)


def test_build_map_names_every_point() -> None:
    papers, _ = corpus(per_topic=8)
    x, _ = clustered(k=5, per=8)
    points = build_map(papers, x)
    assert [p.paper_id for p in points] == [p.paper_id for p in papers]
    assert all(p.topic and ":" not in p.topic for p in points)


# --- issue 26: names are two or three content words, never a verb, a modifier or a function word -----------------

# Each topic's abstracts also say a verb of its own twice ("Glaciers calve ... they calve again"): distinctive of the
# topic, and no name of it. (The c-TF-IDF of single words named these "glaciers calve · satellite imagery".)
VERBS = {"misfold", "coalesce", "overbid", "calve", "resonate"}
WITH_VERBS = {
    "protein": "Protein chains misfold under thermal stress, and they misfold again in crowded cells. We predict "
    "protein binding from amino acid sequences of each protein.",
    "galaxy": "Galaxy clusters coalesce slowly, and they coalesce again after collisions. We measure galaxy "
    "redshift with telescope spectra of each galaxy.",
    "auction": "Bidders overbid in ascending auctions, and they overbid again when values are private. We design "
    "auction mechanisms where auction revenue meets truthful bidding.",
    "glacier": "Glaciers calve in warm summers, and they calve again at night. We track glacier retreat from "
    "satellite imagery of each glacier.",
    "violin": "Violin plates resonate when varnished, and they resonate again after drying. We record violin tone "
    "and relate violin varnish to spruce wood.",
}


def _named(texts: dict[str, str]) -> dict[int, str]:
    papers, labels = [], []
    for j, (topic, text) in enumerate(texts.items()):
        for i in range(6):
            papers.append(Paper(f"{topic}-{i}", f"Paper {i}", f"{text} Variant {i}. Our results show it works."))
            labels.append(j)
    return topic_names(papers, np.array(labels))


def _content_words(name: str) -> list[str]:
    return [w for term in name.split(" · ") for w in term.split()]


def test_topic_names_hold_no_verb_of_the_abstracts() -> None:
    names = _named(WITH_VERBS)
    for name in names.values():
        words = _content_words(name)
        assert 2 <= len(words) <= 3, name
        assert not set(words) & VERBS, name
        assert not set(words) & FUNCTION_WORDS, name
    assert len(set(names.values())) == len(WITH_VERBS)


def test_a_word_only_used_before_a_noun_names_no_topic() -> None:
    """ "deep" and "neural" are always followed by a noun here: they are modifiers, and name a topic only inside
    their phrase ("graph neural networks"), never alone ("neural · deep", as the ICML 2024 map once read)."""
    texts = {
        "graphs": "Deep graph neural networks pass messages between nodes of molecular graphs. Deep message "
        "passing over graphs oversmooths node features.",
        "speech": "Deep speech recognizers map audio frames to phonemes. Deep acoustic models of speech need "
        "labelled audio frames.",
        "vision": "Deep convolutional networks classify images of street scenes. Deep image classifiers see "
        "street scenes at night.",
    }
    for name in _named(texts).values():
        words = _content_words(name)
        assert 2 <= len(words) <= 3, name
        assert words[-1] not in {"deep", "neural", "convolutional", "acoustic", "molecular"}, name


def test_the_bundled_demo_map_names_topics_by_content_words(app) -> None:  # type: ignore[no-untyped-def]
    """Issue 26: the demo's map read "multi · feature", "reduces · remain", "head · queries", "token · sparse"."""
    names = {p.topic for p in app.corpus_map()}
    assert len(names) >= 2
    for name in names:
        words = _content_words(name)
        assert 2 <= len(words) <= 3, name
        assert not set(words) & FUNCTION_WORDS, name
        assert not set(words) & {"multi", "reduces", "remain", "head", "sparse"}, name
