"""Evidence a reader can use: sentences that survive real abstracts, and quotes of at most about 400 characters.

Real exports drop the space after a full stop ("…design.Traditional …": 14% of one conference's abstracts); there
the whole abstract used to be one "sentence", quoted whole as evidence. A sentence that really is long is trimmed
around the words that matched, with "…", and the part shown is what is checked to be verbatim.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from askpapers.rag.types import Citation
from askpapers.vectorstore.text import QUOTE_MOST, content_stems, elide, sentence_spans, sentences, trim
from askpapers.vectorstore.types import Paper

GLUED = (
    "Sparse attention is costly for long documents and hard to tune in practice.Traditional methods prune heads "
    "by hand, which fails on new domains.In this work we propose a learned sparse attention router for long "
    "documents.Our router matches dense attention at a third of the cost on six benchmarks."
)


def test_a_missing_space_after_a_full_stop_still_ends_a_sentence() -> None:
    assert sentences(GLUED) == [
        "Sparse attention is costly for long documents and hard to tune in practice.",
        "Traditional methods prune heads by hand, which fails on new domains.",
        "In this work we propose a learned sparse attention router for long documents.",
        "Our router matches dense attention at a third of the cost on six benchmarks.",
    ]
    assert sentences("The bound is tight.A simple proof follows.") == ["The bound is tight.", "A simple proof follows."]
    # after inline math too
    assert sentences("We work in $SL(n, \\mathbb{R})$.Invariant integration follows.") == [
        "We work in $SL(n, \\mathbb{R})$.",
        "Invariant integration follows.",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Accuracy rises from 0.5 to 0.93 on CIFAR-10.",
        "We test on e.g. ImageNet, i.e. The standard benchmark, as in Smith et al. Their setup.",
        "As Fig. 2 and Figs. 3 to 5 show, Eq. 4 holds, see Sec. 3 and Tab. 1 for more.",
        "Code is at https://github.com/Org/Repo.Tool and at www.Example.org for all.",
        "Contact jane.doe@Lab.org or see the nn.Module(x) and torch.Tensor.Then calls.",
        "The U.S. Army and the U.K. Met Office share data.",
        "The error is bounded by $\\epsilon. N$ samples suffice.",
        "Under $p < 0.5. The$ rate holds.",
    ],
)
def test_no_split_inside(text: str) -> None:
    assert sentences(text) == [text]


def test_spans_stay_verbatim_and_ordered_when_sentences_touch() -> None:
    spans = sentence_spans(GLUED)
    assert [GLUED[s:e] for s, e in spans] == sentences(GLUED)
    assert spans[0][0] == 0 and spans[-1][1] == len(GLUED)
    for (_, e), (s, _) in itertools.pairwise(spans):
        assert e <= s and not GLUED[e:s].strip()


LONG = (
    "Moreover, "
    + ", ".join(f"the {w} variant of the baseline" for w in ("first", "second", "third", "fourth", "fifth"))
    + ", together with careful tuning of every hyper-parameter across the whole grid of settings that earlier work "
    "explored at great cost, and with many more steps of warm-up than usual, shows that the graph rewiring step "
    "alone closes the heterophily gap on all nine benchmarks, while "
    + ", ".join(f"the {w} ablation of the model" for w in ("first", "second", "third", "fourth", "fifth", "sixth"))
    + " only partly closes it."
)


def test_a_long_sentence_is_trimmed_around_its_matched_words() -> None:
    assert len(LONG) > 600 and sentences(LONG) == [LONG]
    quote = trim(LONG, content_stems("graph rewiring heterophily"))
    assert len(quote) <= QUOTE_MOST and quote in LONG
    assert "graph rewiring step alone closes the heterophily gap" in quote
    assert quote == quote.strip() and not quote.endswith(",")
    shown = elide(LONG, quote)
    assert shown.startswith("…") and shown.endswith("…") and shown.strip("…") == quote
    # a short sentence, or no long one, is left whole
    assert trim("A short sentence.", ["short"]) == "A short sentence."
    assert elide(GLUED, sentences(GLUED)[1]) == sentences(GLUED)[1]
    # one enormous word is cut, and stays a substring
    blob = "x" * 1000
    assert trim(blob, []) == blob[:QUOTE_MOST]


def test_trim_work_is_linear_in_the_words() -> None:
    """Two pointers and one growth pass: doubling a sentence at most about doubles the stems looked up."""
    from askpapers.vectorstore import text

    calls = 0
    real = text.stems

    def counting(s: str) -> list[str]:
        nonlocal calls
        calls += 1
        return real(s)

    text.stems = counting  # type: ignore[assignment]
    try:
        counts = []
        for n in (200, 400, 800):
            calls = 0
            trim(" ".join(["word"] * n + ["graph"] + ["word"] * n) + ".", ["graph"])
            counts.append(calls)
    finally:
        text.stems = real  # type: ignore[assignment]
    assert counts[1] <= 2 * counts[0] + 2 and counts[2] <= 2 * counts[1] + 2


def _paper(abstract: str, pid: str = "p1") -> Paper:
    return Paper(paper_id=pid, title="Rewiring graphs", abstract=abstract, venue="ICML", year=2024)


def test_a_citation_keeps_the_trimmed_part_verbatim_and_shows_the_cut() -> None:
    p = _paper("We study heterophily. " + LONG + " We release code.")
    c = Citation.from_paper(1, p, LONG, 0.5, content_stems("graph rewiring"))
    assert len(c.evidence) <= QUOTE_MOST and c.evidence in p.abstract and "graph rewiring" in c.evidence
    assert c.sentences == [c.evidence]
    assert c.quotes() == [f"…{c.evidence}…"]
    whole = Citation.from_paper(2, p, "We release code.", 0.5)
    assert whole.quotes() == ["We release code."]
    with pytest.raises(ValueError):
        Citation.from_paper(3, p, "Not in the abstract.", 0.5)


def test_answers_quote_single_sentences_of_glued_and_long_abstracts(
    tmp_path: Path, fresh_settings: Any, embedder: Any
) -> None:
    """End to end (the papers in memory): no quote in a list answer runs past about 400 characters, each verbatim."""
    from askpapers.rag.api import AskPapers
    from askpapers.rag.retrieve.memory_index import MemoryIndex

    records = [
        {"id": "g1", "title": "Learned Sparse Routers", "abstract": GLUED},
        {"id": "g2", "title": "Rewiring for Heterophily", "abstract": "We study sparse attention. " + LONG},
        {
            "id": "g3",
            "title": "Sparse Attention Kernels",
            "abstract": "Sparse attention kernels for GPUs.They run fast.We give code at https://x.org/a.b for all.",
        },
    ]
    src = tmp_path / "glued.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    app = AskPapers(fresh_settings, warm=False, index=MemoryIndex.from_files([src], embedder))
    answer = app.ask("Which papers use sparse attention?")
    assert answer.found and {c.paper_id for c in answer.citations} >= {"g1", "g2", "g3"}
    for c in answer.citations:
        for s in c.sentences:
            assert s in c.abstract and len(s) <= QUOTE_MOST
    quotes = re.findall(r"“(.*?)”", answer.text)
    assert quotes and max(len(q) for q in quotes) <= QUOTE_MOST + 2  # (with the "…" marks)
    by_id = {c.paper_id: c for c in answer.citations}
    assert by_id["g1"].evidence == "Sparse attention is costly for long documents and hard to tune in practice."
    assert by_id["g3"].evidence == "Sparse attention kernels for GPUs."
