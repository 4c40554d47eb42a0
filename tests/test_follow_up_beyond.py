"""A follow-up finds what the one question finds: read together with the facets the previous answer was found for,
it also meets papers that answer did not list (a facet beside another may be met by a shorter form or by its words
in one sentence; alone, only by a stated spelling), and says which they are. On a hand-made corpus in memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_settings

FILLER = [
    "Experiments on standard benchmarks show consistent gains over strong baselines.",
    "Code and data are released to support reproducibility.",
    "Our analysis also covers the limitations of the approach.",
]
PAPERS = [
    ("d0", "Diffusion models generate images by reversing a gradual noising process."),
    ("d1", "Diffusion models for robot manipulation: learning visuomotor policies from demonstrations."),
    ("d2", "We model robot grasping as a diffusion process over gripper poses."),  # the words, not the phrase
    ("d3", "Diffusion models for protein design sample backbones that fold as intended."),
    ("d4", "Guidance steers diffusion models towards a text prompt at sampling time."),
    ("d5", "Learning how rumours spread, with a model of diffusion over a social graph."),  # the words, not the phrase
    ("r0", "A robot arm learns to fold towels from human demonstrations."),
    ("r1", "Legged robots learn to walk over rough terrain with reinforcement learning."),
    ("o0", "Convex optimisation with momentum converges faster on smooth objectives."),
    ("o1", "Speech recognition improves with self-training on unlabelled audio."),
    ("o2", "Kernel methods scale to millions of points with random features."),
]
FIRST = "Which papers use diffusion models?"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    from askpapers.rag.api import AskPapers
    from askpapers.rag.retrieve.memory_index import MemoryIndex

    root = tmp_path_factory.mktemp("beyond")
    path = root / "papers.jsonl"
    rows = [{"id": i, "abstract": f"{s} {FILLER[k % 3]} {FILLER[(k + 1) % 3]}"} for k, (i, s) in enumerate(PAPERS)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return AskPapers(make_settings(Path(root) / "store"), warm=False, index=MemoryIndex.from_files([path], embedder))


def _history(*turns: tuple[str, Any], carry_ids: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for question, answer in turns:
        out.append({"role": "user", "content": question})
        out.append(
            {"role": "assistant", "content": answer.text, **({"paper_ids": answer.paper_ids} if carry_ids else {})}
        )
    return out


@pytest.mark.parametrize("carry_ids", [True, False])
def test_a_follow_up_also_finds_what_the_one_question_finds_beyond_the_previous_answer(
    app: Any, carry_ids: bool
) -> None:
    one = app.ask("Which papers use diffusion models for robots?", mode="extractive")
    assert set(one.paper_ids) == {"d1", "d2"}, one.text
    first = app.ask(FIRST, mode="extractive")
    assert "d2" not in first.paper_ids and "d1" in first.paper_ids  # alone, "diffusion models" must be stated
    two = app.ask("Which of those are about robots?", _history((FIRST, first), carry_ids=carry_ids), mode="extractive")
    assert two.paper_ids == ["d1", "d2"], two.text  # the previous answer's first
    assert two.text.startswith(
        f"Of the {len(first.paper_ids)} papers in the previous answer, 1 matches “robots”; read together with "
        "“diffusion models”, one paper it did not list matches too (listed last):"
    ), two.text
    from bench.load_sessions import BEYOND  # (the load test's isolation check reads the answer by these words)

    assert BEYOND in two.text
    # a third turn narrows the two turns' papers, all of them
    history = _history((FIRST, first), ("Which of those are about robots?", two), carry_ids=carry_ids)
    three = app.ask("Which of those are about grasping?", history, mode="extractive")
    assert three.paper_ids == ["d2"], three.text
    assert three.text.startswith("Of the 2 papers in the previous answer, 1 matches “grasping”:"), three.text


def test_when_none_of_the_previous_papers_matches_the_papers_beyond_it_answer(app: Any) -> None:
    first = app.ask(FIRST, mode="extractive")
    two = app.ask("Which of those are about grasping?", _history((FIRST, first), carry_ids=True), mode="extractive")
    assert two.paper_ids == ["d2"], two.text
    assert two.text.startswith(
        f"Of the {len(first.paper_ids)} papers in the previous answer, none matches “grasping”; read together with "
        "“diffusion models”, one paper it did not list matches:"
    ), two.text


def test_papers_that_miss_a_facet_read_together_are_not_added(app: Any) -> None:
    """The robot papers that use no diffusion model stay out: only the strict reading of both facets counts."""
    first = app.ask(FIRST, mode="extractive")
    two = app.ask("Which of those learn from demonstrations?", _history((FIRST, first), carry_ids=True),
                  mode="extractive")  # fmt: skip
    assert two.paper_ids == ["d1"], two.text
    assert "did not list" not in two.text


def test_a_word_found_in_most_papers_reads_no_papers_beyond_the_previous_answer(app: Any) -> None:
    """Beside "diffusion models", "learning" (in 3 of the 11 papers, over a quarter) only ranks, as in the one
    question "diffusion models for learning": no paper beyond the previous answer is added for it, though d5 holds
    both words."""
    first = app.ask(FIRST, mode="extractive")
    assert "d5" not in first.paper_ids
    two = app.ask("Which of those are about learning?", _history((FIRST, first), carry_ids=True), mode="extractive")
    assert "d5" not in two.paper_ids and "did not list" not in two.text, two.text
    assert set(two.paper_ids) <= set(first.paper_ids), two.text


def test_a_word_found_in_most_papers_asked_first_only_ranks_beside_the_follow_up(app: Any) -> None:
    """After "Which papers use learning?", "Which of those are about diffusion models?" reads as the one question
    "learning for diffusion models" does: "learning" only ranks and "diffusion models" is the topic, met as it is
    alone (stated); d5, which holds "learning" and the words "model" and "diffusion" in one sentence, is no match."""
    first_q = "Which papers use learning?"
    first = app.ask(first_q, mode="extractive")
    assert {"d1", "d5"} <= set(first.paper_ids), first.text
    two = app.ask("Which of those are about diffusion models?", _history((first_q, first), carry_ids=True),
                  mode="extractive")  # fmt: skip
    assert two.paper_ids == ["d1"], two.text
    assert "did not list" not in two.text  # (the papers beyond it would not be about learning)


def test_in_llm_mode_too_the_papers_beyond_the_previous_answer_come_last_and_are_named(
    tmp_path: Path, embedder: Any
) -> None:
    """The LLM answerer draws on the same set, through its judge (which re-sorts what it keeps): the previous
    answer's papers first, then the one beyond it, and the head says so. Against a real OpenAI-compatible HTTP
    server on 127.0.0.1 (tests/fake_openai.py)."""
    from askpapers.rag.api import AskPapers
    from askpapers.rag.retrieve.memory_index import MemoryIndex
    from askpapers.rag.settings import LLMSettings, RetrievalSettings, Settings
    from tests.fake_openai import FakeOpenAI, Reply

    path = tmp_path / "papers.jsonl"
    rows = [{"id": i, "abstract": f"{s} {FILLER[k % 3]} {FILLER[(k + 1) % 3]}"} for k, (i, s) in enumerate(PAPERS)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    fake = FakeOpenAI().start()
    try:
        fake.quiet_steps()
        fake.on("answer", Reply("One learns robot policies with diffusion models [1]; one models grasping so [2]."))
        llm = LLMSettings(api_key="sk-test-0123456789", base_url=fake.url, model="test-model", timeout=5.0)
        store = make_settings(tmp_path / "store").store
        settings = Settings(store=store, retrieval=RetrievalSettings(), llm=llm)
        app = AskPapers(settings, warm=False, index=MemoryIndex.from_files([path], embedder))
        first = app.ask(FIRST, mode="extractive")
        history = _history((FIRST, first), carry_ids=True)
        two = app.ask("Which of those are about robots?", history, mode="llm")
    finally:
        fake.stop()
    assert two.mode == "llm" and fake.of("judge"), two.text  # (the judge saw the weak match, d2, and said nothing)
    assert [c.paper_id for c in two.citations] == ["d1", "d2"], two.text
    assert two.text.startswith(
        f"Of the {len(first.paper_ids)} papers in the previous answer, 1 matches “robots”; read together with "
        "“diffusion models”, one paper it did not list matches too (listed last)."
    ), two.text
