"""The facet matcher on a hand-made corpus: which shorter forms of a facet may stand for it in a two-facet question,
judged by the corpus's own counts, and relational compounds ("language-guided") read the same way everywhere."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import memory_app, with_filler

VI = "vi-1"  # states both facets: generative models, and variational inference
INFERENCE_ONLY = [f"inf-{i}" for i in range(6)]  # generative models, and "inference" in another sense
MANIP_ROBOTIC = [f"rm-{i}" for i in range(3)]  # reinforcement learning for "robotic manipulation"
MANIP_ONLY = ["m-0", "m-1"]  # reinforcement learning for "manipulation" of objects by a robot arm
NAV_LANGUAGE = "nav-lang"  # navigation to objects named in language, never "guided", and not close to it densely
NAV_PLAIN = "nav-plain"  # navigation with no language at all
LLM_DEFINED = "llm-def"  # the safety of "large language models (LLMs)"
LLM_ONLY = "llm-only"  # the safety of "LLMs", never "language models"
ROBOT_SAFETY = "robot-safety"  # safety, of robots
LM_PLAIN = "lm-plain"  # the safety of "language models", never "large"
RAG_STATED = "rag-stated"  # "retrieval-augmented generation" with language models
RAG_MODIFIER = "rag-modifier"  # "retrieval-augmented language models", never "generation"
RL_DEFINED = "rl-def"  # defines "reinforcement learning (RL)"
DEEP_RL_LONG = "deep-rl-long"  # exploration in "deep reinforcement learning", never "RL"
DEEP_RL_SHORT = "deep-rl-short"  # exploration in "deep RL"
GAN_DEFINED = "gan-def"  # "generative adversarial networks (GANs)" for image generation
GAN_ONLY = "gan-only"  # "GANs" for image generation
GAN_DESCRIBED = "gan-described"  # a generative network trained adversarially, never named a GAN
SIM_STATED = "sim-stated"  # "sim-to-real transfer" of policies trained with reinforcement learning
SIM_MODIFIER = "sim-modifier"  # a "sim-to-real" pipeline for reinforcement learning, never "transfer"
MU_STATED = ["mu-0", "mu-1"]  # "machine unlearning"
MU_SHORT = "mu-short"  # "unlearning" in language models, never "machine unlearning"
IB_STATED = "ib"  # "the information bottleneck"
BOTTLENECK_ONLY = ["bn-0", "bn-1", "bn-2"]  # a bottleneck of another kind (memory, bandwidth, a data pipeline)

PAPERS: dict[str, tuple[str, str]] = {
    VI: ("Amortised variational inference for deep generative models",
         "We train deep generative models of images with variational inference. An encoder network amortises "
         "the posterior approximation, and the evidence lower bound is optimised with reparameterised gradients."),
    **{pid: (f"Fast sampling for generative models {i}",
             f"Generative models of {topic} are slow at inference time. We distil the sampler into a single network, "
             "cutting inference latency tenfold while keeping sample quality.")
       for i, (pid, topic) in enumerate(zip(INFERENCE_ONLY, ("speech", "video", "molecules", "music", "text",
                                                             "3D shapes"), strict=True))},
    **{pid: (f"Robotic manipulation with reinforcement learning {i}",
             f"We study robotic manipulation of {obj}. A policy trained with reinforcement learning in simulation "
             "is deployed on a real arm and succeeds in most trials.")
       for i, (pid, obj) in enumerate(zip(MANIP_ROBOTIC, ("deformable cloth", "articulated drawers", "small screws"),
                                          strict=True))},
    **{pid: (f"Learning to stack {obj}",
             f"A robot arm learns the manipulation of {obj} by reinforcement learning from sparse rewards. "
             "Curriculum over tower heights speeds up training.")
       for pid, obj in zip(MANIP_ONLY, ("wooden blocks", "cups"), strict=True)},
    NAV_LANGUAGE: ("Object search in large homes",
                   "A household robot performs navigation to objects that a user names in a spoken language command. "
                   "It builds a 3D scene graph on the fly and plans paths over rooms, doors and furniture to reach "
                   "them in unseen houses."),
    NAV_PLAIN: ("Frontier exploration for mapping",
                "A mobile robot performs navigation in unknown buildings by choosing frontiers of an occupancy map. "
                "Exploration finishes faster than with greedy baselines."),
    LLM_DEFINED: ("Automated red-teaming", "Large language models (LLMs) can be prompted into unsafe outputs. We study "
                  "the safety of large language models with automated red-teaming."),
    LLM_ONLY: ("Refusal training at scale", "We improve the safety of LLMs with refusal training on adversarial "
               "prompts, halving harmful completions."),
    LM_PLAIN: ("Toxicity probes", "We measure the safety of pretrained language models with toxicity probes on "
               "open prompts."),
    RAG_STATED: ("Grounded answers", "Retrieval-augmented generation lets language models cite passages when "
                 "answering open-domain questions."),
    RAG_MODIFIER: ("Cheaper retrievers", "We train retrieval-augmented language models whose retriever is a small "
                   "bi-encoder, and answer accuracy holds."),
    GAN_DESCRIBED: ("Two-player training", "A generative model of faces is trained. Its loss is adversarial, set "
                    "against a critic. Both networks are convolutional, and image generation improves."),
    RL_DEFINED: ("Reward shaping revisited", "Reinforcement learning (RL) agents learn from shaped rewards; we bound "
                 "the regret of potential-based shaping."),
    DEEP_RL_LONG: ("Count-based bonuses", "Exploration bonuses from pseudo-counts help deep reinforcement learning "
                   "agents in sparse-reward games."),
    DEEP_RL_SHORT: ("Procedural levels", "Deep RL agents overfit to their training levels unless exploration is "
                    "rewarded."),
    GAN_DEFINED: ("Progressive growing", "Generative adversarial networks (GANs) are grown layer by layer for image "
                  "generation at high resolution."),
    GAN_ONLY: ("Stable discriminators", "We stabilise GANs with a spectral penalty, and image generation improves on "
               "CIFAR-10."),
    SIM_STATED: ("Domain randomisation for quadrupeds", "Sim-to-real transfer of quadruped gaits: policies trained "
                 "with reinforcement learning under randomised dynamics walk on hardware."),
    SIM_MODIFIER: ("Actuator networks", "A sim-to-real pipeline for reinforcement learning: an actuator model learned "
                   "from hardware logs closes the gap for agile quadrupeds."),
    ROBOT_SAFETY: ("Safe exploration for legged robots", "Safety constraints keep a legged robot away from falls "
                   "while it explores rough terrain."),
    MU_STATED[0]: ("Certified data deletion", "Machine unlearning removes the influence of deleted training points "
                   "from a trained classifier, with a certificate that the result is close to retraining."),
    MU_STATED[1]: ("Unlearning benchmarks", "We benchmark machine unlearning methods for image classifiers under "
                   "requests to forget whole classes."),
    MU_SHORT: ("Forgetting hazardous knowledge", "Unlearning hazardous knowledge in chat assistants: we fine-tune "
               "the weights so that the assistant no longer answers questions about toxins, and keep its fluency."),
    IB_STATED: ("Compressed representations", "We learn representations with the information bottleneck, "
                "trading the mutual information with the input against that with the label."),
    BOTTLENECK_ONLY[0]: ("Faster attention kernels", "Memory bandwidth is the bottleneck of attention on GPUs; "
                         "tiling removes it."),
    BOTTLENECK_ONLY[1]: ("Data loading at scale", "The input pipeline becomes the bottleneck when training on "
                         "thousands of accelerators."),
    BOTTLENECK_ONLY[2]: ("Communication-efficient training", "Gradient compression eases the communication "
                         "bottleneck of data-parallel training."),
}  # fmt: skip
FILLER = [
    ("Sparse attention for long documents", "We sparsify attention so transformers read long documents cheaply."),
    ("Graph neural networks for molecules", "Message passing on molecular graphs predicts binding affinity."),
    ("Federated optimisation under drift", "Clients with shifting data are averaged with adaptive server steps."),
    ("Conformal prediction for regression", "Prediction intervals with finite-sample coverage for any regressor."),
    ("Optimal transport between point clouds", "Entropic transport aligns point clouds of different sizes."),
    ("Bandits with delayed feedback", "Regret bounds for contextual bandits whose rewards arrive late."),
    ("Pruning convolutional networks", "Structured pruning removes channels with little loss of accuracy."),
    ("Tabular data synthesis", "Tree-based synthesisers produce private copies of tabular datasets."),
    ("Speech recognition in noise", "Noise-robust acoustic models improve word error rates in cafes."),
    ("Protein structure scoring", "A learned energy ranks decoy protein structures."),
    ("Time series anomaly detection", "Forecast residuals flag anomalies in sensor streams."),
    ("Curriculum learning for code models", "Ordering programs by length speeds up training of code models."),
    ("Causal discovery from interventions", "Interventional data identifies causal graphs up to equivalence."),
    ("Knowledge distillation for detectors", "Small object detectors learn from the features of large ones."),
    ("Kernel methods at scale", "Random features approximate kernels for millions of points."),
    ("Symbolic regression with search", "Beam search over expression trees recovers physical laws."),
    ("Quantised training of transformers", "Eight-bit training keeps transformer accuracy at half the memory."),
    ("Active learning for segmentation", "Uncertain pixels are labelled first, saving annotation time."),
]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    """The facade over the corpus in memory (the matcher reads papers through the index interface alone)."""
    return memory_app(tmp_path_factory.mktemp("match"), with_filler(PAPERS, FILLER), embedder)


def cited(app: Any, question: str) -> set[str]:
    return {c.paper_id for c in app.ask(question, mode="extractive", k=1000).citations}


def test_a_shorter_form_that_usually_means_something_else_does_not_stand_for_the_facet(app: Any) -> None:
    """ "inference" alone is in 7 papers, only 1 of which says "variational inference": it does not name the facet,
    so papers on the inference speed of generative models are not cited for variational inference."""
    got = cited(app, "Which papers build generative models with variational inference?")
    assert VI in got
    assert not got & set(INFERENCE_ONLY), sorted(got)


def test_a_shorter_form_the_corpus_uses_for_the_facet_still_counts(app: Any) -> None:
    """ "manipulation" is in 5 papers, 3 of which say "robotic manipulation": a paper on a robot arm's manipulation
    of blocks meets "robotic manipulation" in a two-facet question."""
    got = cited(app, "Which papers use reinforcement learning for robotic manipulation?")
    assert set(MANIP_ROBOTIC) | set(MANIP_ONLY) <= got, sorted(got)


def test_a_relational_compound_is_held_by_its_first_word(app: Any) -> None:
    """A paper on navigation from language instructions meets "language-guided navigation" though it never says
    "guided" (as holds_words reads the compound, so does the search for the facet's candidates); navigation with
    no language does not."""
    got = cited(app, "Which papers study language-guided navigation?")
    assert NAV_LANGUAGE in got
    assert NAV_PLAIN not in got


def test_the_reading_is_the_same_in_other_words(app: Any) -> None:
    """The same two facets asked another way find the same papers."""
    a = cited(app, "Which papers build generative models with variational inference?")
    b = cited(app, "variational inference for generative models, please")
    assert a == b


def test_an_acronym_defined_for_a_kind_of_the_facet_meets_it(app: Any) -> None:
    """Another paper defines "large language models (LLMs)": a paper on the safety of "LLMs" that never writes
    "language models" meets the facet "language models"; safety of robots does not."""
    got = cited(app, "Which papers study the safety of language models?")
    assert {LLM_DEFINED, LLM_ONLY} <= got, sorted(got)
    assert ROBOT_SAFETY not in got


def test_an_acronym_and_its_long_form_are_read_alike(app: Any) -> None:
    """The corpus defines "LLMs" as "large language models": asked with either, the question finds the same
    papers. (In this 40-paper corpus "safety" weighs 0.55 beside "LLMs" and 0.89 beside "large language models",
    so it gates in all three; until the topicality forest, 2026-12-06, it weighed as a word of the request in all
    three and only ranked.)"""
    short = cited(app, "Which papers study the safety of LLMs?")
    long = cited(app, "Which papers study the safety of large language models?")
    assert short == long == cited(app, "which papers study the safety of llms")
    assert {LLM_DEFINED, LLM_ONLY} <= short, sorted(short)
    assert ROBOT_SAFETY not in short


def test_an_acronym_finds_what_its_long_form_finds(app: Any) -> None:
    """Asked for by "GANs", "gans", its long form, or its long form with the acronym in brackets, the question
    finds the same papers (a paper that never writes the acronym included)."""
    got = cited(app, "Which papers use GANs for image generation?")
    assert {GAN_DEFINED, GAN_ONLY, GAN_DESCRIBED} <= got, sorted(got)
    assert cited(app, "gans for image generation") == got
    assert cited(app, "Which papers use generative adversarial networks for image generation?") == got


def test_defining_an_acronym_in_the_question_changes_nothing(app: Any) -> None:
    """Asked by its long form, with or without the acronym in brackets, a term is read alike."""
    plain = cited(app, "Which papers use generative adversarial networks for image generation?")
    defined = cited(app, "Which papers use generative adversarial networks (GANs) for image generation?")
    assert plain == defined
    assert {GAN_DEFINED, GAN_ONLY} <= plain, sorted(plain)


def test_a_relational_modifier_without_its_head_still_names_the_facet(app: Any) -> None:
    """ "retrieval-augmented" is what "retrieval-augmented generation" is about, as the corpus uses it: a paper on
    retrieval-augmented language models meets the facet though it never says "generation"."""
    got = cited(app, "Which papers study retrieval-augmented generation with language models?")
    assert {RAG_STATED, RAG_MODIFIER} <= got, sorted(got)
    assert LM_PLAIN not in got


def test_a_hyphenated_modifier_without_its_head_still_names_the_facet(app: Any) -> None:
    """ "sim-to-real" is what "sim-to-real transfer" is about, as the corpus uses it (one of the two papers saying
    "sim-to-real" says "sim-to-real transfer"): a sim-to-real pipeline for reinforcement learning meets the facet.
    (Asked "… for reinforcement learning policies", "policies" is a third facet since the topicality forest of
    2026-12-06, weighed 0.88 here, and the pipeline paper never says "policy".)"""
    got = cited(app, "Which papers use sim-to-real transfer for reinforcement learning?")
    assert {SIM_STATED, SIM_MODIFIER} <= got, sorted(got)
    assert not got & {RL_DEFINED, DEEP_RL_LONG, *MANIP_ONLY}, sorted(got)


def test_an_acronym_inside_a_phrase_is_spelled_out(app: Any) -> None:
    """The corpus defines "RL": "deep RL" is also "deep reinforcement learning"."""
    got = cited(app, "Which papers study exploration in deep RL?")
    assert {DEEP_RL_SHORT, DEEP_RL_LONG} <= got, sorted(got)


def test_spellings_take_the_acronyms_of_kinds_of_a_phrase_only() -> None:
    from askpapers.rag.decide.acronyms import spellings

    texts = ["Large language models (LLMs) and recurrent neural networks (RNNs) and vision transformers (ViTs)."]
    got = spellings(["language models", "recurrent networks", "networks", "transformers", "large models"], texts)
    assert "LLM" in got["language models"]  # one modifier more, in front
    assert "RNN" in got["recurrent networks"]  # one modifier more, inside
    assert got["networks"] == ["networks"]  # a single word is not a phrase a kind is read from
    assert got["transformers"] == ["transformers"]  # nor is a two-word long form cut to one word
    assert "RNN" not in got["language models"] and "LLM" not in got["recurrent networks"]


def test_parts_the_corpus_has_but_never_together_give_the_closest_papers_and_say_so(app: Any) -> None:
    """ "image generation navigation": the corpus states both parts, never in one paper. Rather than "no paper
    matches" above a nearest-papers line that names papers on the rest, the answer lists the papers that meet
    every part but the least topical one, and its first line says that none meets all."""
    answer = app.ask("Which papers study image generation navigation?", mode="extractive", k=1000)
    assert answer.found and "No paper meets all of" in answer.text and "come closest" in answer.text, answer.text
    assert {GAN_DEFINED, GAN_ONLY} <= {c.paper_id for c in answer.citations}
    # a part no paper states is still an empty answer (nothing comes close to a topic the corpus lacks)
    none = app.ask("Which papers study zebrafish image generation?", mode="extractive", k=1000)
    assert not none.citations and "No paper in the corpus matches" in none.text, none.text


def test_a_shorter_form_that_is_jargon_stands_for_a_facet_alone(app: Any) -> None:
    """ "unlearning" is rare in general English, and 2 of the 3 papers stating it say "machine unlearning": a paper
    on unlearning in a chat assistant is about machine unlearning, even when that is all the question asks."""
    got = cited(app, "Which papers use machine unlearning?")
    assert set(MU_STATED) | {MU_SHORT} <= got, sorted(got)


def test_a_shorter_form_of_everyday_english_does_not_stand_for_a_facet_alone(app: Any) -> None:
    """ "bottleneck" passes the corpus's share test (1 of its 4 papers says "information bottleneck") but has
    everyday senses: papers on a memory or communication bottleneck are not cited for the information bottleneck."""
    got = cited(app, "Which papers use the information bottleneck?")
    assert IB_STATED in got
    assert not got & set(BOTTLENECK_ONLY), sorted(got)


EFF_WORDS = "eff-words"  # a model that is efficient, built on transformers: never "efficient transformers"
EFF_TRANSFORMATION = "eff-transformation"  # an "efficient transformation": the same stems, other terms
TRANSFORMER_PAPERS: dict[str, tuple[str, str]] = {
    EFF_WORDS: ("Long-context summarisation on a budget",
                "We summarise books with a compact model. Our model is efficient at inference and is built on "
                "transformers with a recurrent memory. It matches larger baselines on three benchmarks."),
    EFF_TRANSFORMATION: ("Fast Fourier features for point clouds",
                         "We derive an efficient transformation of point clouds into the spectral domain. Rotation "
                         "invariance follows from the spectrum."),
}  # fmt: skip


@pytest.fixture(scope="module")
def transformers_app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    return memory_app(tmp_path_factory.mktemp("transformers"), with_filler(TRANSFORMER_PAPERS, FILLER), embedder)


def test_a_phrase_no_paper_states_gives_the_papers_holding_its_words_together_and_says_so(
    transformers_app: Any,
) -> None:
    """ "efficient transformers": no paper states it (one states "efficient transformation", whose stems are the
    same), so the answer is not "no paper matches" while a paper says its model is efficient and built on
    transformers: that paper is cited, with the sentence that holds both words, and the first line says that none
    meets the question as asked."""
    answer = transformers_app.ask("Which papers use or study efficient transformers?", mode="extractive", k=1000)
    got = {c.paper_id: c for c in answer.citations}
    assert EFF_WORDS in got and EFF_TRANSFORMATION not in got, answer.text
    assert "No paper meets all of" in answer.text, answer.text
    evidence = got[EFF_WORDS].evidence
    assert "efficient" in evidence and "transformers" in evidence and evidence in got[EFF_WORDS].abstract, evidence


def test_papers_only_the_ranking_found_are_not_read_when_pooled_ones_meet_every_facet(
    app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer set is the papers that meet every facet as soon as one pooled paper does: the ranked search's
    other papers (every paper of this small corpus is in its top) cannot change it, so they are not read. The
    same set comes back, and an LLM judge, which looks at the near misses, still gets them read."""
    from askpapers.rag.decide.match import FacetMatcher

    matcher = app.parts.answerers["extractive"].matcher
    plan = app.read("Which papers use the information bottleneck?")
    every, _ = matcher.candidates(plan, None)
    pooled = {c.paper_id for c in every if c.pooled}
    assert pooled and len(every) > len(pooled)  # (the ranking found papers outside the facet's pool)
    read: set[str] = set()
    meets = FacetMatcher.meets

    def counting(self: Any, p: Any, *args: Any, **kwargs: Any) -> Any:
        read.add(p.paper_id)
        return meets(self, p, *args, **kwargs)

    monkeypatch.setattr(FacetMatcher, "meets", counting)
    got = matcher.match(plan, None)
    assert read <= pooled, sorted(read - pooled)
    assert {m.paper.paper_id for m in got} == {c.paper_id for c in every if c.pooled and all(f.met for f in c.facets)}
    read.clear()
    matcher.match(plan, None, near=[])
    assert read == {c.paper_id for c in every}


def test_the_matcher_reads_the_stems_derived_at_ingest_instead_of_stemming(
    app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reranker's per-paper data holds each sentence's stems, derived at ingest: they are what stemming the
    sentences gives (so the evidence is the same), and a question's candidates are not stemmed again."""
    from askpapers.rag.decide import evidence
    from askpapers.vectorstore.text import sentence_spans, stems

    app.ask("Which papers use the information bottleneck?", mode="extractive")  # (the ranker reads its data)
    ranker = app.parts.retriever.ranker
    for pid, p in app.parts.index.papers(list(PAPERS)).items():
        sets = ranker.sentence_stems(pid)
        assert sets is not None, pid
        spans = sentence_spans(p.abstract)
        assert list(sets[: len(spans)]) == [frozenset(stems(p.abstract[s:e])) for s, e in spans], pid
        text = p.abstract if p.title_derived else f"{p.title}. {p.abstract}"
        assert ranker.built(pid).word_stems == stems(text), pid
    evidence._given.clear()
    evidence._given_words.clear()
    stemmed: list[str] = []
    for name in ("_sentence_words", "_tokenised"):
        getattr(evidence, name).cache_clear()
        plain = getattr(evidence, name).__wrapped__

        def counting(text: str, plain: Any = plain) -> Any:
            stemmed.append(text)
            return plain(text)

        monkeypatch.setattr(evidence, name, counting)
    got = cited(app, "Which papers use variational inference for generative models?")
    papers = app.parts.index.papers(list(PAPERS)).values()
    texts = {p.abstract for p in papers} | {
        p.abstract if p.title_derived else f"{p.title}. {p.abstract}" for p in papers
    }
    assert VI in got and not set(stemmed) & texts, len(set(stemmed) & texts)
