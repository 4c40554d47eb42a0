"""Tests for vectorstore.titles: derived display titles, unique titles and code links."""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from askpapers.rag.answerers.chain import load_prompt
from askpapers.vectorstore.key_phrases import FUNCTION_WORDS
from askpapers.vectorstore.parse import parse_paths
from askpapers.vectorstore.text import STOPWORDS, content_stems, tokens
from askpapers.vectorstore.titles import checked_title, code_urls, derive_title, unique_titles
from bench.titles import ICML2024, load, overlap
from tests.fake_openai import FakeOpenAI, Reply

DATA = Path(__file__).resolve().parent.parent / "data" / "icml2026"

GENERIC = {"we", "this", "in", "our", "the", "a", "an", "it", "these", "untitled abstract", "paper", "method"}
GENERIC_STARTS = ("in this paper", "in this work", "this paper", "this work", "we ", "our ", "here ")


@pytest.fixture(scope="module")
def abstracts() -> list[str]:
    papers = parse_paths([DATA]).papers
    assert len(papers) == 38
    return [p.abstract for p in papers]


@pytest.fixture(scope="module")
def titles(abstracts: list[str]) -> list[str]:
    return [derive_title(a) for a in abstracts]


def test_bundled_titles_are_unique(titles: list[str]) -> None:
    assert len(titles) == 38
    assert len({t.lower() for t in titles}) == 38


def test_bundled_titles_are_short_and_not_generic(titles: list[str]) -> None:
    for t in titles:
        assert t, "empty title"
        assert t == t.strip()
        assert "\n" not in t
        assert len(t) <= 100, t
        assert len(t) >= 3, t
        assert t.lower() not in GENERIC, t
        assert not t.lower().startswith(GENERIC_STARTS), t
        assert "*" not in t, t
        assert not t.endswith((".", ",", ";", ":")), t
        assert t[0].isupper() or t[0].isdigit(), t


def test_bundled_titles_come_from_the_abstract(abstracts: list[str], titles: list[str]) -> None:
    for a, t in zip(abstracts, titles, strict=True):
        words = [w.strip("()").lower() for w in t.split()]
        assert any(w and w in a.lower() for w in words), (t, a[:80])


EXPECTED = [
    ("SoftBinary", "SoftBinary Coding (SBC)"),
    ("HIAL", "HIAL"),
    ("ParalESN", "Parallel Echo State Network (ParalESN)"),
    ("WaterSIC", "WaterSIC"),
    ("FedFit", "FedFit"),
    ("InfoGlobe", "InfoGlobe"),
    ("CGTFra", "CGTFra"),
    ("MIRL", "MIRL"),
    ("SymSpectra", "SymSpectra"),
    ("Gated Evidential Mixtures", "Gated Evidential Mixtures (GEM)"),
    ("AD-BTS", "Adaptive Dual-Branch Token Sparsification (AD-BTS)"),
    ("(UMA)", "U-shaped Multilevel Attention module (UMA)"),  # once "Token scarcity with acceptable ..."
]


def name_of(title: str) -> str:
    """The method's name of a derived title: all of it, or the part before the key phrase ("WaterSIC: ...")."""
    return title.split(": ", 1)[0]


@pytest.mark.parametrize(("marker", "expected"), EXPECTED, ids=[e for _, e in EXPECTED])
def test_expected_titles(abstracts: list[str], marker: str, expected: str) -> None:
    matches = [a for a in abstracts if marker in a]
    assert len(matches) == 1, f"{marker!r} should identify exactly one bundled abstract"
    assert name_of(derive_title(matches[0])) == expected


# A short name is followed by the abstract's best key phrase that shares no word with it; a name of four words or
# more says what the method is by itself. (These read as the papers' subjects: looked at with the bundled demo.)
NAMED_AND_DESCRIBED = [
    ("HIAL", "HIAL: Hypergraph Active Learning"),
    ("FedFit", "FedFit: Federated Learning"),
    ("CGTFra", "CGTFra: Consistent inter-variate dependency modeling"),
    ("MIRL", "MIRL: MI-based rewards for visual perception optimization"),
    ("ParalESN", "Parallel Echo State Network (ParalESN)"),
    ("AD-BTS", "Adaptive Dual-Branch Token Sparsification (AD-BTS)"),
]


@pytest.mark.parametrize(("marker", "expected"), NAMED_AND_DESCRIBED, ids=[e for _, e in NAMED_AND_DESCRIBED])
def test_a_short_name_is_followed_by_a_key_phrase(abstracts: list[str], marker: str, expected: str) -> None:
    (abstract,) = [a for a in abstracts if marker in a]
    assert derive_title(abstract) == expected


def test_the_key_phrase_after_a_name_is_a_whole_phrase_of_the_abstract(abstracts: list[str]) -> None:
    described = [(a, t) for a in abstracts if ": " in (t := derive_title(a))]
    assert len(described) >= 10
    for a, t in described:
        name, phrase = t.split(": ", 1)
        assert not set(content_stems(name)) & set(content_stems(phrase)), t  # no word said twice
        assert len(content_stems(phrase)) >= 2, t  # not one generic word ("Experiments")
        assert set(content_stems(phrase)) <= set(content_stems(a)), t  # the abstract's words
        assert not _shape_problems(a, phrase), t  # a noun phrase: no verb of the abstract, no function word last


def test_parse_paths_uses_the_same_titles(abstracts: list[str], titles: list[str]) -> None:
    papers = parse_paths([DATA]).papers
    assert [p.title for p in papers] == titles
    assert all(p.title_derived for p in papers)


def test_derive_title_synthetic_cases() -> None:
    assert name_of(derive_title("We introduce **FooNet**, a fast network. It is fast.")) == "FooNet"
    t = derive_title("In this paper, we study the problem of fairly allocating indivisible goods. We give algorithms.")
    assert "indivisible goods" in t.lower() and not t.lower().startswith(("in this", "we ")), t
    # An acronym on the stop list (LLM) is not taken as the method's name.
    t = derive_title("We propose an LLM-based agent for planning. It works.")
    assert t != "LLM"
    assert "agent" in t.lower()
    assert derive_title("") == "Untitled abstract"


# --- method names: the one the abstract introduces, not one it builds on -------------------------------------------


@pytest.mark.parametrize(
    ("abstract", "expected"),
    [
        # a defined name whose last word is a lower-case head noun
        (
            "Forecasting is hard. We propose a Hierarchical Token Mixer module (HTM) that mixes tokens across "
            "scales. HTM is fast.",
            "Hierarchical Token Mixer module (HTM)",
        ),
        # an acronym the abstract spells out elsewhere stands with its long form
        (
            "Mirror Descent (MD) is a classic method. We introduce MD with adaptive perturbations for games.",
            "Mirror Descent (MD)",
        ),
        # named after the verb, the verb in the passive
        ('A novel algorithm, termed "QuantFill", is proposed. It fills quantization gaps.', "QuantFill"),
    ],
)
def test_the_introduced_method_names_the_paper(abstract: str, expected: str) -> None:
    assert name_of(derive_title(abstract)) == expected


@pytest.mark.parametrize(
    ("abstract", "other"),
    [
        (
            "Large vision-language models such as CLIP are brittle. We propose an adversarial fine-tuning scheme "
            "for CLIP that makes zero-shot classifiers robust under distribution shift.",
            "CLIP",
        ),
        (
            "Low-rank adapters are popular. We present a study of learning rates for Low-Rank Adaptation (LoRA) "
            "and show that adapter matrices need different step sizes.",
            "Low-Rank Adaptation (LoRA)",
        ),
        (
            "We propose an improved version of the NADO algorithm, namely DiNADO (norm-**Di**sentangled "
            "**N**eur**A**lly-**D**ecomposed **O**racles), for controllable generation.",
            "Di",
        ),
    ],
)
def test_a_method_the_abstract_builds_on_is_not_its_title(abstract: str, other: str) -> None:
    assert derive_title(abstract) != other


def test_derive_title_is_deterministic(abstracts: list[str]) -> None:
    assert [derive_title(a) for a in abstracts[:5]] == [derive_title(a) for a in abstracts[:5]]


# --- shape: whole noun phrases, never a clause or a cut fragment (issue 16) --------------------------------------

# The titles the first-sentence cut gave; each is a fragment or a whole clause ("Diffusion models transform noise").
FRAGMENTS = [
    "A general theoretical framework for analyzing how information about past",
    "Data selection schemes based on the training loss alone",
    "Diffusion models transform noise into data",
    "Joint training method",
    "Recent interpretability methods have proposed to translate LLM internal representations",
    "Softmax attention normalizes scores",
    "Which models admit a collapse of the expected information gain",
]


def _verbs_of(abstract: str) -> set[str]:
    """Words the abstract itself uses as verbs: the word right after "we" ("we transform", "we admit")."""
    words = tokens(abstract)
    return {b for a, b in itertools.pairwise(words) if a == "we" and b not in STOPWORDS}


def _shape_problems(abstract: str, title: str) -> list[str]:
    problems = []
    last = title.split()[-1].strip("()").lower()
    if last in FUNCTION_WORDS:
        problems.append(f"ends on the function word {last!r}")
    if "…" in title or len(title) > 100:
        problems.append("cut")
    abstract_stems = set(content_stems(abstract))
    missing = [w for w in content_stems(title) if w not in abstract_stems]
    if missing:
        problems.append(f"words not in the abstract: {missing}")
    verbs = _verbs_of(abstract) & set(tokens(title))
    if verbs:
        problems.append(f"holds {sorted(verbs)}, which the abstract uses as verbs")
    if title.split()[0].lower() in {"we", "this", "our", "which", "in", "recent"}:
        problems.append("starts like a sentence")
    return problems


def test_bundled_titles_are_not_the_old_fragments(titles: list[str]) -> None:
    assert not set(FRAGMENTS) & set(titles)
    clauses = [t for t in titles if {"transform", "normalizes", "admit", "proposed"} & set(tokens(t))]
    assert not clauses


def test_bundled_titles_are_whole_noun_phrases(abstracts: list[str], titles: list[str]) -> None:
    bad = [(t, p) for a, t in zip(abstracts, titles, strict=True) if (p := _shape_problems(a, t))]
    assert not bad


def test_the_expected_information_gain_paper_is_named_by_its_key_phrase(abstracts: list[str]) -> None:
    (abstract,) = [a for a in abstracts if "expected information gain" in a]
    title = derive_title(abstract)
    assert "expected information gain" in title.lower(), title
    assert "admit" not in title.lower()


@pytest.fixture(scope="module")
def icml2024() -> list[tuple[str, str]]:
    if not ICML2024.is_file():
        pytest.skip(f"{ICML2024} is not here (shared data)")
    pairs = load(ICML2024, 500)
    assert len(pairs) == 500
    return pairs


def test_icml2024_titles_are_whole_noun_phrases(icml2024: list[tuple[str, str]]) -> None:
    bad = [(t, p) for _, a in icml2024 if (p := _shape_problems(a, t := derive_title(a)))]
    assert len(bad) <= 5, bad[:10]  # (the abstract's own words only: "we" sometimes precedes a noun, "we LLMs")


def test_icml2024_titles_share_words_with_the_real_ones(icml2024: list[tuple[str, str]]) -> None:
    """Measured with bench/titles.py: the first-sentence cut had recall 0.220, precision 0.370; key phrases give
    0.242 and 0.428 (the titles of named methods are the same: on the 258 abstracts without one, recall went from
    0.294 to 0.336 and precision from 0.333 to 0.445). The second pass (introduced method names, whole phrases,
    specific words) gives recall 0.277, precision 0.459."""
    scores = [overlap(real, derive_title(abstract)) for real, abstract in icml2024]
    recall = sum(r for r, _ in scores) / len(scores)
    precision = sum(p for _, p in scores) / len(scores)
    assert recall >= 0.27, recall
    assert precision >= 0.45, precision


# --- unique_titles ------------------------------------------------------------------------------


def test_unique_titles_adds_suffixes_on_clashes() -> None:
    out = unique_titles([("a", "X"), ("b", "X"), ("c", "x"), ("d", "Y")])
    assert out == {"a": "X", "b": "X (2)", "c": "x (3)", "d": "Y"}
    assert len({v.lower() for v in out.values()}) == 4


def test_unique_titles_respects_taken() -> None:
    out = unique_titles([("a", "Given Title"), ("b", "Other")], taken={"given title"})
    assert out == {"a": "Given Title (2)", "b": "Other"}


def test_unique_titles_suffix_does_not_clash_with_existing_suffix() -> None:
    out = unique_titles([("a", "T"), ("b", "T (2)"), ("c", "T")])
    assert out["a"] == "T"
    assert out["b"] == "T (2)"
    assert out["c"] not in {"T", "T (2)"}
    assert len({v.lower() for v in out.values()}) == 3


def test_unique_titles_no_clash_is_identity() -> None:
    pairs = [(str(i), f"Title {i}") for i in range(10)]
    assert unique_titles(pairs) == dict(pairs)
    assert unique_titles([]) == {}


# --- code_urls ----------------------------------------------------------------------------------


def test_code_urls_strips_trailing_punctuation_and_repeats() -> None:
    text = (
        "Code: https://github.com/a/b. Also (https://github.com/c/d), https://github.com/e/f; "
        "mirror https://www.github.com/g/h.git. Again https://github.com/a/b!"
    )
    assert code_urls(text) == (
        "https://github.com/a/b",
        "https://github.com/c/d",
        "https://github.com/e/f",
        "https://www.github.com/g/h.git",
    )


def test_code_urls_keeps_owner_and_repo_only() -> None:
    assert code_urls("see https://github.com/org/repo/tree/main/src for details") == ("https://github.com/org/repo",)
    assert code_urls("http://GitHub.com/Org/Repo") == ("http://GitHub.com/Org/Repo",)


def test_code_urls_ignores_other_hosts() -> None:
    assert code_urls("https://gitlab.com/a/b and https://example.org/github.com/x") == ()
    assert code_urls("no links at all") == ()


def test_bundled_code_urls(abstracts: list[str]) -> None:
    found = {u for a in abstracts for u in code_urls(a)}
    assert "https://github.com/egorlifar/watersic" in found
    assert "https://github.com/LabRAI/CREDIT" in found
    assert all(not u.endswith((".", ",", ";", ")")) for u in found)


# --- checked_title: a model's title must be grounded in the abstract ------------------------------------------------

ABSTRACT_EIG = (
    "Bayesian experimental design chooses experiments by their expected information gain (EIG). We show when the "
    "expected information gain collapses for models with a discrete latent variable, and give estimators of the "
    "expected information gain that stay accurate in Bayesian experimental design."
)


def test_checked_title_keeps_a_grounded_title() -> None:
    title = "Collapse of expected information gain in Bayesian experimental design"
    assert checked_title(title, ABSTRACT_EIG) == title
    assert checked_title(f'"{title}."\n\nThis title says what the paper does.', ABSTRACT_EIG) == title


@pytest.mark.parametrize(
    "reply",
    [
        "Quantum annealing for expected information gain",  # "quantum", "annealing" are not in the abstract
        "Expected information gain with",  # ends on a function word
        "Gain",  # one word is no title
        "Expected information gain " * 12,  # too long
        "",
    ],
)
def test_checked_title_rejects(reply: str) -> None:
    assert checked_title(reply, ABSTRACT_EIG) is None


# --- LLM titles at ingest, against the fake OpenAI server ----------------------------------------------------------

ABSTRACT_FAB = (
    "Contrastive pretraining of speech encoders improves speaker verification. We pretrain speech encoders on "
    "unlabelled recordings and report lower error rates for speaker verification."
)
GOOD = "Collapse of expected information gain in Bayesian experimental design"
FABRICATED = "Speech encoders for protein folding"  # "protein" and "folding" are not in the abstract


def _llm_settings(tmp_path: Path, url: str) -> Any:
    from askpapers.rag.settings import LLMSettings
    from tests.conftest import make_settings

    return make_settings(
        tmp_path / "store",
        llm=LLMSettings(api_key=SecretStr("sk-test"), base_url=url, model="test-model", timeout=5.0, max_retries=0),
    )


def _by_abstract(body: dict[str, Any]) -> str:
    abstract = body["messages"][-1]["content"]
    return GOOD if abstract == ABSTRACT_EIG else FABRICATED


@pytest.fixture()
def fake_llm() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI().start()
    yield fake
    fake.stop()


def _ingest_two(tmp_path: Path, fake: FakeOpenAI) -> tuple[Any, dict[str, Any]]:
    from askpapers.rag.api import AskPapers

    corpus = tmp_path / "p.jsonl"
    corpus.write_text(
        "\n".join(json.dumps({"id": i, "abstract": a}) for i, a in (("eig", ABSTRACT_EIG), ("fab", ABSTRACT_FAB))),
        encoding="utf-8",
    )
    app = AskPapers(_llm_settings(tmp_path, fake.url))
    report = app.add_files([corpus], progress=False)
    return report, {p.paper_id: p for p in app.papers()}


def test_llm_title_is_kept_when_grounded_and_a_fabricated_one_rejected(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.push(Reply(_by_abstract), Reply(_by_abstract))
    report, papers = _ingest_two(tmp_path, fake_llm)
    assert report.added == 2
    assert len(fake_llm.requests) == 2
    system = {m["content"] for r in fake_llm.requests for m in r["messages"] if m["role"] == "system"}
    assert system == {load_prompt("title")}
    assert papers["eig"].title == GOOD
    assert papers["eig"].title_derived  # still marked as derived: shown as such, never indexed as a given title
    assert papers["fab"].title == derive_title(ABSTRACT_FAB)  # the fabricated title fell back to the offline one
    assert papers["fab"].title_derived


def test_llm_title_is_made_once_per_paper(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.push(Reply(_by_abstract), Reply(_by_abstract))
    _ingest_two(tmp_path, fake_llm)
    report, papers = _ingest_two(tmp_path, fake_llm)  # the same file again: nothing new, nothing asked
    assert report.unchanged == 2
    assert len(fake_llm.requests) == 2
    assert papers["eig"].title == GOOD


def test_failed_llm_request_keeps_the_offline_title(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.push(Reply(status=500, content="down"), Reply(status=500, content="down"))
    report, papers = _ingest_two(tmp_path, fake_llm)
    assert report.added == 2
    assert papers["eig"].title == derive_title(ABSTRACT_EIG)
    assert papers["fab"].title == derive_title(ABSTRACT_FAB)


def test_markup_and_code_never_make_a_title() -> None:
    """Tag names, code and file names in an abstract are not title words (the hostile test paper was titled
    "Window.__xss and stripe camouflage")."""
    hostile = (
        "Zebra stripe camouflage is studied with <script>window.__xss = 1</script> a new model. "
        'We show <img src=x onerror="window.__xss = 2"> that stripes confuse biting flies. '
        "Run train.py or </b> config_file to see it."
    )
    title = derive_title(hostile)
    words = set(title.lower().split())
    assert not words & {"script", "img", "b", "window.__xss", "train.py", "config_file", "onerror", "src"}, title
    assert "stripe camouflage" in title.lower()


# --- issue 16, second pass: cut phrases, markup words, clauses and content-poor titles -----------------------------

_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")


def _ends_on_a_modifier(abstract: str, title: str) -> bool:
    """Whether the title's last word is one the abstract only ever puts before another content word
    ("... with black-box" where the abstract says "black-box access")."""
    last = title.split()[-1]
    if not last[1:].islower():  # a name or an acronym
        return False
    toks = [t.lower() for t in _TOKEN.findall(abstract.replace("*", ""))]
    follows = [b for a, b in itertools.pairwise([*toks, "."]) if a == last.lower()]
    return bool(follows) and all(b[0].isalnum() and b not in FUNCTION_WORDS for b in follows)


def _tex_words(abstract: str, title: str) -> set[str]:
    """Title words the abstract only writes as TeX commands (\\tilde, \\varepsilon, \\textit)."""
    commands = set(re.findall(r"\\([A-Za-z]+)", abstract))
    plain = set(re.findall(r"(?<![\\\w])([A-Za-z]+)", re.sub(r"\\[A-Za-z]+", " ", abstract)))
    return {w for w in tokens(title) if w in {c.lower() for c in commands} - {p.lower() for p in plain}}


def _content_poor(title: str, common: set[str]) -> bool:
    stems = content_stems(title)
    return bool(stems) and all(s in common for s in stems)


@pytest.mark.parametrize(
    ("abstract", "absent"),
    [
        (  # once "Problem of learning Transformer-based sequence models with black-box"
            "We study the problem of learning Transformer-based sequence models with black-box access to their "
            "outputs. A learner may query the oracle. We give algorithms with few queries.",
            "black-box",
        ),
        (  # once "Sensitivity sampling and tilde"
            r"We prove bounds of $\tilde{O}(\varepsilon^{-2})$ on sensitivity sampling for $\ell_p$ regression. "
            r"The $\tilde$ hides logs; $\varepsilon$ is the error and $\ell$ the norm. Sensitivity sampling is simple.",
            "tilde",
        ),
        (  # once "Setup varies with the task": a clause
            "Plasticity loss hurts agents. The specific regularization setup varies with the task. We compare "
            "many setups.",
            "varies",
        ),
    ],
)
def test_derived_title_avoids(abstract: str, absent: str) -> None:
    title = derive_title(abstract)
    assert absent not in title.lower().split(), title


def test_a_name_called_out_runs_over_its_capitalised_words() -> None:
    abstract = (
        "This paper proposes a new reasoning framework, called *Thought Rollback* (TR), allowing LLMs to build "
        "thought structures. TR revises thoughts."
    )
    assert name_of(derive_title(abstract)) == "Thought Rollback (TR)"  # once "Thought"


def _corpus_problems(pairs: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    cut = [t for a, t in pairs if _ends_on_a_modifier(a, t)]
    tex = [t for a, t in pairs if _tex_words(a, t)]
    return cut, tex


def test_bundled_titles_end_on_a_head_word_and_hold_no_markup(abstracts: list[str], titles: list[str]) -> None:
    cut, tex = _corpus_problems(list(zip(abstracts, titles, strict=True)))
    assert not cut
    assert not tex


def test_icml2024_titles_end_on_a_head_word_and_hold_no_markup(icml2024: list[tuple[str, str]]) -> None:
    cut, tex = _corpus_problems([(a, derive_title(a)) for _, a in icml2024])
    assert not cut
    assert not tex


def test_icml2024_titles_are_not_content_poor(icml2024: list[tuple[str, str]]) -> None:
    """A title all of whose words one abstract in ten uses ("Models and DNNs", "Method and speakers",
    "Robust") says nothing about its paper. Measured: 9 of 500 before this pass, 7 after."""
    df = Counter(s for _, a in icml2024 for s in set(content_stems(a)))
    common = {s for s, n in df.items() if n >= len(icml2024) // 10}
    poor = [t for _, a in icml2024 if _content_poor(t := derive_title(a), common)]
    assert len(poor) <= 7, poor


# --- issue 26: names in apposition, a key phrase after a short name, no clauses -------------------------------------


@pytest.mark.parametrize(
    ("abstract", "name"),
    [
        (  # one capitalised word in apposition after the verb (once a key phrase without the name)
            "Training is costly. We present Lumen, a lightweight scheduler for distributed training of "
            "transformers. Lumen cuts idle time by half.",
            "Lumen",
        ),
        (  # once "KV": an acronym the abstract puts before a noun ("KV cache") is a term, not the name
            "Long-context inference loads a large KV cache. To this end, we propose Quest, a query-aware KV cache "
            "selection algorithm. Quest speeds up self-attention.",
            "Quest",
        ),
        (  # once "FCP": a name starts a word
            "To address this vulnerability, we introduce a novel framework Rob-FCP, which executes robust federated "
            "conformal prediction against malicious clients. Rob-FCP keeps coverage.",
            "Rob-FCP",
        ),
    ],
)
def test_we_propose_x_a_gets_a_title_naming_x(abstract: str, name: str) -> None:
    assert name_of(derive_title(abstract)) == name


def test_a_short_name_says_what_the_paper_is_about() -> None:
    abstract = (
        "Sampling from diffusion models is slow. We introduce GRACE, a sampler for diffusion models. GRACE takes "
        "fewer steps than DDPM on diffusion models of images."
    )
    title = derive_title(abstract)
    assert title.startswith("GRACE: "), title  # once "GRACE" alone
    assert "diffusion models" in title.lower(), title


@pytest.mark.parametrize(
    ("abstract", "verb"),
    [
        (  # once "Graph neural networks oversmooth on long stacks"
            "Deep graph neural networks oversmooth on long stacks of message passing layers. We study skip "
            "connections in graph neural networks and their depth.",
            "oversmooth",
        ),
        (  # once "Dense retrieval methods lack robustness"
            "Dense retrieval methods lack robustness to paraphrased queries. We study dense retrieval under "
            "paraphrase and calibration of dense retrieval.",
            "lack",
        ),
    ],
)
def test_a_plural_subjects_verb_ends_the_phrase(abstract: str, verb: str) -> None:
    title = derive_title(abstract)
    assert verb not in title.lower().split(), title


def test_icml2024_titles_are_named_or_phrased_and_never_end_on_a_function_word(
    icml2024: list[tuple[str, str]],
) -> None:
    titles = [derive_title(a) for _, a in icml2024]
    assert not [t for t in titles if t.split()[-1].strip("()").lower() in FUNCTION_WORDS]
    described = [t for t in titles if ": " in t]
    assert len(described) >= 150  # most named methods come with what they are about (measured: 173 of 500)


def test_icml2024_titles_share_more_words_with_the_real_ones(icml2024: list[tuple[str, str]]) -> None:
    """Issue 26: word F1 against the real titles (bench/titles.py) was 0.315 before a key phrase followed short
    names and clauses were split; measured 0.382 after (tuned on ICML 2024 records 500-1500, not these)."""
    f1s = [2 * r * p / (r + p) if r + p else 0.0 for r, p in (overlap(t, derive_title(a)) for t, a in icml2024)]
    assert sum(f1s) / len(f1s) >= 0.37
