"""One engine decides every answer set: lists, counts and overviews draw their candidates from the reranked search,
a stray word lowers a score but never empties an answer, and a follow-up narrows the whole previous set, not the
page shown. On the hand-made corpus of ``tests/test_frames.py``."""

from __future__ import annotations

from typing import Any

import pytest

from askpapers.rag.retrieve.rerank import LearnedRanker
from tests.test_frames import corpus_app_in


@pytest.fixture(scope="module")
def small_list(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    """The corpus (in memory), with answers that list at most 2 papers (as ASKPAPERS_MAX_LIST=2 would)."""
    return corpus_app_in(tmp_path_factory.mktemp("engine"), embedder, max_list=2)


def _ids(answer: Any) -> set[str]:
    return {c.paper_id for c in answer.citations}


GNN = {f"t1-{i}" for i in range(5)}
BANDITS = {f"t3-{i}" for i in range(5)}


@pytest.mark.parametrize(
    "question",
    ["Which papers use graph neural networks?", "How many papers use graph neural networks?",
     "Summarise the papers on graph neural networks"],
)  # fmt: skip
def test_set_count_and_overview_answers_call_the_reranker(
    small_list: Any, monkeypatch: pytest.MonkeyPatch, question: str
) -> None:
    calls: list[int] = []
    real = LearnedRanker.score

    def counted(self: LearnedRanker, features: Any) -> Any:
        calls.append(len(features))
        return real(self, features)

    monkeypatch.setattr(LearnedRanker, "score", counted)
    answer = small_list.ask(question, mode="extractive")
    assert answer.total == 5 and answer.kind == "list"
    assert calls and calls[0] >= 5  # the reranker ordered a pool at least as large as the answer set


def test_an_answer_carries_every_matching_paper_not_only_the_page(small_list: Any) -> None:
    answer = small_list.ask("Which papers use graph neural networks?", mode="extractive")
    assert len(answer.citations) == 2 and answer.total == 5
    assert set(answer.paper_ids) == GNN
    assert set(answer.to_dict()["paper_ids"]) == GNN


def test_a_follow_up_narrows_the_whole_previous_set(small_list: Any) -> None:
    first = small_list.ask("Which papers use graph neural networks?", mode="extractive")
    history = [
        {"role": "user", "content": "Which papers use graph neural networks?"},
        {"role": "assistant", "content": first.text, "paper_ids": first.paper_ids},
    ]
    answer = small_list.ask("Which of those are about traffic forecasting?", history, mode="extractive")
    assert answer.text.startswith("Of the 5 papers in the previous answer")
    assert _ids(answer) == {"t1-2"}
    # the same with plain-text history (no ids): the earlier question is answered again, whole
    plain = [history[0], {"role": "assistant", "content": first.text}]
    again = small_list.ask("Which of those are about traffic forecasting?", plain, mode="extractive")
    assert again.text.startswith("Of the 5 papers in the previous answer") and _ids(again) == {"t1-2"}


@pytest.mark.parametrize("stray", ["worked", "references", "whats out there", "state-of-the-art", "for my thesis"])
def test_a_stray_word_never_empties_an_answer(small_list: Any, stray: str) -> None:
    answer = small_list.ask(f"Which papers use contextual bandits, {stray}?", mode="extractive")
    found = set(answer.paper_ids)
    assert len(found & BANDITS) >= 4, answer.text
    assert not {pid for pid in found if pid.startswith("t") and pid not in BANDITS}, answer.text


def test_the_shipped_membership_model_weighs_evidence_the_right_way() -> None:
    from askpapers.rag.decide.membership import FEATURES, CandidateEvidence, FacetEvidence, Ranked, features, shipped

    model = shipped()
    assert model is not None and 0.0 < model.cut < 1.0

    def row(met: bool, phrase: bool, rank: int, weight: float = 1.0) -> list[float]:
        facets = [FacetEvidence(True, True, False, 1.0, 0.7, 1.0), FacetEvidence(met, phrase, False, 1.0 if met else
                  0.2, 0.7 if met else 0.3, weight)]  # fmt: skip
        return features(CandidateEvidence("p", facets, [], Ranked(rank, 0.0 if rank else 10.0, 0.6), 1.0), 20)

    assert len(row(True, True, 1)) == len(FEATURES)
    both, one, one_ranked = model.probabilities([row(True, True, 1), row(False, False, 0), row(False, False, 3)])
    assert both >= model.cut > one  # a paper stating both facets is in; one missing a topical facet is out
    assert one_ranked >= one  # the reranker's rank can only help
    # a facet that is not topical (weight .1) costs less when it is missed than a topical one
    (light,) = model.probabilities([row(False, False, 3, weight=0.1)])
    assert light >= one_ranked


def test_follow_ups_are_worked_out_from_the_parts_alone(small_list: Any) -> None:
    """The previous answer's papers come from the parts the follow-ups are given (no call into the facade): from
    the ids the history carries, or by answering its question again, whole."""
    from askpapers.rag.answerers.followup import FollowUps
    from askpapers.rag.types import Message
    from askpapers.vectorstore.types import Filters

    parts = small_list.parts
    followups = FollowUps(parts.index, parts.reader, parts.answerers["extractive"])
    asked = Message(role="user", content="Which papers use graph neural networks?")
    plain = [asked, Message(role="assistant", content="Five papers.")]
    assert set(followups.previous_papers(plain, Filters(), parts.index.revision) or []) == GNN
    carried = [asked, Message(role="assistant", content="Two papers.", paper_ids=["t1-0", "t1-1"])]
    assert followups.previous_papers(carried, Filters(), parts.index.revision) == ["t1-0", "t1-1"]
    assert followups.previous_papers([], Filters(), parts.index.revision) is None


def test_a_follow_up_after_an_empty_answer_says_there_is_nothing_to_narrow(small_list: Any) -> None:
    first = small_list.ask("Which papers use quantum annealing?", mode="extractive")
    assert first.total == 0
    history = [
        {"role": "user", "content": "Which papers use quantum annealing?"},
        {"role": "assistant", "content": first.text, "paper_ids": first.paper_ids},
    ]
    answer = small_list.ask("Which of those are about graph neural networks?", history, mode="extractive")
    assert "nothing to narrow down" in answer.text and "without “of those”" in answer.text
    assert "None of the 0 papers" not in answer.text and not answer.citations


def _two_turns(app: Any, first: str, second: str, carry_ids: bool = True) -> tuple[Any, Any]:
    before = app.ask(first, mode="extractive")
    said: dict[str, Any] = {"role": "assistant", "content": before.text}
    if carry_ids:
        said["paper_ids"] = before.paper_ids
    return before, app.ask(second, [{"role": "user", "content": first}, said], mode="extractive")


@pytest.mark.parametrize("carry_ids", [True, False])
def test_a_follow_up_is_read_with_the_question_it_narrows(small_list: Any, carry_ids: bool) -> None:
    """Two turns find what the one question finds: beside "diffusion models", "generating images" is met by
    similarity too (t4-4 studies "the memorisation of training images by diffusion models"), as it is when both
    are asked at once; alone it would need the words."""
    one = small_list.ask("Which papers use diffusion models for generating images?", mode="extractive")
    assert set(one.paper_ids) == {"t4-0", "t4-4"}
    first, two = _two_turns(small_list, "Which papers use diffusion models?",
                            "Which of those are about generating images?", carry_ids)  # fmt: skip
    assert first.total == 5
    assert two.text.startswith("Of the 5 papers in the previous answer, 2 match “generating images”"), two.text
    assert set(two.paper_ids) == set(one.paper_ids)
    # a third turn narrows what the two found, read with both (its answer is among theirs)
    history = [
        {"role": "user", "content": "Which papers use diffusion models?"},
        {"role": "assistant", "content": first.text, **({"paper_ids": first.paper_ids} if carry_ids else {})},
        {"role": "user", "content": "Which of those are about generating images?"},
        {"role": "assistant", "content": two.text, **({"paper_ids": two.paper_ids} if carry_ids else {})},
    ]
    three = small_list.ask("Which of those study memorisation?", history, mode="extractive")
    assert set(three.paper_ids) == {"t4-4"}, three.text


def test_a_follow_up_that_nothing_meets_does_not_keep_the_previous_set(small_list: Any) -> None:
    """Read with the question it narrows, no paper meets both; the answer is then the follow-up's own, not the
    previous papers as the closest to a question they do not answer ("speech" is stated, but not by these)."""
    _, two = _two_turns(small_list, "Which papers use federated learning?", "Which of those are about speech?")
    assert two.text.startswith("None of the 5 papers in the previous answer matches “speech”"), two.text
    assert not two.paper_ids


FOLLOW_UPS = [
    "Which of those are about {b}?", "Of those, which use {b}?", "Only the ones on {b}, please", "Any of them on {b}?",
    "Which among these papers study {b}?", "and which of them involve {b}?",
]  # fmt: skip
PAIRS = [("diffusion models", "generating images"), ("graph neural networks", "road traffic"),
         ("the information bottleneck", "speech"), ("diffusion models", "protein design"),
         ("contextual bandits", "news recommendations")]  # fmt: skip


@pytest.mark.parametrize("a,b", PAIRS)
def test_two_turns_in_any_wording_find_what_one_question_finds(small_list: Any, a: str, b: str) -> None:
    """A metamorphic property: asked in two turns, in any of the follow-up wordings, a question whose two facets
    both hold when asked at once finds the same papers as the one question (the first answer holds them all)."""
    one = small_list.ask(f"Which papers use {a} for {b}?", mode="extractive")
    assert sum(not f.optional for f in small_list.read(f"Which papers use {a} for {b}?").facets) == 2
    assert one.paper_ids, one.text
    for wording in FOLLOW_UPS:
        _, two = _two_turns(small_list, f"Which papers use {a}?", wording.format(b=b))
        assert set(two.paper_ids) == set(one.paper_ids), (wording, two.text[:200])


# a verb that acts on the previous answer, with the pronoun it acts on: generated wordings (tests below)
ACTS = ["{v} {p} down to {b}", "{v} {p} to {b}", "{v} {p} by {b}"]
ACT_VERBS = {0: ["narrow", "cut", "whittle", "boil"], 1: ["restrict", "limit", "reduce", "narrow"],
             2: ["filter", "screen"]}  # fmt: skip
ACTING = {"narrow", "filter", "cut", "restrict", "limit", "reduce", "whittle", "boil", "screen", "down"}
ACT_FRAMES = ["{}", "Can you {}?", "Please {}", "Now {}", "Could you {} please?", "ok, {}"]


def acting_wordings(n: int, seed: int) -> list[str]:
    """``n`` follow-ups, drawn with ``seed`` from every verb × what it acts on × frame: "Can you whittle them down to
    {b}?", "Trim the list to {b}"."""
    import random

    pronouns = ["it", "that", "this", "them", "those", "these"]
    nouns = ["the list", "that list", "the results", "this selection"]  # (narrowed "to" or "down to", not "by")
    every = [frame.format(ACTS[k].format(v=v, p=p, b="{b}"))
             for k, verbs in ACT_VERBS.items() for v in verbs
             for p in pronouns + (nouns if k < 2 else []) for frame in ACT_FRAMES]  # fmt: skip
    every = [w[0].upper() + w[1:] for w in every]
    assert len(set(every)) == len(every) == (10 * 6 + 8 * 4) * len(ACT_FRAMES)
    return random.Random(seed).sample(every, n)


@pytest.mark.parametrize("a,b", PAIRS)
def test_a_verb_acting_on_the_previous_answer_narrows_it(small_list: Any, a: str, b: str) -> None:
    """A metamorphic property over generated follow-ups: a verb acting on the previous answer ("Narrow it down to
    B", "Can you filter those by B?") narrows it as "Which of those are about B?" does. The verb is no topic (it had
    gated: "Filter them to B"), and a question pointing back with "it" or "that" is a follow-up (it had searched the
    whole corpus)."""
    _, want = _two_turns(small_list, f"Which papers use {a}?", f"Which of those are about {b}?")
    assert want.paper_ids and want.text.startswith("Of the "), want.text[:200]
    for wording in acting_wordings(16, seed=PAIRS.index((a, b))):
        question = wording.format(b=b)
        plan = small_list.read(question)
        assert plan.followup, question
        words = {w.lower() for f in plan.facets for alt in f.alternatives for w in alt.split()}
        assert not words & ACTING, (question, plan.facets)
        _, got = _two_turns(small_list, f"Which papers use {a}?", question)
        assert set(got.paper_ids) == set(want.paper_ids), (question, got.text[:200])
