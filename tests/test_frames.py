"""A metamorphic property: wrapping a question in any generated frame (greeting + request + purpose + politeness,
from :mod:`rag.evaluation.frames`) keeps the cited set, on a hand-made corpus. The frames are drawn from a pool of
thousands of combinations, not picked one by one; each is asked about one of the corpus's topics in turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from askpapers.rag.evaluation.frames import REQUESTS, all_frames, fill, frames
from tests.conftest import make_settings

# (topic, the sentences of its papers): each paper states the topic in one sentence, among others about its method
TOPICS: dict[str, list[str]] = {
    "federated learning": [
        "Clients train a shared model with federated learning without sending their raw data to a server.",
        "We study federated learning under heterogeneous client data and propose a drift correction.",
        "Communication is the bottleneck of federated learning, so we compress client updates to one bit.",
        "Personalised federated learning lets each hospital keep a local head on top of a shared encoder.",
        "Byzantine clients can poison federated learning; we give a robust aggregation rule.",
    ],
    "graph neural networks": [
        "Graph neural networks pass messages between neighbouring nodes to predict molecular properties.",
        "We show that deep graph neural networks oversmooth node features and propose a residual fix.",
        "Graph neural networks for traffic forecasting model road sensors as nodes of a graph.",
        "The expressive power of graph neural networks is bounded by the Weisfeiler-Leman test.",
        "We train graph neural networks on citation graphs with few labelled nodes.",
    ],
    "the information bottleneck": [
        "The information bottleneck compresses the input while keeping what predicts the label.",
        "We apply the information bottleneck principle to learn robust representations of speech.",
        "A variational bound makes the information bottleneck objective tractable for deep networks.",
        "The information bottleneck explains why representations forget nuisance factors during training.",
        "We use the information bottleneck to select the relevant parts of a long document.",
    ],
    "contextual bandits": [
        "Contextual bandits choose an action from side information and observe only its reward.",
        "We give regret bounds for contextual bandits with linear rewards and adversarial contexts.",
        "Offline evaluation of contextual bandits uses logged data from an older policy.",
        "Contextual bandits personalise news recommendations for each visitor of a site.",
        "Neural contextual bandits explore with an upper confidence bound on a learned feature map.",
    ],
    "diffusion models": [
        "Diffusion models generate images by reversing a gradual noising process.",
        "We distil diffusion models into a one-step sampler with a consistency loss.",
        "Diffusion models for protein design sample backbones that fold as intended.",
        "Guidance steers diffusion models towards a text prompt at sampling time.",
        "We study the memorisation of training images by diffusion models.",
    ],
}
OTHER = [
    "Convex optimisation with momentum converges faster on smooth objectives.",
    "We release a benchmark of tabular datasets and compare gradient boosted trees.",
    "Speech recognition improves with self-training on unlabelled audio.",
    "A robot arm learns to fold towels from human demonstrations.",
    "Sparse attention reduces the memory of transformers on long sequences.",
    "We measure gender bias in word embeddings and propose a projection to remove it.",
    "Kernel methods scale to millions of points with random features.",
    "Causal discovery from observational data with latent confounders.",
]
FILLER = [
    "Experiments on standard benchmarks show consistent gains over strong baselines.",
    "Code and data are released to support reproducibility.",
    "Our analysis also covers the limitations of the approach.",
]


def _papers() -> list[dict[str, str]]:
    out = []
    for t, sentences in enumerate(TOPICS.values()):
        for i, s in enumerate(sentences):
            out.append({"id": f"t{t}-{i}", "abstract": f"{s} {FILLER[i % 3]} {FILLER[(i + 1) % 3]}"})
    for i, s in enumerate(OTHER):
        out.append({"id": f"o-{i}", "abstract": f"{s} {FILLER[i % 3]}"})
    return out


def corpus_app_in(root: Path, embedder: Any, **answer: Any) -> Any:
    """A facade over the hand-made corpus in memory (written to ``root`` and read as an ingest reads it): the
    planner, the matcher and the answerers read papers through the index interface alone. ``answer``: answer
    settings to change."""
    from askpapers.rag.api import AskPapers
    from askpapers.rag.retrieve.memory_index import MemoryIndex

    path = root / "papers.jsonl"
    path.write_text("\n".join(json.dumps(p) for p in _papers()) + "\n", encoding="utf-8")
    index = MemoryIndex.from_files([path], embedder)
    assert index.count() == len(_papers())
    settings = make_settings(root / "store")
    settings = settings.model_copy(update={"answer": settings.answer.model_copy(update=answer)})
    return AskPapers(settings, warm=False, index=index)


@pytest.fixture(scope="module")
def corpus_app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return corpus_app_in(tmp_path_factory.mktemp("frames"), embedder)


def _ids(app: Any, question: str) -> set[str]:
    return {c.paper_id for c in app.ask(question, mode="extractive").citations}


def test_the_pool_of_frames_is_large_and_varied() -> None:
    pool = all_frames()
    assert len(pool) >= 10_000
    sample = frames(240)
    assert len(set(sample)) == 240 and all("{x}" in f for f in sample)
    assert frames(240) == sample  # reproducible
    assert fill("papers on {typo}", "federated learning") != "papers on federated learning"


def test_the_canonical_questions_find_their_topic(corpus_app: Any) -> None:
    for t, topic in enumerate(TOPICS):
        assert _ids(corpus_app, f"Which papers use {topic}?") == {f"t{t}-{i}" for i in range(5)}, topic


def test_any_frame_keeps_the_cited_set(corpus_app: Any) -> None:
    topics = list(TOPICS)
    canonical = {topic: _ids(corpus_app, f"Which papers use {topic}?") for topic in topics}
    worse = []
    sample = frames(240, seed=1)
    for n, template in enumerate(sample):
        topic = topics[n % len(topics)]
        question = fill(template, topic)
        got, want = _ids(corpus_app, question), canonical[topic]
        jaccard = len(got & want) / len(got | want) if got | want else 1.0
        if jaccard < 0.9:
            worse.append(f"{question!r}: {len(got)} papers, Jaccard {jaccard:.2f}")
    assert len(worse) <= 0.05 * len(sample), f"{len(worse)} of {len(sample)}: " + "; ".join(worse[:20])


def test_every_request_shape_on_every_topic_keeps_the_cited_set(corpus_app: Any) -> None:
    """Each request shape, bare (no greeting, purpose or politeness), on each topic: a sample may miss a shape."""
    worse = []
    for topic, t in zip(TOPICS, range(len(TOPICS)), strict=True):
        want = {f"t{t}-{i}" for i in range(5)}
        for template in REQUESTS:
            question = fill(template[0].upper() + template[1:], topic)
            if (got := _ids(corpus_app, question)) != want:
                worse.append(f"{question!r}: {sorted(got)}")
    assert not worse, f"{len(worse)} of {len(TOPICS) * len(REQUESTS)}: " + "; ".join(worse[:20])
