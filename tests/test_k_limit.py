"""The limit on listed papers (``k``) cuts the text and the citations together and says so; the count is the
true total; example questions come from the store's own corpus; abstracts' emphasis renders, and stays inert."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from askpapers.vectorstore.errors import QuestionError
from tests.conftest import make_settings

IB = "Which papers use information bottleneck?"
HABITATS = ["dry scrub", "coastal heath", "island forest", "wet gullies", "burnt woodland"]


def quokka_corpus(path: Path, n: int) -> Path:
    """``n`` abstracts that all state "quokka foraging", one with LaTeX and one with Markdown emphasis."""
    rows = []
    for i in range(n):
        extra = " It runs 2.2$\\times$ faster than manual counts." if i == 0 else ""
        name = "**QuokkaNet**, a tracker" if i == 1 else f"a survey of site {i}"
        rows.append({
            "id": f"q{i}", "title": f"{'QuokkaNet' if i == 1 else f'Plot {i}'}: quokka foraging in {HABITATS[i % 5]}",
            "abstract": f"We study quokka foraging in {HABITATS[i % 5]} plot {i} with {name}.{extra} "
                        f"Quokka foraging peaks at dusk in plot {i}.",
        })  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def quokka_app(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    """The quokka corpus in memory (answers read papers through the index interface alone)."""
    from askpapers.rag.api import AskPapers
    from askpapers.rag.retrieve.memory_index import MemoryIndex
    from askpapers.rag.settings import AnswerSettings, Settings

    d = tmp_path_factory.mktemp("quokka")
    settings = make_settings(d / "store")
    index = MemoryIndex.from_files([quokka_corpus(d / "q.jsonl", 24)], embedder)
    return AskPapers(Settings(store=settings.store, answer=AnswerSettings(max_list=2)), index=index)


def markers(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"\[(\d+)\]", text)}


def test_k_cuts_the_text_and_the_citations_and_says_showing(app: Any) -> None:
    answer = app.ask(IB, k=2, mode="extractive")
    assert [c.n for c in answer.citations] == [1, 2]
    assert markers(answer.text) == {1, 2}, "the text lists only the papers it cites"
    assert "Showing 2 of 6 papers" in answer.text and answer.total == 6 and answer.more == 4
    assert "2 of 6 cited" in answer.footer()
    full = app.ask(IB, mode="extractive")
    assert "Showing" not in full.text and full.more == 0 and "6 cited" in full.footer()


def test_an_overview_too_small_to_group_says_showing_too(app: Any) -> None:
    answer = app.ask("Give me an overview of papers on graphs", k=2, mode="extractive")
    assert len(answer.citations) == 2 and answer.total > 2
    assert f"Showing 2 of {answer.total} papers" in answer.text
    assert markers(answer.text) == {1, 2}


@pytest.mark.parametrize("k", [0, -3, 1001, 2.5, "abc", True])
def test_out_of_range_k_is_rejected_with_the_range(app: Any, k: Any) -> None:
    with pytest.raises(QuestionError, match=r"k must be a whole number from 1 to 1000"):
        app.ask(IB, k=k)


def test_k_may_exceed_the_default_list_length(quokka_app: Any) -> None:
    """ASKPAPERS_MAX_LIST is the default, not a ceiling: "show all" is k = the total."""
    answer = quokka_app.ask("Which papers study quokka foraging?", mode="extractive")
    assert len(answer.citations) == 2 and answer.total == 24 and "Showing 2 of 24 papers" in answer.text
    every = quokka_app.ask("Which papers study quokka foraging?", k=answer.total, mode="extractive")
    assert len(every.citations) == 24 and markers(every.text) == set(range(1, 25)) and "Showing" not in every.text


def test_the_count_is_the_true_total_beyond_the_phrase_pool(quokka_app: Any) -> None:
    """24 abstracts state the phrase; the phrase search once read only 5 × max_list (10) of them."""
    answer = quokka_app.ask("How many papers study quokka foraging?", mode="extractive")
    assert answer.total == 24 and "**24 papers**" in answer.text


def test_example_questions_come_from_the_corpus_and_are_answered(quokka_app: Any) -> None:
    examples = quokka_app.example_questions()
    assert examples and not any("WaterSIC" in q or "information bottleneck" in q for q in examples)
    assert any("quokka foraging" in q for q in examples)
    assert any("QuokkaNet" in q for q in examples), "a coined name one paper states"
    for q in examples:
        assert quokka_app.ask(q, mode="extractive").found, q


def test_bundled_examples_are_answered(app: Any) -> None:
    examples = app.example_questions()
    assert len(examples) == 4
    for q in examples:
        assert app.ask(q, mode="extractive").found, q


def test_emphasis_in_abstracts_renders_and_everything_else_stays_text() -> None:
    from askpapers.ui.render import answer_html, inline_html

    shown = inline_html("we present **SymSpectra**, a *new* <img src=x onerror=alert(1)> [x](javascript:alert(1))")
    assert "<strong>SymSpectra</strong>" in shown and "<em>new</em>" in shown
    assert "<img" not in shown and "&lt;img" in shown and "<a" not in shown
    answer = answer_html("1. **T** [1]: “we present \\*\\*SymSpectra\\*\\*, \\<b\\>x\\</b\\>”", 1)
    assert "<strong>SymSpectra</strong>" in answer and "&lt;b&gt;" in answer and "<b>" not in answer
    assert 'href="#source-1"' in answer


def test_the_quote_stays_verbatim_in_the_answer(quokka_app: Any) -> None:
    answer = quokka_app.ask("Which papers study quokka foraging?", k=24, mode="extractive")
    c = next(c for c in answer.citations if c.paper_id == "q1")
    assert "**QuokkaNet**" in c.abstract and all(s in c.abstract for s in c.sentences)
    assert "**QuokkaNet**" in json.dumps(answer.to_dict())
