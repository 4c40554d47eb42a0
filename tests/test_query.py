"""The planner on hand-written questions: intents, facets (AND / OR / NOT), filters stated in words, typos
and follow-ups, against a small hand-made corpus whose statistics the planner reads."""

from __future__ import annotations

import functools

import pytest

from askpapers.rag.read.lexicon import CorpusLexicon
from askpapers.rag.read.query import REQUEST_WORDS, QueryPlan, core_text, plan
from askpapers.rag.retrieve.memory_index import MemoryIndex
from askpapers.vectorstore.text import stems
from askpapers.vectorstore.types import Paper

DOCS = [
    "We study reinforcement learning for robotic manipulation with a learned model.",
    "Reinforcement learning (RL) agents learn manipulation skills in simulation; the model transfers to robots.",
    "Deep reinforcement learning for locomotion and learning of robot policies.",
    "Offline reinforcement learning from logged data with a learning model.",
    "Imitation learning for dexterous manipulation with a learned model.",
    "Diffusion models generate images; we train diffusion models for image generation.",
    "Diffusion policies for robot manipulation, a model for learning.",
    "Generative adversarial networks (GANs) for image generation and learning.",
    "GANs synthesize images with a generator model.",
    "Mixture of experts (MoE) models route tokens to experts; mixture of experts scales learning.",
    "Sparse mixture of experts layers for language model learning.",
    "Chain of thought prompting improves reasoning in large language models.",
    "Large language models (LLMs) show reasoning; chain of thought helps the model.",
    "Jailbreak attacks on large language models bypass safety; jailbreaks are common.",
    "We study jailbreaks and jailbreaking of LLMs and model safety.",
    "Differential privacy protects data; differentially private learning of a model.",
    "Differentially private optimization with learning guarantees for the model.",
    "Conformal prediction gives coverage guarantees for model predictions.",
    "Conformer generation predicts molecular conformations with a learned model.",
    "Machine unlearning removes data from a trained model; unlearning for LLMs.",
    "Knowledge distillation compresses a teacher model into a student for learning.",
    "Theory of mind in large language models; theory of mind benchmarks.",
    "Backdoor attacks poison training data; backdoor defenses detect triggers in a model.",
    "Graph neural networks (GNNs) learn on graphs with a message passing model.",
    "Federated learning trains a model across clients with learning rounds.",
    "Time series forecasting with transformers; a forecasting model for learning.",
    "Vision and language navigation with a learned model and instructions.",
    "Tool use by language models; tool use improves learning.",
    "A user study of explanations and model learning.",
    "Watermarking the text of LLMs makes it detectable by a model.",
    "Watermarks for language model outputs and learning; LLM outputs are often wrong.",
    "Checking LLM outputs for errors with a model.",
    "Information bottleneck representation learning for a compact model.",
    "Retrieval augmented generation with language models for question answering and learning.",
    "Variational inference for generative models and learning.",
    "Autonomous driving planning with trajectory prediction and a learned model.",
    "Adversarial examples against deep neural networks and robust learning models.",
    "Quantization of a neural network model for efficient learning.",
    "State of the art results in learning with a model.",
    "WaterSIC reaches a small rate gap; the model is efficient.",
    "Sim to real transfer of reinforcement learning policies for robots and learning.",
    "Mixture of experts routing; a mixture of experts model for learning.",
    "State of the art performance; we reach the state of the art with a model.",
    "Beyond the state of the art in learning; a new model.",
    "Theory of mind tasks; theory of mind evaluation of a model for learning.",
    "Theory of mind in agents and learning.",
    "Tool use in agents; tool use benchmarks for a model.",
    "Learning tool use with a model.",
    "Mutual information estimation for representation learning with a model.",
    "Neural radiance fields (NeRF) render novel views; NeRF models and learning.",
    "Reinforcement learning from human feedback (RLHF) aligns a language model for learning.",
    "Chain of thought reasoning and learning in a model.",
    "State space models (SSMs) for long sequences and learning.",
    "A jailbreak benchmark for chat assistants and a model.",  # ("jailbreak" alone: in 2 papers, as the word itself)
]
VENUES = ["ICML 2024", "ICML 2026", "ICLR 2024", "NeurIPS 2019"]


@functools.lru_cache(maxsize=8)
def _index(docs: tuple[str, ...]) -> MemoryIndex:
    """An in-memory index of the texts (abstracts without titles; the first few carry the venues)."""
    papers = [
        Paper(f"d{i}", f"d{i}", d, venue=VENUES[i] if i < len(VENUES) else "", title_derived=True)
        for i, d in enumerate(docs)
    ]
    index = MemoryIndex(papers)
    index.size(), index.word_df(["warm"])  # (its statistics are counted once, here)
    return index


def docs_lexicon(docs: list[str]) -> CorpusLexicon:
    """The planner's :class:`rag.read.lexicon.CorpusLexicon` over an in-memory index of the texts: the statistics are
    read as the store's index reads them. A new one starts with its caches empty."""
    return CorpusLexicon(_index(tuple(docs)), REQUEST_WORDS)


def lexicon() -> CorpusLexicon:
    """A lexicon of :data:`DOCS` with empty caches (for counting the work of one reading)."""
    return docs_lexicon(DOCS)


LEX = docs_lexicon(DOCS)


def read(question: str) -> QueryPlan:
    """The question's structure as parsed (facets not yet weighed by topicality: see the tests at the end)."""
    return plan(question, LEX, weigh=False)


def facets(p: QueryPlan) -> list[list[str]]:
    return [[a.lower() for a in f.alternatives] for f in p.facets]


# -- one topic, asked every way: always the set intent and the same single facet ----------------------------------
PHRASINGS = [
    "Which papers use or study the information bottleneck?",
    "Which papers use information bottleneck?",
    "information bottleneck",
    "Information Bottleneck",
    "papers on information bottleneck",
    "information bottleneck papers",
    "show me work on the information bottleneck",
    "any papers about information bottleneck?",
    "I'm looking for papers that use the information bottleneck, thanks!",
    "list all papers about information bottleneck please",
    "can you find research on information bottleneck",
    "got anything on information bottleneck?",
    "Are there any studies that apply the information bottleneck?",
    "which works deal with information bottleneck",
    "papers related to the information bottleneck principle",
    "INFORMATION BOTTLENECK???",
    "hi! what papers do you have on information bottleneck",
    "Find me papers using an information bottleneck.",
    "information bottleneck, please",
    "Which papers use information bottleneck? Thanks",
]


@pytest.mark.parametrize("question", PHRASINGS)
def test_every_phrasing_reads_the_same_topic(question: str) -> None:
    p = read(question)
    assert p.intent == "set" and not p.followup, p
    got = facets(p)
    assert len(got) == 1 and got[0][0].startswith("information bottleneck"), got
    assert p.corrections == []


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "Which papers use reinforcement learning for robotic manipulation?",
            [["reinforcement learning"], ["robotic manipulation"]],
        ),
        ("reinforcement learning in robotic manipulation", [["reinforcement learning"], ["robotic manipulation"]]),
        ("robotic manipulation with reinforcement learning", [["robotic manipulation"], ["reinforcement learning"]]),
        (
            "papers that apply imitation learning to dexterous manipulation",
            [["imitation learning"], ["dexterous manipulation"]],
        ),
        ("GANs for image generation", [["gans"], ["image generation"]]),
        ("Which papers study reasoning in large language models?", [["reasoning"], ["large language models"]]),
        (
            "diffusion models for image generation or robot manipulation",
            [["diffusion models"], ["image generation", "robot manipulation"]],
        ),
        ("Which papers use mixture of experts?", [["mixture of experts"]]),
        ("theory of mind in large language models", [["theory of mind"], ["large language models"]]),
        ("papers on chain of thought", [["chain of thought"]]),
        ("state of the art", [["state of the art"]]),
        ("jailbreak attacks on large language models", [["jailbreak attacks"], ["large language models"]]),
        ("variational inference for generative models", [["variational inference"], ["generative models"]]),
        ("adversarial examples against deep neural networks", [["adversarial examples"], ["deep neural networks"]]),
        ("Which papers address planning for autonomous driving?", [["planning"], ["autonomous driving"]]),
    ],
)
def test_facets_are_anded(question: str, expected: list[list[str]]) -> None:
    p = read(question)
    assert facets(p) == expected, p


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "Which papers study machine unlearning or knowledge distillation?",
            [["machine unlearning", "knowledge distillation"]],
        ),
        ("GANs, diffusion models or variational inference", [["gans", "diffusion models", "variational inference"]]),
        ("backdoor attacks or defenses", [["backdoor attacks", "backdoor defenses"]]),
        ("federated learning and/or differential privacy", [["federated learning", "differential privacy"]]),
        ("papers on GANs and diffusion models", [["gans", "diffusion models"]]),
        ("papers combining GANs and diffusion models", [["gans"], ["diffusion models"]]),
        # a possessive after "and" points back: the second topic is the first one's ("LLMs and their reasoning")
        ("Which papers study large language models and their reasoning?", [["large language models"], ["reasoning"]]),
        ("papers on diffusion models and its robustness", [["diffusion models"], ["robustness"]]),
        # "+" joins two topics both required, "&" as "and" does; "X meets Y" relates them
        ("planning + autonomous driving", [["planning"], ["autonomous driving"]]),
        ("GANs & VAEs", [["gans", "vaes"]]),
        (
            "Find work where reinforcement learning meets robotic manipulation",
            [["reinforcement learning"], ["robotic manipulation"]],
        ),
        # words that relate two topics: both must hold
        ("papers at the intersection of GANs and diffusion models", [["gans"], ["diffusion models"]]),
        (
            "I need papers that connect federated learning and differential privacy",
            [["federated learning"], ["differential privacy"]],
        ),
        (
            "the interplay between federated learning and differential privacy",
            [["federated learning"], ["differential privacy"]],
        ),
        ("federated learning/differential privacy", [["federated learning", "differential privacy"]]),
    ],
)
def test_alternatives_are_ored(question: str, expected: list[list[str]]) -> None:
    assert facets(read(question)) == expected


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("LLM reasoning papers", [["llm"], ["reasoning"]]),
        ("llm reasoning papers", [["llm"], ["reasoning"]]),  # typed in lower case: a short word, not English
        ("Which papers study reasoning in LLMs?", [["reasoning"], ["llms"]]),
        ("LLM safety or alignment", [["llm"], ["safety", "alignment"]]),
        ("LLM safety or LLM alignment", [["llm"], ["safety", "alignment"]]),
        ("MoE models", [["moe models"]]),  # the head adds nothing to the name
        ("studies of language model safety or alignment", [["language model"], ["safety", "alignment"]]),
    ],
)
def test_a_term_before_a_topic_is_a_facet_of_its_own(question: str, expected: list[list[str]]) -> None:
    """ "LLM reasoning", a phrase the corpus barely uses, is reasoning and LLMs, as "reasoning in LLMs" is: both
    must hold; so is "language model safety"."""
    p = read(question)
    assert facets(p) == expected
    assert not any(f.optional for f in p.facets), p


def test_a_phrase_the_corpus_uses_as_a_term_stays_whole() -> None:
    docs = [*(f"BERT embeddings of {w} sentences." for w in ("short", "long", "legal", "medical")),
            "BERT pretraining on books.", "BERT for parsing.", "Word embeddings of rare words.",
            "Graph embeddings for links.", "Image embeddings for retrieval."]  # fmt: skip
    lex = docs_lexicon(docs)
    assert facets(plan("BERT embeddings", lex)) == [["bert embeddings"]]  # 4 of the 6 BERT papers say it
    assert facets(plan("BERT pruning", lex)) == [["bert"], ["pruning"]]
    docs = [*(f"Offline reinforcement learning from {w} logs." for w in ("robot", "clinic", "game", "ad")),
            "Reinforcement learning online.", "Offline evaluation.", "Learning rates."]  # fmt: skip
    lex = docs_lexicon(docs)  # "offline reinforcement" always goes on with "learning": one term
    assert facets(plan("offline reinforcement learning", lex)) == [["offline reinforcement learning"]]


def test_a_term_led_by_a_term_stays_whole_when_its_parts_are_written_together() -> None:
    """ "natural language processing" is led by a term ("natural language") and ends in a word many papers use
    alone ("processing"), so the whole is a small share of either part's papers; but the papers that hold both
    parts nearly all write them as one phrase: a term of its own, not natural language and processing. "language
    model reasoning" is written so in 3 of the 20 papers holding both: reasoning, and language models."""
    docs = [*(f"Natural language processing of {w} text." for w in ("legal", "medical", "news", "social")),
            *(f"Natural language instructions for {w}." for w in ("robots", "agents", "games", "maps", "cars",
                                                                  "drones", "arms", "homes", "tools", "webs")),
            *(f"Signal processing of {w}." for w in ("audio", "radar", "sonar", "seismic", "eeg", "ecg", "wifi")),
            "Natural language queries for image processing.",
            *(f"Language model reasoning on {w}." for w in ("math", "code", "logic")),
            *(f"Reasoning about {w} with a language model." for w in ("time", "space", "law", "chess", "tables",
                                                                     "graphs", "physics", "biology", "money",
                                                                     "puzzles", "plans", "stories", "music",
                                                                     "games", "maps", "charts", "proofs"))]  # fmt: skip
    lex = docs_lexicon(docs)
    assert facets(plan("natural language processing", lex)) == [["natural language processing"]]
    assert facets(plan("Which papers use natural language processing?", lex)) == [["natural language processing"]]
    assert facets(plan("language model reasoning", lex)) == [["language model"], ["reasoning"]]


LINKED_REQUESTS = ["Which papers use {x}", "Papers on {x}", "Any papers about {x}", "Show me research on {x}",
                   "What has been done on {x}", "Looking for papers regarding {x}", "Can you find papers on {x}",
                   "Hi! Anything on {x}"]  # fmt: skip


def test_the_object_of_a_request_runs_on_through_a_link() -> None:
    """Two topics the corpus never states in one paper: one of them only ranks (:func:`rag.read.resolve._apart`).
    Which one must not depend on the request's words: in "Papers *on* X in Y" the object of "on" is "X in Y", both
    topics, as in "Which papers use X for Y?" (it had been X alone, so Y was taken for a phrase of the request). A
    property over generated requests: 8 request shapes x 3 links x 3 endings, in each facet order."""
    docs = [*(f"Transformers for {w}." for w in ("translation", "vision", "speech", "code", "proteins", "graphs")),
            *(f"Time series forecasting of {w} demand with gradient boosting." for w in ("power", "water", "retail")),
            *(f"Filler paper on {w}." for w in ("topology", "sorting", "compilers", "caching", "routing"))]  # fmt: skip
    lex = docs_lexicon(docs)
    for a, b in [("transformers", "time series forecasting"), ("time series forecasting", "transformers")]:
        readings = {
            q: [(f.alternatives, f.optional) for f in plan(q, lex).facets]
            for r in LINKED_REQUESTS for link in ("for", "in", "with") for end in ("?", ", please", " - thanks")
            for q in [r.format(x=f"{a} {link} {b}") + end]
        }  # fmt: skip
        assert len(readings) == 72
        assert len({str(v) for v in readings.values()}) == 1, readings
        assert sorted(f[0][0] for f in next(iter(readings.values()))) == sorted([a, b])


def test_a_word_that_starts_a_linked_term_is_not_folded_into_the_unit_before_it() -> None:
    """ "X with Y" of two single words is the compound "Y X" when the corpus uses it ("manipulation with learning"
    is "learning manipulation"), but not when the word goes on into a term through a link: in "manipulation with
    learning from demonstrations" the topics are manipulation and learning from demonstrations, in either order."""
    docs = [*(f"Learning manipulation skills for {w}." for w in ("kitchens", "factories", "farms")),
            *(f"Learning from demonstrations of {w}." for w in ("cooking", "driving", "surgery", "folding")),
            *(f"Manipulation of {w} objects." for w in ("soft", "rigid", "articulated")),
            *(f"Filler paper on {w}." for w in ("topology", "sorting", "compilers", "caching", "routing"))]  # fmt: skip
    lex = docs_lexicon(docs)
    assert facets(plan("manipulation with learning", lex)) == [["learning manipulation"]]
    for q in ["Which papers study manipulation with learning from demonstrations?",
              "Which papers use learning from demonstrations for manipulation?"]:  # fmt: skip
        assert sorted(facets(plan(q, lex))) == [["learning from demonstrations"], ["manipulation"]], q


@pytest.mark.parametrize("link", ["for", "with", "in"])
def test_two_words_joined_by_a_link_read_alike_in_either_order(link: str) -> None:
    """ "X for Y" of two single words is the compound the corpus uses, whichever way round it is written: "fairness
    for evaluation" and "evaluation with fairness" are both "fairness evaluation" (the compound "Y X" alone had made
    one order a compound and the other two facets)."""
    docs = [*(f"Fairness evaluation of {w} classifiers." for w in ("credit", "hiring", "medical")),
            *(f"Evaluation of {w} models." for w in ("speech", "vision", "language", "graph")),
            *(f"Fairness in {w}." for w in ("ranking", "lending")),
            *(f"Filler paper on {w}." for w in ("topology", "sorting", "compilers", "caching", "routing"))]  # fmt: skip
    lex = docs_lexicon(docs)
    for a, b in [("fairness", "evaluation"), ("evaluation", "fairness")]:
        for q in [f"Which papers use {a} {link} {b}?", f"papers on {a} {link} {b}, please"]:
            assert facets(plan(q, lex)) == [["fairness evaluation"]], q


def test_a_fact_is_asked_about_a_coined_name_not_a_common_acronym() -> None:
    """ "What has been done on GANs …?" asks for papers: GANs are in many papers; WaterSIC, in one, is a coined
    name a factoid question asks about."""
    docs = [*(f"GANs for {w} generation." for w in ("image", "video", "audio", "text", "graph", "molecule")),
            "WaterSIC reaches a small rate gap."]  # fmt: skip
    lex = docs_lexicon(docs)
    p = plan("what has been done on GANs for image generation?", lex)
    assert p.intent == "set" and facets(p) == [["gans"], ["image generation"]], p
    assert plan("What rate gap does WaterSIC reach?", lex).intent == "factoid"


def test_x_for_y_is_the_compound_y_x_when_the_corpus_uses_it() -> None:
    """ "policies for robots" is "robot policies", a compound 3 papers use; "safety of robots" stays two facets,
    as "robot safety" is in one paper only, and so does a link after alternatives."""
    docs = [
        *(f"Robot policies for {w} tasks." for w in ("kitchen", "warehouse", "garden")),
        "Robot safety in homes.",
        "Safety of robots near people.",
        "Policies for games.",
        "Robots in space.",
    ]
    lex = docs_lexicon(docs)

    def stemmed(question: str) -> list[list[str]]:
        return [[" ".join(stems(a)) for a in f] for f in facets(plan(question, lex))]

    assert stemmed("papers on policies for robots") == stemmed("robot policies papers") == [["robot polici"]]
    assert stemmed("safety of robots") == [["safeti"], ["robot"]]
    assert stemmed("games or policies for robots") == [["game", "polici"], ["robot"]]  # the link is for both


def test_every_term_cut_from_an_unstated_phrase_must_hold() -> None:
    """The corpus never says "differentially private federated learning", but says both halves often: both
    must hold, as in "federated learning with differential privacy"."""
    docs = [*(f"Differentially private {w} with tight accounting." for w in ("regression", "sampling", "SGD")),
            *(f"Federated learning across {w} clients." for w in ("mobile", "hospital", "edge")),
            "Differential privacy for federated learning.", "Privacy of learning systems.",
            "Learning to rank.", "Learning rates."]  # fmt: skip
    lex = docs_lexicon(docs)
    p = plan("differentially private federated learning", lex)
    assert facets(p) == [["differentially private"], ["federated learning"]]
    assert not any(f.optional for f in p.facets), p


@pytest.mark.parametrize(
    ("spelled_out", "compound"),
    [
        ("Which papers study navigation guided by language?", "Which papers study language-guided navigation?"),
        ("generation augmented with retrieval", "retrieval-augmented generation"),
        ("policies conditioned on language, please", "language-conditioned policies"),
        ("models driven by data", "data-driven models"),
        ("language guided navigation", "language-guided navigation"),  # the compound without its hyphen
        ("language conditioned policies please", "language-conditioned policies"),
    ],
)
def test_a_relating_participle_reads_as_its_compound(spelled_out: str, compound: str) -> None:
    """ "X guided by Y" is "Y-guided X": the same facets, not a facet "guided" and a facet "language"."""
    got, want = read(spelled_out), read(compound)
    assert facets(got) == facets(want), (got, want)
    assert [f.optional for f in got.facets] == [f.optional for f in want.facets]


@pytest.mark.parametrize(
    ("question", "kept", "left_out"),
    [
        ("reinforcement learning but not robotic manipulation", [["reinforcement learning"]], ["robotic manipulation"]),
        ("diffusion models without image generation", [["diffusion models"]], ["image generation"]),
        ("large language models excluding jailbreak attacks", [["large language models"]], ["jailbreak attacks"]),
        ("GANs except image generation", [["gans"]], ["image generation"]),
    ],
)
def test_negation_excludes(question: str, kept: list[list[str]], left_out: list[str]) -> None:
    p = read(question)
    assert facets(p) == kept
    assert [a.lower() for f in p.excluded for a in f.alternatives] == left_out


@pytest.mark.parametrize(
    ("question", "left_out"),
    [
        ("Which papers do not use diffusion models?", ["diffusion models"]),
        ("papers on GANs that do not use image generation", ["image generation"]),
        ("Which papers are not about reinforcement learning?", ["reinforcement learning"]),
    ],
)
def test_a_negated_request_still_excludes(question: str, left_out: list[str]) -> None:
    """A negation whose subject is the papers asked for excludes what follows."""
    p = read(question)
    assert [a.lower() for f in p.excluded for a in f.alternatives] == left_out


@pytest.mark.parametrize(
    ("claim", "topics"),
    [
        (
            "Knowledge distillation does not improve federated learning.",
            ["knowledge distillation", "federated learning"],
        ),
        ("Quantization has no effect on graph neural networks.", ["quantization", "graph neural networks"]),
    ],
)
def test_a_negated_statement_about_a_topic_excludes_nothing(claim: str, topics: list[str]) -> None:
    """ "X does not improve Y" says something about X and Y: a claim to check, not a request to leave Y out; both
    stay topics of the search."""
    p = read(claim)
    assert p.excluded == []
    got = [a.lower() for f in p.facets for a in f.alternatives]
    assert all(t in got for t in topics), got


@pytest.mark.parametrize(
    ("question", "venue", "year", "code", "topic"),
    [
        ("Which papers from 2024 use diffusion models?", None, 2024, None, "diffusion models"),
        ("diffusion models at ICML 2024", "ICML 2024", None, None, "diffusion models"),
        ("papers at ICLR on diffusion models", "ICLR 2024", None, None, "diffusion models"),
        ("diffusion models papers with code", None, None, True, "diffusion models"),
        ("diffusion models that have code available", None, None, True, "diffusion models"),
        ("NeurIPS 2019 papers on GANs with code", "NeurIPS 2019", None, True, "gans"),
        ("papers in 2024 on mixture of experts", None, 2024, None, "mixture of experts"),
    ],
)
def test_filters_in_words(question: str, venue: str | None, year: int | None, code: bool | None, topic: str) -> None:
    p = read(question)
    assert (p.filters.venue, p.filters.year, p.filters.has_code) == (venue, year, code)
    assert facets(p) == [[topic]]


def test_icml_alone_is_ambiguous_and_not_a_filter() -> None:
    p = read("diffusion models at ICML")  # two ICML venues in the corpus: the words cannot choose one
    assert p.filters.venue is None


@pytest.mark.parametrize(
    ("question", "intent", "overview"),
    [
        ("How many papers use diffusion models?", "count", ""),
        ("the number of papers on GANs", "count", ""),
        ("Summarise the papers on time series forecasting", "overview", "summary"),
        ("summarize diffusion models", "overview", "summary"),
        ("Compare the approaches to machine unlearning", "overview", "compare"),
        ("what's new in reinforcement learning?", "overview", "new"),
        ("recent advances in diffusion models", "overview", "new"),
        ("What are the main approaches to federated learning?", "overview", "compare"),
        ("give me an overview of GANs", "overview", "summary"),
        ("What rate gap does WaterSIC reach?", "factoid", ""),
        ("How efficient is WaterSIC?", "factoid", ""),
        ("Which papers use WaterSIC?", "set", ""),
        ("What is the information bottleneck?", "set", ""),
    ],
)
def test_intents(question: str, intent: str, overview: str) -> None:
    p = read(question)
    assert (p.intent, p.overview) == (intent, overview), p


@pytest.mark.parametrize(
    "question",
    ["How many papers use diffusion models?", "Summarise the papers on diffusion models", "diffusion models"],
)
def test_intent_words_are_not_topic(question: str) -> None:
    assert facets(read(question)) == [["diffusion models"]]


@pytest.mark.parametrize(
    ("question", "wrong", "right", "topic"),
    [
        ("whcih papres use diffusoin models", "diffusoin", "diffusion", [["diffusion models"]]),
        ("papers on reinforcment learning", "reinforcment", "reinforcement", [["reinforcement learning"]]),
        ("Which papers study quantizaton?", "quantizaton", "quantization", [["quantization"]]),
        ("federeted learning", "federeted", "federated", [["federated learning"]]),
    ],
)
def test_typos_are_corrected_and_said(question: str, wrong: str, right: str, topic: list[list[str]]) -> None:
    p = read(question)
    assert (wrong, right) in p.corrections
    assert facets(p) == topic
    assert right in p.searched and wrong not in p.searched


@pytest.mark.parametrize(
    ("question", "plain"),
    [
        (
            "Which papers use reinforcment-learning for robotic manipulation?",
            "Which papers use reinforcement learning for robotic manipulation?",
        ),
        (
            "Which papers use reinforcement-lerning for robotic manipulation?",
            "Which papers use reinforcement learning for robotic manipulation?",
        ),
        ("Got refs on large langauge models-based reasoning?", "Got refs on large language models-based reasoning?"),
    ],
)
def test_a_typo_beside_or_inside_a_hyphenated_word_reads_as_typed_right(question: str, plain: str) -> None:
    """A slip inside a hyphenated word is corrected as one typed alone is ("reinforcment-learning" had been kept
    whole: no paper states it), and a slip before one no longer changes how it is read ("large langauge
    models-based reasoning" had kept "models-based" whole: 594 papers cited, F1 0.17 against 0.87; seed 191)."""
    typed, right = plan(question, LEX), plan(plain, LEX)
    assert facets(typed) == facets(right), (typed.facets, right.facets)
    assert typed.corrections and all(w.lower() not in typed.searched.lower() for w, _ in typed.corrections)


def test_a_slip_the_corpus_makes_too_is_corrected() -> None:
    """ "pose estiamtion" was searched as typed: one abstract of the pool has the same slip, so the word was known.
    A rare word one swap of neighbouring letters from a word ten times as common is read as that word; a short one
    (a lower-case acronym such as "odes" beside "does") and an English one ("summarise") are not."""
    docs = [*DOCS, *[f"Pose estimation of object {i}; does it work." for i in range(12)], "Our pose estiamtion.",
            "Neural odes and summarise the summaries.", *[f"Summaries of text {i}." for i in range(12)]]  # fmt: skip
    lex = docs_lexicon(docs)
    p = plan("papers on pose estiamtion", lex, weigh=False)
    assert p.corrections == [("estiamtion", "estimation")] and facets(p) == [["pose estimation"]], p
    assert plan("papers on neural odes", lex, weigh=False).corrections == []
    assert plan("papers that summarise text", lex, weigh=False).corrections == []


@pytest.mark.parametrize(
    "question",
    [
        "Which papers use WaterSIC?",  # a name
        "Which papers study GNNs?",  # an acronym
        "Which papers study quantum computing?",  # English words the corpus does not use
        "Which papers are about weather forecasting?",
        "papers on zebrafish",  # a rare real word
        "papers on GPT-4",
        "papers on SymSpectra",
    ],
)
def test_names_rare_words_and_acronyms_are_never_corrected(question: str) -> None:
    assert read(question).corrections == []


@pytest.mark.parametrize(
    ("question", "facet_list", "excluded", "year", "code"),
    [
        ("Which of those are about time series?", [["time series"]], [], None, None),
        ("only those with code", [], [], None, True),
        ("not the robotics ones", [], ["robotics"], None, None),
        ("which of these are from 2024", [], [], 2024, None),
        ("Which of them uses mutual information?", [["mutual information"]], [], None, None),
        ("among them, which study GANs", [["gans"]], [], None, None),
        # (the previous answer named by a noun for it or by the papers it gave: "From that list, anything on X?" had
        # been read as a question of its own, 0.25 x the one-shot F1 over the compound dev questions; and "ok now
        # only those about X" had gated on "now" beside a topic in a quarter of the papers)
        ("From that list, anything on time series?", [["time series"]], [], None, None),
        ("In your answer, which use time series?", [["time series"]], [], None, None),
        ("Among the papers you just listed, which study GANs?", [["gans"]], [], None, None),
        ("the ones you found, any on time series?", [["time series"]], [], None, None),
        ("ok now only those about time series", [["time series"]], [], None, None),
    ],
)
def test_followups_narrow(question: str, facet_list: list[list[str]], excluded: list[str], year: int | None,
                          code: bool | None) -> None:  # fmt: skip
    p = read(question)
    assert p.followup
    assert facets(p) == facet_list
    assert [a.lower() for f in p.excluded for a in f.alternatives] == excluded
    assert (p.filters.year, p.filters.has_code) == (year, code)


@pytest.mark.parametrize(
    "question",
    [
        "Give me the list of papers on time series",
        "Which papers in this set use GANs?",
        "Which papers could you find on time series?",
        "papers you would recommend on GANs",
        "Have you found papers on time series?",
    ],
)
def test_a_fresh_question_that_names_a_list_or_you_is_no_followup(question: str) -> None:
    assert not read(question).followup


def test_spellings_carry_acronyms_heads_and_word_families() -> None:
    p = read("Which papers use or study neural radiance fields (NeRF)?")
    assert p.facets[0].all_spellings()[:2] == ["neural radiance fields", "NeRF"]
    assert facets(p) == [["neural radiance fields (nerf)"]]
    p = read("Which papers study differential privacy?")
    assert "differentially private" in p.facets[0].all_spellings()
    p = read("jailbreak attacks")
    assert "jailbreak" in p.facets[0].all_spellings()
    p = read("Which papers use or study mixture-of-experts (MoE) models?")
    assert len(p.facets) == 1 and len(p.facets[0].alternatives) == 1
    assert {"mixture-of-experts models", "MoE models", "mixture-of-experts", "MoE"} <= set(p.facets[0].all_spellings())
    p = read("Which papers use conformal prediction?")
    assert not any("conformer" in s or "conformation" in s for s in p.facets[0].all_spellings())


def test_a_modifier_left_without_its_generic_head_is_no_spelling() -> None:
    """ "efficient algorithms" without its head is "efficient", an adjective, which names nothing: on ICML 2024 it had
    matched 583 papers for "Which papers use efficient algorithms?" (39 state the phrase). A noun left alone still
    is one ("jailbreak" of "jailbreak attacks"); the dictionary's word classes tell them apart, not a suffix."""
    from askpapers.rag.read.expand import head_forms

    docs = [
        "Efficient algorithms for sorting.", "An efficient solver.", "Efficient training.",
        "Jailbreak attacks on chat models.", "A jailbreak via role play.", "The jailbreak is universal.",
    ]  # fmt: skip
    lex = docs_lexicon([*DOCS, *docs])
    assert head_forms(["efficient", "algorithms"], lex) == []
    assert head_forms(["robust", "methods"], lex) == []
    assert head_forms(["jailbreak", "attacks"], lex) == ["jailbreak"]


def test_a_long_form_the_question_defines_stays_one_unit() -> None:
    p = read("Which papers use reinforcement learning from human feedback (RLHF)?")
    assert len(p.facets) == 1 and "RLHF" in p.facets[0].all_spellings()


@pytest.mark.parametrize(
    "typed",
    ["reinforcement learning from human feedback (rlhf) pls", "neural radiance fields (nerf)",
     "mixture-of-experts (moe) models?"],
)  # fmt: skip
def test_a_lower_case_acronym_is_defined_too(typed: str) -> None:
    p = read(typed)
    assert len(p.facets) == 1 and len(p.facets[0].groups()[0]) >= 2, p.facets
    cased = read(typed.replace("(rlhf)", "(RLHF)").replace("(nerf)", "(NeRF)").replace("(moe)", "(MoE)"))
    assert [s.lower() for s in p.facets[0].all_spellings()] == [s.lower() for s in cased.facets[0].all_spellings()]


def test_a_word_in_brackets_that_is_no_acronym_stays_apart() -> None:
    assert facets(read("graph neural networks (see) for molecules")) == [["graph neural networks"], ["molecules"]]


def test_tool_use_is_a_term_but_use_is_a_request_word() -> None:
    assert facets(read("papers on tool use")) == [["tool use"]]
    assert facets(read("papers that use diffusion models")) == [["diffusion models"]]


# a corpus in which "search", "architecture", "learning from" and "demonstrations" are common apart, and the terms
# "architecture search" and "learning from demonstrations" are rare (3 papers each): below the share that glues a
# request word before a topic (GLUE), above the one for the head of the topic's phrase (HEAD_GLUE)
HEADS = [
    *[f"We search for policy {i} with a planner." for i in range(16)],
    *[f"A transformer architecture for task {i}." for i in range(16)],
    *[f"Learning from data in setting {i}." for i in range(16)],
    *[f"Human demonstrations of task {i}." for i in range(16)],
    *[f"Neural architecture search finds cells for task {i}." for i in range(3)],
    *[f"Robots learning from demonstrations in kitchen {i}." for i in range(3)],
    *[f"Non-convex optimization of loss {i}." for i in range(3)],
    *[f"One shot learning of class {i}." for i in range(3)],
    *[f"A shot of scene {i}; one of the views." for i in range(16)],
]


@pytest.mark.parametrize(
    "question, topic",
    [
        ("papers on architecture search", "architecture search"),
        ("Which papers use or study neural architecture search?", "neural architecture search"),
        ("any work on architecture search for transformers?", "architecture search"),
        ("Which papers use or study learning from demonstrations?", "learning from demonstrations"),
        ("Which papers use or study one shot learning?", "one shot learning"),  # ("one": a numeral, no request word)
    ],
)  # fmt: skip
def test_a_request_word_heading_a_term_of_the_corpus_is_part_of_the_topic(question: str, topic: str) -> None:
    """A request word after a topic word, ending its phrase ("architecture *search*"), belongs to it when the corpus
    states the pair, if rarely; a phrase is not cut after a lead that ends in a preposition ("learning from")."""
    p = plan(question, docs_lexicon(HEADS), weigh=False)
    assert facets(p)[0] == [topic], facets(p)


def test_non_typed_apart_from_a_word_the_corpus_binds_it_to_is_no_exclusion() -> None:
    p = plan("Which papers use or study non convex optimization?", docs_lexicon(HEADS), weigh=False)
    assert not p.excluded and any("non convex" in a.lower() for f in p.facets for a in f.alternatives), p
    p = plan("papers on optimization but not convex", docs_lexicon(HEADS), weigh=False)
    assert facets(p) == [["optimization"]] and p.excluded, p  # ("not" is no prefix: an exclusion still)


def test_a_request_verb_before_the_topic_or_inside_a_statement_stays_a_request_word() -> None:
    lex = docs_lexicon(HEADS)
    assert facets(plan("papers that search architecture spaces", lex, weigh=False))[0] != ["search architecture"]
    assert ["architecture search"] not in facets(plan("Does the architecture search cells well?", lex, weigh=False))


# a corpus where "using pre-trained" is common (its stems are those of "use pre-training") and pre-training rarer
PRETRAINED = [
    *[f"Using pre-trained encoders for task {i}." for i in range(12)],
    *[f"Pre-training on web data for model {i}." for i in range(4)],
    *[f"Self-supervised learning of features {i}; using self-supervised losses." for i in range(4)],
]


@pytest.mark.parametrize(
    "question, topic",
    [("Which papers use pre-training?", "pre-training"),
     ("papers that use pre-training", "pre-training"),
     ("Which works study self-supervised learning?", "self-supervised learning")],
)  # fmt: skip
def test_the_verb_of_the_request_subject_never_starts_the_topic(question: str, topic: str) -> None:
    """A request verb right after "papers" (or "that") is the request's predicate, however often the corpus
    puts it, or a form of it, before the topic's first word."""
    p = plan(question, docs_lexicon(PRETRAINED), weigh=False)
    assert facets(p)[0] == [topic], facets(p)


def test_a_phrase_the_corpus_never_states_is_cut_into_the_phrases_it_does() -> None:
    p = read("any good stuff on watermarking llm outputs?")
    assert facets(p) == [["watermarking"], ["llm outputs"]]
    assert [f.optional for f in p.facets] == [False, True], "the rarer phrase must hold, the other only ranks"
    p = read("Compare the approaches to LLM unlearning")
    assert p.intent == "overview" and facets(p) == [["llm"], ["unlearning"]]


def test_plan_is_serialisable() -> None:
    d = read("Which papers from 2024 use GANs for image generation, not diffusion models?").to_dict()
    assert d["intent"] == "set" and d["filters"] == {"year": 2024} and len(d["facets"]) == 2 and d["excluded"]


@pytest.mark.parametrize(
    ("typed", "core"),
    [
        ("Which papers use or study the information bottleneck, please?", "information bottleneck"),
        ("got anything on graph neural networks for molecules?", "graph neural networks for molecules"),
        ("Aspirin reduces the risk of stroke.", "Aspirin reduces the risk of stroke"),
        ("papers on GANs for image generation, not diffusion models", "GANs for image generation"),
    ],
)
def test_the_searched_core_drops_only_the_wrapping(typed: str, core: str) -> None:
    from askpapers.rag.read.query import core_text

    assert core_text(read(typed)) == core


# -- topicality: the words of a request, a purpose, a judgement or chat only rank; the topic gates -------------------
@pytest.mark.parametrize(
    ("question", "topic"),
    [("Anyone here worked on federated learning?", "federated learning"),
     ("Any leads on the information bottleneck for the thesis?", "information bottleneck"),
     ("Show me the state-of-the-art in graph neural networks", "graph neural networks"),
     ("whats happening with diffusion models", "diffusion models"),
     ("Hi team, which papers use diffusion models for a course I'm teaching?", "diffusion models")],
)  # fmt: skip
def test_only_the_topic_of_a_framed_question_gates(question: str, topic: str) -> None:
    weighed = plan(question, LEX)
    assert [f.alternatives[0].lower() for f in weighed.facets if not f.optional] == [topic]
    assert all(f.weight < 0.5 for f in weighed.facets if f.optional)
    # read without weighing, the same question has the frame's words as facets of their own (what used to gate)
    assert len(read(question).facets) > 1


def test_the_search_text_of_a_framed_question_is_its_topic() -> None:
    assert core_text(plan("Has anyone here worked on federated learning?", LEX)) == "federated learning"


def test_a_statement_is_searched_whole_however_its_units_are_weighed() -> None:
    """A claim or a bare topic wraps nothing: a unit the topicality model finds unlikely (a number, an acronym of
    another field) is still what is searched; in a question, the same weights leave the request's words out."""
    from askpapers.rag.types import Facet

    claim = "32% of liver transplantation programs required patients to discontinue methadone treatment"
    facets = [
        Facet(("32",), weight=0.16),
        Facet(("liver transplantation",), weight=1.0),
        Facet(("programs required patients",), weight=0.89),
        Facet(("methadone treatment",), weight=0.41),
    ]
    stated = QueryPlan(text=claim, searched=claim, facets=facets, framed=False)
    assert core_text(stated) == claim
    asked = QueryPlan(text=claim + "?", searched=claim + "?", facets=facets, framed=True)
    assert core_text(asked) == "liver transplantation programs required patients"


@pytest.mark.parametrize(
    ("text", "is_framed"),
    [("Has anyone here worked on federated learning?", True), ("Which papers use diffusion models", True),
     ("I need references on the information bottleneck", True), ("papers on GANs", True),
     ("Show me the state-of-the-art in graph neural networks", True), ("please: federated learning", True),
     ("0-dimensional biomaterials lack inductive properties.", False),
     ("ART substantially reduces infectiveness of HIV-positive people.", False),
     ("graph neural networks for molecules", False)],
)  # fmt: skip
def test_a_request_frame_is_told_from_a_statement(text: str, is_framed: bool) -> None:
    assert plan(text, LEX).framed is is_framed


@pytest.mark.parametrize(
    ("question", "expected"),
    [("efficient fine-tuning like LoRA", [["efficient fine-tuning", "lora"]]),  # examples: alternatives of the topic
     ("graph neural networks such as message passing", [["graph neural networks", "message passing"]]),
     ("large language or vision-language models", [["large language models", "vision-language models"]]),
     ("papers that distill large language models", [["distill"], ["large language models"]]),  # head-final cut
     ("Hi team, which papers use diffusion models?", [["team"], ["diffusion models"]])],  # a clause, not a list
)  # fmt: skip
def test_examples_shared_heads_and_clauses_are_read_as_structure(question: str, expected: list[list[str]]) -> None:
    assert facets(read(question)) == expected


def test_how_many_asks_for_a_count_only_of_papers() -> None:
    assert read("How many papers use federated learning?").intent == "count"
    assert read("How many queries does it take to learn halfspaces?").intent != "count"


def test_a_facet_is_as_topical_as_its_most_topical_alternative(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "the safety or alignment of language models": "safety" alone reads as common English, "alignment" as a topic
    of the corpus; the user offered both as the topic, so the facet gates. Each alternative is weighed in the
    question in place of the first."""
    import askpapers.rag.read.resolve as resolve  # (the stage that weighs facets)

    seen: list[list[str]] = []
    weight = {"safety": 0.1, "alignment": 0.9, "language models": 1.0}

    def fake(units: list[str], lexicon: object) -> list[float]:
        seen.append(list(units))
        return [weight.get(u, 0.0) for u in units]

    monkeypatch.setattr(resolve, "topicality", fake)
    weighed = plan("Which papers study the safety or alignment of language models?", LEX)
    gates = {f.alternatives: f.weight for f in weighed.facets if not f.optional}
    assert gates == {("safety", "alignment"): 0.9, ("language models",): 1.0}
    assert ["alignment", "language models"] in seen  # (in the question, in place of "safety")
    weight["alignment"] = 0.2  # neither alternative topical: the facet only ranks
    assert [f.alternatives for f in plan("Which papers study the safety or alignment of language models?", LEX).facets
            if not f.optional] == [("language models",)]  # fmt: skip


# -- where a topic ends, and what gates --------------------------------------------------------------------------
@pytest.mark.parametrize("dash", [" — ", " – ", " - ", "—"])
def test_a_dash_ends_the_topic_before_it(dash: str) -> None:
    """The words after a dash are not cut from one phrase with the topic: "key", which no paper of DOCS states, would
    have to hold as a part of "federated learning key results"."""
    weighed = plan(f"federated learning{dash}key results?", LEX)
    assert [f.alternatives for f in weighed.facets if not f.optional] == [("federated learning",)], weighed.facets
    assert facets(read("papers on fine-tuning")) == [["fine-tuning"]]  # (a hyphen inside a word joins it)


@pytest.mark.parametrize("start", ["where do I start?", "what should I read?", "how do I begin?", "which first?"])
def test_a_comma_before_a_question_word_starts_a_clause(start: str) -> None:
    p = read(f"my advisor asked me to look at diffusion models, {start}")
    topic = next(f for f in facets(p) if "diffusion models" in f)
    assert topic == ["diffusion models"], facets(p)


class _Counts:
    """The joint paper counts of a lexicon, as :func:`rag.read.resolve._goes_with` reads them."""

    def __init__(self, size: int, df: dict[str, int], both: int) -> None:
        self.size, self.df, self.both = size, df, both

    def both_df(self, a: str, b: str) -> int:
        return self.df[a] if a == b else self.both


@pytest.mark.parametrize(
    ("size", "df_unit", "df_main", "both", "goes"),
    [(1000, 2, 2, 2, True),  # two rare words stated together twice: far beyond chance (expected 0.004)
     (1000, 100, 10, 3, False),  # three where one is expected: 3x chance, but chance gives it 8% of the time
     (1000, 100, 10, 9, True),  # nine where one is expected
     (40, 20, 20, 20, False)],  # a word in half the papers beside a topic in half: chance
)  # fmt: skip
def test_a_unit_goes_with_the_main_topic_when_chance_would_rarely_join_them(
    size: int, df_unit: int, df_main: int, both: int, goes: bool
) -> None:
    from askpapers.rag.read.resolve import _goes_with
    from askpapers.rag.types import Facet

    counts = _Counts(size, {"unit": df_unit, "main": df_main}, both)
    assert _goes_with(Facet(("unit",)), Facet(("main",)), counts) is goes  # type: ignore[arg-type]


def test_the_poisson_tail_is_exact_below_its_terms_and_bounded_past_them() -> None:
    import math

    from askpapers.rag.read.resolve import TAIL_TERMS, _poisson_tail

    for k, mu in [(3, 1.0), (2, 0.004), (30, 10.0), (TAIL_TERMS, 20.0)]:
        exact = 1 - sum(math.exp(-mu) * mu**i / math.factorial(i) for i in range(k))
        assert _poisson_tail(k, mu) == pytest.approx(exact, rel=1e-6, abs=1e-15)
    far = _poisson_tail(TAIL_TERMS + 50, 30.0)  # the Chernoff bound: above the tail, still tiny
    assert 0 < far < 1e-40


def test_an_acronym_the_question_spells_out_names_a_topic_not_a_paper() -> None:
    p = plan("What work exists on parameter-efficient fine-tuning (PEFT)?", LEX)
    assert p.intent == "set" and p.facets, p
    assert plan("What is WaterSIC?", LEX).intent == "factoid"


@pytest.mark.parametrize(
    "question",
    ["anything interesting on jailbreaks in this batch?", "Which papers in this collection study jailbreaks?",
     "Do these abstracts cover jailbreaks?"],
)  # fmt: skip
def test_what_a_demonstrative_points_at_is_given_not_asked_for(question: str) -> None:
    """ "this batch", "this collection", "these abstracts" name the collection, not a topic: only jailbreaks gates."""
    weighed = plan(question, LEX)
    assert [f.alternatives for f in weighed.facets] == [("jailbreaks",)], weighed.facets
    assert plan("What do you know about jailbreaks? This benchmark matters.", LEX).facets  # (a statement's "this" too)


@pytest.mark.parametrize("tail", [", if any", " if any", ", if possible", ", unless there are none"])
def test_a_conditional_clause_is_no_alternative_of_the_topic(tail: str) -> None:
    p = read(f"papers related to jailbreaks{tail}")
    assert facets(p)[0] == ["jailbreaks"], facets(p)


def test_a_request_verb_typed_before_the_topic_only_ranks_when_the_corpus_knows_its_family() -> None:
    """ "I'm researching X": the corpus never states "researching X", so the phrase is cut. "researching" is not
    topical, and the corpus uses its family ("research") without X beyond chance: it only ranks. "weather" of
    "weather forecasting", in a corpus with no word of its family, still must hold (nothing matches)."""
    lex = docs_lexicon([*DOCS, "Prior research on robots.", "This research studies learning.", "Research on graphs."])
    # (without "I'm", which sets the verb after it aside whatever the corpus says: see the tests at the end)
    p = plan("Researching jailbreaks. What can you find?", lex)
    assert [f.alternatives for f in p.facets if not f.optional] == [("jailbreaks",)], p.facets
    p = plan("Researching jailbreaks. What can you find?", LEX)  # (no word of the family: as typed)
    assert [f.alternatives for f in p.facets if not f.optional] == [("Researching",), ("jailbreaks",)], p.facets
    p = plan("Which papers are about weather forecasting?", lex)
    assert ("weather",) in [f.alternatives for f in p.facets if not f.optional], p.facets


def test_a_phrasal_particle_heads_no_term() -> None:
    """ "…, to get up to speed": a corpus that states "speed up" must not read "up to speed" as that term (an "X to
    Y" read as "Y X", as "robustness to noise" is "noise robustness"), which then gated the answer. "policies for
    robots" is still "robot policies"."""
    lex = docs_lexicon([*DOCS, "We speed up training.", "Methods to speed up inference.", "A speed up of sampling."])
    p = plan("Papers about jailbreaks, to get up to speed", lex)
    assert "speed up" not in [a.lower() for f in p.facets for a in f.alternatives], p.facets
    assert [f.alternatives for f in p.facets if not f.optional] == [("jailbreaks",)], p.facets
    lex = docs_lexicon([*DOCS, *(f"Robot policies for task {i}." for i in range(3))])
    assert facets(plan("Which papers study policies for robots?", lex, weigh=False)) == [["robots policies"]]


@pytest.mark.parametrize("q", ["hmm, jailbreaks... any papers?", "umm, jailbreaks?", "jailbreaks, erm, anything?"])
def test_an_interjection_is_no_alternative_of_the_topic(q: str) -> None:
    """ "hmm, X… any papers?": the comma read "hmm" as an alternative of X ("hmm" or X), and papers near "hmm" by
    meaning joined the answer. An interjection is a word of the request, never a topic."""
    assert facets(read(q)) == [["jailbreaks"]]
    assert ["weather"] in facets(read("Which papers use weather forecasting?"))


def test_a_real_english_word_is_not_corrected() -> None:
    """ "pointers" is in neither the corpus nor the embedder's vocabulary, but it is common English: it is not
    "corrected" to a corpus word, which then gated the answer. A misspelling is still corrected."""
    lex = docs_lexicon([*DOCS, "Pointer networks for routing.", "A pointer network decodes.", "Pointer generator."])
    p = plan("hey there, got any pointers to jailbreak research?", lex)
    assert p.corrections == [] and [f.alternatives for f in p.facets if not f.optional] == [("jailbreak",)]
    assert plan("papers on jailbrekas", lex).corrections == [("jailbrekas", "jailbreaks")]


# -- held-out request shapes (issue 24): a word beside the topic that the corpus does not pair with it ----------------
PRIOR = [*DOCS, "Prior art in compression.", "We survey prior art on sparse coding.", "Prior art for hashing."]


@pytest.mark.parametrize("tail", ["asap", "lately", "pronto"])
def test_a_word_after_the_topic_that_no_paper_states_only_ranks(tail: str) -> None:
    """ "quantization asap": a word typed after the topic modifies nothing, so, unstated in the corpus, it only ranks
    (before the topic, as "weather" of "weather forecasting", it still must hold)."""
    p = plan(f"Need a reading list about federated learning {tail}", LEX)
    assert [f.alternatives for f in p.facets if not f.optional] == [("federated learning",)], p.facets
    p = plan(f"Need a reading list about mixture-of-experts (MoE) models {tail}", LEX)
    assert [f.alternatives[0].lower() for f in p.facets if not f.optional] == ["mixture-of-experts models (moe)"], p


def test_a_word_typed_just_before_a_defined_acronym_is_no_alternative_of_it() -> None:
    """ "I'm researching mixture-of-experts (MoE) models": "researching" or MoE had flooded the answer."""
    p = read("I'm researching mixture-of-experts (MoE) models. What can you find?")
    assert all(len(f.alternatives) == 1 for f in p.facets), p.facets


def test_the_most_topical_part_of_a_cut_phrase_gates_even_when_another_is_rarer() -> None:
    """ "asked to review jailbreaks": the corpus never states "review jailbreaks"; "review" is the rarer part, but
    the topic is what must hold."""
    lex = docs_lexicon([*DOCS, "A review of learning."])
    p = plan("I've been asked to review jailbreaks — what's here?", lex)
    assert [f.alternatives for f in p.facets if not f.optional] == [("jailbreaks",)], p.facets


def test_a_unit_no_paper_states_with_the_main_topic_only_ranks() -> None:
    """ "prior art on X": the corpus states "prior art", never beside X. Typed apart from the topic it only ranks;
    typed as one phrase with it, both parts still hold (see test_every_term_cut_from_an_unstated_phrase_must_hold)."""
    lex = docs_lexicon(PRIOR)
    p = plan("looking for prior art on federated learning", lex)
    assert [f.alternatives for f in p.facets if not f.optional] == [("federated learning",)], p.facets
    p = plan("looking for prior art on sparse coding", lex)  # (stated together: both hold)
    assert len([f for f in p.facets if not f.optional]) == 2, p.facets


def test_of_two_units_never_stated_together_the_request_s_phrase_only_ranks_in_a_request_only() -> None:
    """ "Which ones discuss X in depth?": the corpus states "depth" (of networks, depth estimation), never with X. In a
    request, of two such units the less topical (or, about as topical, the earlier) only ranks; in a statement (a
    claim to check) every unit is content, and both still hold."""
    lex = docs_lexicon([*PRIOR, "Depth estimation from one image.", "Monocular depth prediction with transformers.",
                        "The depth of networks matters for learning."])  # fmt: skip
    p = plan("Which ones discuss federated learning in depth?", lex)
    assert [f.alternatives for f in p.facets if not f.optional] == [("federated learning",)], p.facets
    from askpapers.rag.read.parse import Unit
    from askpapers.rag.read.resolve import LATER, resolve

    # "prior art" and "federated learning", as topical as each other here, are stated but never together: in a
    # request the earlier only ranks (a request names its topic last); a statement keeps both
    groups = [[Unit(["prior", "art"], ["prior", "art"])], [Unit(["federated", "learning"], ["federated", "learning"])]]
    as_request = resolve(groups, lex, shouted=False, request=True)
    assert [f.optional for f in as_request] == [True, False], as_request
    assert abs(as_request[0].weight - as_request[1].weight) < LATER  # (a near tie: the order decides)
    assert [f.optional for f in resolve(groups, lex, shouted=False, request=False)] == [False, False]


@pytest.mark.parametrize(
    "q", ["trying to catch up on jailbreaks quickly, help?", "jailbreaks, help!", "help: jailbreaks?"]
)
def test_help_is_a_word_of_the_request(q: str) -> None:
    """ "…, help?": after a comma "help" was read as an alternative of the topic, and papers on help joined it."""
    p = plan(q, LEX)
    assert [f.alternatives for f in p.facets if not f.optional] == [("jailbreaks",)], p.facets
    assert all(len(f.alternatives) == 1 for f in p.facets), p.facets


@pytest.mark.parametrize("tail", [", it's urgent", ", I'm in a hurry", ", that's all", ", we're stuck"])
def test_a_contraction_after_a_comma_opens_a_clause_of_its_own(tail: str) -> None:
    """ "please, papers about X, it's urgent": the contraction opens a new clause, so "urgent" is no alternative of
    X (the check had looked for the apostrophe in the normalised word, which has none)."""
    p = read(f"please, papers about jailbreaks{tail}")
    assert p.facets[0].alternatives == ("jailbreaks",), p.facets


def test_two_topical_units_stated_together_are_both_topics_however_rarely() -> None:
    """Two units the corpus states together in a paper are both topics, even no more often than chance ("sampling
    in LLMs": "sample" is in papers on anything). Until 2026-12-06 the less topical of them only ranked; whether a
    word is the request's ("Looking for advances in X, any *leads*?") is now the topicality model's call (see
    test_only_the_topic_of_a_framed_question_gates)."""
    from askpapers.rag.read.expand import build
    from askpapers.rag.read.parse import Unit
    from askpapers.rag.read.resolve import _apart

    clients = ("mobile", "hospital", "edge", "bank", "school", "car", "phone", "sensor")
    fields = ("vision", "speech", "graphs", "text", "tables", "audio", "video", "code", "maps", "games", "music", "art")
    fl = [f"Federated learning across {w} clients." for w in clients]
    bl = [f"We beat strong baselines on {w}." for w in fields]
    lex = docs_lexicon([*DOCS, *fl, *bl, "Federated learning beats baselines on mobile data."])
    topic, other = (build([Unit(w.split(), w.split())], lex) for w in ("federated learning", "baselines"))
    assert lex.both_df("baselines", "federated learning") == 1  # (about 1.6 expected by chance)
    assert _apart([topic, other], [1.0, 0.7], [True, True], [], lex) == set()
    assert _apart([other, topic], [0.7, 1.0], [True, True], [], lex) == set()
    # never stated together: the less topical one is the request's
    lex = docs_lexicon([*DOCS, *fl, *bl])
    assert lex.both_df("baselines", "federated learning") == 0
    assert _apart([topic, other], [1.0, 0.7], [True, True], [], lex) == {1}


# -- the verb a request asks with, and clauses after "and" or a comma (issue 24, held-out wordings) -----------------
@pytest.mark.parametrize(
    "q",
    ["Could you identify papers focused on jailbreaks?", "Has anyone here worked on jailbreaks?",
     "Can you dig up jailbreaks research?", "Could you please pinpoint jailbreaks papers?",
     "Would anyone kindly recommend jailbreaks work?"],
)  # fmt: skip
def test_the_verb_a_request_asks_with_is_no_topic(q: str) -> None:
    """ "Could you *identify* papers focused on X" was planned as "identify" AND X. After an auxiliary and its
    subject ("could you", "has anyone"), the first word past "please", "here" or an adverb is the verb of the
    request, never a topic, whatever the verb."""
    assert [f for f in facets(read(q)) if f != ["focused"]] == [["jailbreaks"]], facets(read(q))


@pytest.mark.parametrize("q", ["Do you have jailbreaks papers?", "Have you got jailbreaks papers?"])
def test_a_topic_after_a_request_verb_stays(q: str) -> None:
    """A stop-word or a request word right after the subject is the verb ("have", "got"): the topic after it stays."""
    assert facets(read(q)) == [["jailbreaks"]]


@pytest.mark.parametrize(
    "q",
    ["I'm writing the related work section and need everything on jailbreaks",
     "Find me abstracts about jailbreaks, ideally with experiments", "jailbreaks, preferably recent, any papers?",
     "Which papers study jailbreaks and how?", "Papers on jailbreaks and I need them today"],
)  # fmt: skip
def test_and_or_a_comma_before_a_clause_joins_no_alternative(q: str) -> None:
    """ "… section and need everything on X" read "section or X", and ", ideally with experiments" read "X or
    ideally": papers on either joined the answer. "and" before a subject or a request verb, and a comma before an
    adverb of the request, open a clause of their own; neither joins its neighbours as alternatives."""
    p = read(q)
    assert all(len(f.alternatives) == 1 for f in p.facets), p.facets
    assert ["jailbreaks"] in facets(p), p.facets


def test_and_or_a_comma_between_topics_still_joins_them() -> None:
    """Two topics joined by "and" or a comma stay alternatives, also when the second starts with a request word or
    looks like an adverb ("new benchmarks", "early stopping")."""
    assert facets(read("papers on jailbreaks and new benchmarks")) == [["jailbreaks", "benchmarks"]]
    assert facets(read("regularization, early stopping or dropout: which papers?")) == [
        ["regularization", "early stopping", "dropout"]
    ]


def test_an_adverb_is_made_from_an_english_word() -> None:
    from askpapers.rag.read.cues import adverb

    assert [w for w in ("ideally", "preferably", "quickly", "basically", "hopefully") if not adverb(w)] == []
    assert [w for w in ("anomaly", "family", "assembly", "only", "poly", "jailbreaks") if adverb(w)] == []


QUALIFIED = [
    *DOCS,
    *(f"Experiments on {w} show clear gains." for w in ("vision", "speech", "graphs", "text", "tables", "audio",
      "video", "code", "maps", "games", "music", "art", "chemistry", "physics", "biology", "robots", "driving",
      "finance", "health", "weather")),
    "Time series forecasting with transformers.", "We study time series forecasting of demand.",
    "Forecasting weather time series.",
]  # fmt: skip


@pytest.mark.parametrize(
    "q",
    ["Find me abstracts about time series forecasting, ideally with experiments",
     "Papers on time series forecasting with experiments please"],
)  # fmt: skip
def test_what_a_request_asks_of_the_papers_only_ranks(q: str) -> None:
    """ "…, ideally with experiments": "experiments", in a quarter of the papers whatever their topic, was read as
    more topical than the topic and gated it (1,087 papers cited for "time series forecasting"). Topicality is
    trained on frames with such qualifiers too (``rag.evaluation.frames.QUALIFIERS``), so the topic gates."""
    p = plan(q, docs_lexicon(QUALIFIED))
    assert [f.alternatives for f in p.facets if not f.optional] == [("time series forecasting",)], p.facets


@pytest.mark.parametrize(
    "q", ["Are there any benchmarks or methods for jailbreaks?", "Any datasets or papers on jailbreaks?"]
)
def test_an_alternative_of_any_kind_of_work_narrows_nothing(q: str) -> None:
    """ "benchmarks or *methods* for X": the request word is an alternative of any kind of work on X, so the group
    it is in narrows nothing; it had been read as "benchmarks" AND X (hallucination: 11 papers of 50)."""
    assert facets(read(q)) == [["jailbreaks"]], facets(read(q))


def test_a_group_of_any_work_stays_when_it_is_all_the_question_asks() -> None:
    assert facets(read("benchmarks or papers on it?")) == [["benchmarks"]]
    assert facets(read("jailbreaks or diffusion models for robots")) == [["jailbreaks", "diffusion models"], ["robots"]]


@pytest.mark.parametrize(
    "q",
    ["I'm researching jailbreaks. What can you find?", "We are investigating jailbreaks - relevant work?",
     "I've been surveying jailbreaks, anything?", "I'd appreciate jailbreaks papers"],
)  # fmt: skip
def test_the_verb_of_a_statement_in_a_request_is_no_topic(q: str) -> None:
    """ "I'm *researching* domain generalization": after a subject and its auxiliary the verb is no topic (the
    corpus states "research domain", so "researching domain" had gated and "generalization" only ranked)."""
    assert facets(read(q)) == [["jailbreaks"]], facets(read(q))
    assert facets(read("I have jailbreaks papers, any more?")) == [["jailbreaks"]]  # ("have" is no auxiliary here)


@pytest.mark.parametrize(
    "q",
    ["I want to learn jailbreaks, which papers should I look at?", "I'd like to understand jailbreaks, any papers?",
     "We need to catch up on jailbreaks. Papers?", "I'm trying to grasp jailbreaks: what work is there?",
     "wanna explore jailbreaks, got papers?"],
)  # fmt: skip
def test_the_verb_after_a_wish_is_no_topic(q: str) -> None:
    """ "I want to *learn* optimal transport" was read "learn optimal" (a phrase of the corpus: "learn optimal
    policies") with "transport" only ranking: no paper on optimal transport. The verb after "want to", "like to",
    "need to" says what the asker will do."""
    assert facets(read(q)) == [["jailbreaks"]], facets(read(q))


@pytest.mark.parametrize(
    "q",
    ["my advisor asked me to collect papers on jailbreaks", "I was asked to gather work on jailbreaks",
     "I'd like you to summarize jailbreaks", "My supervisor told us to compile jailbreaks papers"],
)  # fmt: skip
def test_the_verb_of_a_request_passed_on_is_no_topic(q: str) -> None:
    """ "my advisor asked me to *collect* papers on flow matching" gated on "collect" AND flow matching (F1 0.0
    against 1.0; a probe of 20 new wordings over the 29 conference topics). The verb after "asked me to", "told us
    to", "like you to" is what someone will do, as after a wish."""
    assert [f for f in facets(read(q)) if f not in (["advisor"], ["supervisor"], ["asked"], ["told"])] == [
        ["jailbreaks"]
    ], facets(read(q))


@pytest.mark.parametrize(
    "q", ["For my thesis on jailbreaks, what should I cite?", "Which jailbreaks papers can I skim?"]
)
def test_the_verb_after_an_auxiliary_and_i_is_no_topic(q: str) -> None:
    """ "For my thesis on state space models, what should I *cite*?" gated on "cite" (F1 0.154 against 0.762)."""
    assert [f for f in facets(read(q)) if f != ["thesis"]] == [["jailbreaks"]], facets(read(q))


@pytest.mark.parametrize(
    "q",
    ["Point out the research on jailbreaks please", "Please dig up some papers on jailbreaks", "Look up jailbreaks"],
)
def test_a_phrasal_verb_that_opens_a_request_is_no_topic(q: str) -> None:
    """ "Point out the research on hallucination" had gated on "Point out" (2 papers of 15)."""
    assert facets(read(q)) == [["jailbreaks"]], facets(read(q))


@pytest.mark.parametrize(
    "q",
    ["Gather the literature on jailbreaks.", "Hi, surface the work done on jailbreaks", "Fetch me the papers on "
     "jailbreaks", "Please collate some work on jailbreaks"],
)  # fmt: skip
def test_a_word_opening_a_clause_before_a_determiner_is_a_verb_of_the_request(q: str) -> None:
    """ "Gather the literature on adam" had gated on "Gather" and left "adam" to rank (F1 0.89 -> 0): the verb is
    no unit at all, whatever the corpus says of it."""
    assert facets(read(q)) == [["jailbreaks"]], facets(read(q))


def test_a_topic_opening_a_question_stays_a_topic() -> None:
    assert facets(read("Jailbreaks of the chat models?"))[0] == ["jailbreaks"]
    assert facets(read("Jailbreaks these days?"))[0] == ["jailbreaks"]
    assert facets(read("Jailbreaks any good?"))[0] == ["jailbreaks"]
    assert facets(read("Quantization: the state of the art"))[0] == ["quantization"]


@pytest.mark.parametrize(
    "q", ["What's been written about jailbreaks recently?", "papers on jailbreaks lately", "jailbreaks, preferably?"]
)
def test_an_adverb_after_a_topic_is_not_part_of_it(q: str) -> None:
    """ "written about time series forecasting recently" had read "forecasting recently" as a term (28 papers
    cited, of 3). A term never ends in an adverb; one may start with it ("weakly supervised")."""
    assert [f for f in facets(read(q)) if f != ["written"]] == [["jailbreaks"]], facets(read(q))


def test_a_topic_before_to_is_no_wish() -> None:
    """ "applies planning to autonomous driving": "planning" is a topic here, not a wish, and "autonomous" stays."""
    assert facets(read("work that applies planning to diffusion models")) == [["planning"], ["diffusion models"]]


# -- the request's object: what a request names its topic after -------------------------------------------------
@pytest.mark.parametrize(
    "question, slot",
    [
        ("Papers about adam, to get up to speed", "adam"),
        ("Hey there. interested in audio. Suggestions before my meeting tomorrow?", "audio"),
        ("Hello, what research deals with the information bottleneck for a course?", "information"),
        ("Which papers use reinforcement learning for robotic manipulation?", ""),  # (no preposition of aboutness)
        ("reinforcement learning in robotics", ""),  # (a topic before "in": no request word)
    ],
)
def test_the_request_object_is_the_first_topic_word_after_a_preposition_of_aboutness(question: str, slot: str) -> None:
    from askpapers.rag.read.cues import tokens
    from askpapers.rag.read.parse import topic_slot

    assert topic_slot(tokens(question), set()) == slot


def test_of_two_units_told_apart_the_request_object_is_the_topic() -> None:
    """ "Papers about adam, to get up to speed" gated on "speed" (topicality 0.665) and left "adam" (0.502) to rank:
    the earlier of two units never stated together was taken for the request's."""
    from askpapers.rag.read.expand import build
    from askpapers.rag.read.parse import Unit
    from askpapers.rag.read.resolve import _apart

    docs = [*DOCS, "Speed of a robot arm.", "Top speed of trains."]  # ("speed" never with "jailbreaks")
    lex = docs_lexicon(docs)
    facets_ = [build([Unit(["jailbreaks"], ["jailbreaks"])], lex), build([Unit(["speed"], ["speed"])], lex)]
    weights, stated = [0.6, 0.62], [True, True]
    assert _apart(facets_, weights, stated, [], lex) == {0}  # (the earlier, as a request names its topic last)
    assert _apart(facets_, weights, stated, [], lex, slotted={0}) == {1}


@pytest.mark.parametrize(
    "q",
    ["Papers on jailbreaks for a grant proposal", "jailbreaks papers for my thesis, please",
     "Anything on jailbreaks before my meeting tomorrow?",
     "Recommend some reading on jailbreaks for a course I'm teaching", "interested in jailbreaks. Suggestions? ty",
     "Papers about jailbreaks, to get up to speed"],
)  # fmt: skip
def test_the_askers_purpose_is_no_topic(q: str) -> None:
    """ "Background reading on audio for a grant proposal" had gated on "proposal" beside "audio" (F1 0.95 -> 0)."""
    assert facets(read(q)) == [["jailbreaks"]], facets(read(q))


def test_a_topic_joined_by_for_without_an_article_stays() -> None:
    assert facets(read("papers on jailbreaks for chat assistants")) == [["jailbreaks"], ["chat assistants"]]
    assert facets(read("Which papers study reading comprehension?"))[0] != []


@pytest.mark.parametrize(
    "q", ["I need references on jailbreaks.", "which submissions in this collection involve jailbreaks?",
          "any preprints or manuscripts about jailbreaks?"],
)  # fmt: skip
def test_the_nouns_a_request_names_papers_by_are_no_topic(q: str) -> None:
    """ "which submissions in this collection involve games?" gated on "submissions" and left "games" to rank."""
    assert facets(read(q)) == [["jailbreaks"]], facets(read(q))


def test_a_word_linked_to_itself_is_one_term() -> None:
    """ "sequence to sequence models" was read "sequence" AND "sequence models" (312 papers, of 30 stating it)."""
    docs = [*DOCS, *[f"Sequence to sequence models for task {i}." for i in range(3)],
            *[f"Sequence models for step {i}." for i in range(6)]]  # fmt: skip
    assert facets(plan("Which papers use or study sequence to sequence models?", docs_lexicon(docs), weigh=False)) == [
        ["sequence to sequence models"]
    ]


def test_a_term_that_leads_the_phrase_after_a_link_is_joined_and_the_rest_is_a_facet() -> None:
    docs = [*DOCS, *[f"Out of distribution detection on set {i}." for i in range(3)],
            *[f"Domain generalization {i}; the distribution of data." for i in range(3)]]  # fmt: skip
    p = plan("Which papers use or study out of distribution generalization?", docs_lexicon(docs), weigh=False)
    assert facets(p) == [["out of distribution"], ["generalization"]], facets(p)


def test_a_role_after_as_stays_part_of_the_question() -> None:
    assert ["judge"] in facets(read("Which papers use jailbreaks as a judge?"))


def test_a_term_after_a_link_is_not_cut_where_the_next_unit_is_a_stronger_term() -> None:
    """SciFact: "the expression of transcriptional regulators" was cut "expression of transcriptional" |
    "regulators" (4 papers state the first, 64 "transcriptional regulators")."""
    docs = [*DOCS, *[f"Expression of transcriptional programs in cell {i}." for i in range(3)],
            *[f"Transcriptional regulators of cell type {i}." for i in range(6)],
            *[f"Gene expression in tissue {i}." for i in range(12)]]  # fmt: skip
    p = plan("Foxp3 represses the expression of transcriptional regulators.", docs_lexicon(docs), weigh=False)
    assert ["transcriptional regulators"] in facets(p), facets(p)


def test_a_hyphenated_word_is_counted_as_its_words_typed_apart() -> None:
    lex = docs_lexicon(["Zero-shot transfer of policies.", "A zero shot classifier.", "Shot noise at zero."])
    assert lex.phrase_df("zero shot") == 2 and lex.phrase_df("zero-shot") == 2 and lex.phrase_df("Zero-Shot") == 2
    assert lex.phrase_df("zero") == 3  # (a plain word is still its document frequency)
    ranges = docs_lexicon(["In 1 1 cases.", "A 1-1 split."])
    assert ranges.phrase_df("1 1") == 2 and ranges.phrase_df("1-1") == ranges.df("1-1")  # (a range is no compound)


def test_a_link_is_part_of_a_term_when_the_papers_holding_both_parts_mostly_state_them_linked() -> None:
    """ "structure from motion": the papers holding "structure" and "motion" mostly state them linked (3 of 4), so it
    is one term, though far fewer papers state it than either word (the share of the rarer word's papers, TERM, is
    not reached); "bias" and "language models", held together by 20 papers and linked in 3, are two topics."""
    sfm = [f"Structure from motion recovers camera poses of scene {i}." for i in range(3)]
    sfm += ["The structure of motion capture data."]
    sfm += [f"Motion planning for arm {i}." for i in range(10)] + [f"Protein structure {i}." for i in range(10)]
    bias = [f"We measure bias in language models on benchmark {i}." for i in range(3)]
    bias += [f"Language models show gender bias on task {i}." for i in range(17)]
    bias += [f"Sampling bias in surveys {i}." for i in range(6)] + [f"Language models for code {i}." for i in range(6)]
    other = [f"Paper {i} studies subject{i}." for i in range(150)]  # (so that no word here is common)
    lex = docs_lexicon([*DOCS, *sfm, *bias, *other])
    assert facets(plan("Which papers use structure from motion?", lex, weigh=False)) == [["structure from motion"]]
    got = facets(plan("Which papers study bias in language models?", lex, weigh=False))
    assert got == [["bias"], ["language models"]], got


def test_a_word_written_apart_leads_a_phrase_as_the_word_does() -> None:
    """ "multi modal learning" reads as "multimodal learning" does, one topic: a lead the corpus writes as one word
    ("multimodal") is one word, and a one-word lead never cuts a phrase in two."""
    mm = [f"Multi-modal fusion of sensors {i}." for i in range(3)] + [f"Multimodal models {i}." for i in range(3)]
    mm += ["Multimodal learning of audio and video.", "Multi-modal learning with missing inputs."]
    lex = docs_lexicon([*DOCS, *mm])
    for typed in ("multi modal learning", "multi-modal learning", "multimodal learning"):
        got = facets(plan(f"Which papers use {typed}?", lex, weigh=False))
        assert got == [[typed]], (typed, got)


# -- which facet must hold when the topicality model's weights are given (issue 24) --------------------------------
def _weighed(monkeypatch: pytest.MonkeyPatch, question: str, lex: CorpusLexicon, weights: list[float]) -> list:
    """The facets read from the question, with the topicality model's weights replaced by ``weights`` (in the
    order the reader lists the facets), so these tests check the reading rules, not the model."""
    from askpapers.rag.read import resolve

    monkeypatch.setattr(resolve, "_facet_weights", lambda facets, lexicon, verbs=(): list(weights[: len(facets)]))
    return plan(question, lex).facets


def test_the_head_of_a_phrase_cut_apart_gates_when_it_is_topical(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "language-guided navigation" is stated by no paper, so it is cut into its parts, and the rarer one,
    "language-guided", must hold. Its head, "navigation", used to hold only while it was the most topical facet:
    when the model weighed the modifier above one half too, the answer became every paper saying
    "language-guided" (8 of the compound dev question's 33 papers). The head of a phrase names what it is about."""
    nav = [f"Robot navigation in {w} homes with maps." for w in ("large", "small", "new", "old", "busy", "quiet")]
    lex = docs_lexicon([*DOCS, *nav, "Language-guided grasping of objects.", "Language-guided editing of images."])
    assert lex.phrase_df("language-guided navigation") == 0 < lex.phrase_df("language-guided")
    assert lex.phrase_df("language-guided") < lex.phrase_df("navigation")
    facets_ = _weighed(monkeypatch, "Which papers study language-guided navigation?", lex, [0.7, 0.95])
    read = [(f.alternatives, f.optional) for f in facets_]
    assert read == [(("language-guided",), False), (("navigation",), False)], facets_


def test_a_word_in_most_papers_is_never_the_facet_that_must_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "cooperation with learning": "learning" is in most papers, so it only ranks; when the model weighed it above
    one half and "cooperation" below, "learning" was made the facet that must hold, and the answer was 250 papers
    on learning (the held-out pair "cooperation with learning", 2026-12-06)."""
    coop = ["Cooperation between agents in games.", "Cooperation emerges in populations."]
    lex = docs_lexicon([*DOCS, *coop])
    assert lex.df("learning") >= 0.25 * lex.size
    facets_ = _weighed(monkeypatch, "Which papers use or study cooperation with learning?", lex, [0.26, 0.64])
    held = [f.alternatives for f in facets_ if not f.optional]
    assert held == [("cooperation",)], facets_


def test_a_one_word_alternative_takes_a_modifier_only_from_a_term() -> None:
    """One paper that happens to write "imitation manipulation" does not make "imitation learning or manipulation"
    read as "imitation learning" or "imitation manipulation" (as it did, with "and" read as "or" too)."""
    lex = docs_lexicon([*DOCS, "An imitation manipulation of the data."])
    assert lex.phrase_df("imitation manipulation") == 1
    p = plan("Which papers study imitation learning or manipulation?", lex, weigh=False)
    assert [[a.lower() for a in f.alternatives] for f in p.facets] == [["imitation learning", "manipulation"]]
    # (a head of work takes it, as the corpus need not state it: "backdoor attacks or defenses")
    p = plan("Which papers study backdoor attacks or defenses?", LEX, weigh=False)
    assert [[a.lower() for a in f.alternatives] for f in p.facets] == [["backdoor attacks", "backdoor defenses"]]


@pytest.mark.parametrize("relation", ["based", "guided", "driven"])
def test_a_word_relating_a_common_name_is_no_coined_name(relation: str) -> None:
    """ "GAN-based" names GANs, which many papers use: "what's out there on GAN-based image generation" asks for
    papers. It had been read as a question of fact about a coined name ("GAN-based", a word few papers write), and
    answered "No paper in the corpus mentions GAN-based" (or, for "LLM-based agents", one paper quoted)."""
    docs = [*(f"GAN models for {w} generation." for w in ("image", "video", "audio", "text", "graph", "molecule")),
            f"A GAN-{relation} image generation method.", "WaterSIC reaches a small rate gap.",
            "GEM-FI reaches a small rate gap."]  # fmt: skip
    lex = docs_lexicon(docs)
    for q in [
        f"what's out there on GAN-{relation} image generation",
        f"What is known about GAN-{relation} image generation?",
    ]:
        p = plan(q, lex)
        assert p.intent == "set" and any("image generation" in f for f in facets(p)), (q, p)
    assert plan("What rate gap does WaterSIC reach?", lex).intent == "factoid"
    assert plan("What rate gap does GEM-FI reach?", lex).intent == "factoid"
