"""No input can make the query or ingest path slow: every regular expression and text scan runs in linear time.

A regular expression that backtracks (``(?:[\\s,;]+or)+$`` on a run of commas) takes quadratic time or worse, and
holds the GIL while it runs, so one request could freeze every session. These tests count work, never time it: the
steps a backtracking engine takes for each pattern (``tests/regex_steps.py``, a model of ``re`` that finds the same
spans) and the operations each text function runs (``tests/op_count.py``: lines of the project's code, plus the
text each pattern call scans), on adversarial inputs of n, 2n and 4n units. Linear work adds twice as much on the
second doubling as on the first, quadratic four times; the counts are the same on any machine, busy or not.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import re
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import regex_steps
from tests.op_count import is_linear, ops, project_modules

PACKAGES = ("askpapers.rag", "askpapers.vectorstore", "askpapers.ui")
SKIP_MODULES = {"askpapers.ui.app", "askpapers.ui.app_events", "askpapers.ui.app_tabs"}  # import gradio (slow); no
# pattern of theirs sees user text unbounded
UNITS = [
    ",", " ", "  ,", "a", "a ", "a-", "A", "Ab", "A ", "(", "(a", "((", ")", "[", "[a", "![", "]", "<", "<a ",
    "*", "**", "_", ".", ". ", "a. ", "A. ", "or ", ", or", " and/or", "\u00a0", "1", "1.", "a(", "(AB)", " (ABC)",
    "A B ", "\x1b[", "\x1b]", "\t", "\n", "\n\n", "-", "--", "e.g.", "'", '"', "$", "\\", "/", "://", "http",
    "we propose ", "Which ", "papers ", "use ", "github.com/", "a\u2010b",
]  # fmt: skip
TAILS = ["", "x", "!", ")", "\x00"]
MIN_CHARS = 16  # the smallest input; a pattern with a bounded repeat {0,k} is measured from k + MIN_CHARS on
BOUND_CAP = 32  # repeat bounds above this are lowered to it in the model (same growth, a smaller window)
MODULES = project_modules()


def _modules() -> list[object]:
    """Every module of the packages, the rooms of rag included (rag.read.query, rag.decide.citations, ...)."""
    out = []
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg_name}."):
            if info.name not in SKIP_MODULES:
                out.append(importlib.import_module(info.name))
    return out


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    found = []
    for mod in _modules():
        for name, value in vars(mod).items():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                found.append((f"{mod.__name__}.{name}", value))
    return found


PATTERNS = _patterns()


def _sizes(unit: str, chars: int) -> list[int]:
    n = math.ceil(chars / len(unit))
    return [n, 2 * n, 4 * n]


def _slow_pattern_inputs(pattern: re.Pattern[str], first: bool = False) -> list[str]:
    """The unit and tail of each adversarial input on which ``pattern``'s steps grow faster than linearly."""
    chars = MIN_CHARS + regex_steps.largest_bound(pattern, BOUND_CAP)
    slow = []
    for unit in UNITS:
        for tail in TAILS:
            counts = [regex_steps.steps(pattern, unit * n + tail, BOUND_CAP) for n in _sizes(unit, chars)]
            if not is_linear(counts):
                slow.append(f"{unit!r}*n+{tail!r}: {counts} steps")
                if first:
                    return slow
    return slow


def test_the_patterns_are_collected() -> None:
    names = {n for n, _ in PATTERNS}
    assert len(PATTERNS) > 30
    assert "askpapers.vectorstore.text._BOUNDARY" in names and "askpapers.rag.decide.citations.MARKER" in names


@pytest.mark.parametrize(("name", "pattern"), PATTERNS, ids=[n for n, _ in PATTERNS])
def test_every_pattern_runs_in_linear_time(name: str, pattern: re.Pattern[str]) -> None:
    for unit in UNITS[::7]:  # the model finds what re finds, so its steps are the steps of this pattern
        for tail in TAILS:
            text = unit * 9 + tail
            assert regex_steps.Model(pattern).find_all(text) == [m.span() for m in pattern.finditer(text)], text
    slow = _slow_pattern_inputs(pattern)
    assert not slow, f"{name} grows faster than linearly on: " + "; ".join(slow[:5])


@pytest.mark.parametrize(
    "source",
    [
        r"(?:[\s,;]+or)+$",  # the planner's old connective pattern: a run of commas backtracks quadratically
        r"\s+\(",  # a space run tried from every start
        r"[\w-]+$",  # a word at the end, without the look-behind that _WORD_END has
        r"\b(?:propose|present)\b[^.;:]*?\b([A-Z][\w-]+)\b",  # method_names._AFTER_VERB without its {0,300} bound
    ],
)
def test_the_step_count_catches_a_quadratic_pattern(source: str) -> None:
    pattern = re.compile(source)
    assert regex_steps.Model(pattern).find_all("a, or b") == [m.span() for m in pattern.finditer("a, or b")]
    assert _slow_pattern_inputs(pattern, first=True)


def _text_functions() -> list[tuple[str, Callable[[str], object]]]:
    from askpapers.rag.read import inputs, query
    from askpapers.vectorstore import parse, text, titles
    from tests.test_query import lexicon

    return [
        ("inputs.clean_question", lambda s: inputs.clean_question(s[: inputs.MAX_QUESTION_CHARS * 4])),
        ("query.plan", lambda s: query.plan(s, lexicon())),  # (a lexicon with empty caches, as memos are emptied)
        ("text.printable", text.printable),
        ("text.sentence_spans", text.sentence_spans),
        ("text.content_stems", text.content_stems),
        ("text.acronym_definitions", text.acronym_definitions),
        ("text.phrase_forms", text.phrase_forms),
        ("titles.derive_title", titles.derive_title),
        ("titles.code_urls", titles.code_urls),
        ("parse.normalise", text.normalise),
        ("parse.short_hash", parse.short_hash),
    ]


def _slow_function_inputs(
    fn: Callable[[str], object], chars: int = 64, also: tuple[str, ...] = (), first: bool = False
) -> list[str]:
    from askpapers.vectorstore.errors import AskPapersError

    def call(s: str) -> object:
        try:
            return fn(s)
        except AskPapersError:  # a bounded input refused is fine
            return None

    call("Which papers use sparse attention (SA)? " * 3)  # loads the bundled word lists once, outside the count
    slow = []
    for unit in UNITS:
        for tail in ("", "x", "?"):
            counts = [ops(lambda s=unit * n + tail: call(s), MODULES, also) for n in _sizes(unit, chars)]
            if not is_linear(counts):
                slow.append(f"{unit!r}*n+{tail!r}: {counts} operations")
                if first:
                    return slow
    return slow


@pytest.mark.parametrize(("name", "fn"), _text_functions(), ids=[n for n, _ in _text_functions()])
def test_text_functions_run_in_linear_time(name: str, fn: Callable[[str], object]) -> None:
    """Each call starts with the functions' memos emptied (tests/op_count.clear_caches): a cache hit on the
    repeated input must not stand in for the work."""
    slow = _slow_function_inputs(fn)
    assert not slow, f"{name} grows faster than linearly on: " + "; ".join(slow[:5])


def _sentence_spans_rescanning(text: str) -> list[tuple[int, int]]:
    """A deliberately quadratic sentence splitter: it searches the rest of the text again after each sentence."""
    from askpapers.vectorstore.text import _BOUNDARY

    spans, start = [], 0
    while start < len(text):
        rest = text[start:]
        m = _BOUNDARY.search(rest)
        end = start + (m.start(1) if m else len(rest))
        spans.append((start, end))
        start = end + (len(m.group(1)) if m else 0)
        for _ in rest.split():  # and walks over every remaining word
            pass
    return spans


def test_the_operation_count_catches_a_quadratic_function() -> None:
    assert _slow_function_inputs(_sentence_spans_rescanning, also=(__file__,), first=True)


ADVERSARIAL = st.lists(
    st.sampled_from([*"aA ,;.?!()[]-*_<>/\\\t\n\x1b'\"", " or ", " and ", "and/or", "GNNs", "(RL)"]),
    min_size=1,
    max_size=30,
).map("".join)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ADVERSARIAL)
def test_planning_work_grows_linearly_with_the_question(fragment: str) -> None:
    """Property: a question of up to the limit, built from separators and connectives, takes planning work that
    grows linearly with its length (counted at n, 2n and 4n repeats), and its topic is made of the question's
    own characters."""
    from askpapers.rag.read.inputs import MAX_QUESTION_CHARS, clean_question
    from askpapers.rag.read.query import plan
    from askpapers.vectorstore.errors import QuestionError
    from tests.test_query import lexicon

    prefix = "Which papers use sparse "
    n = max(1, (MAX_QUESTION_CHARS - len(prefix)) // (4 * len(fragment)))
    questions = []
    for repeat in (n, 2 * n, 4 * n):
        try:
            questions.append(clean_question(prefix + fragment * repeat))
        except QuestionError:
            return
    plan(questions[0], lexicon())  # the bundled word lists load once, outside the count
    counts = [ops(lambda q=q: plan(q, lexicon()), MODULES) for q in questions]  # (each lexicon's caches empty)
    assert is_linear(counts), counts
    q = plan(questions[-1], lexicon())
    question = questions[-1]
    assert all(set(a.lower()) <= set(question.lower()) | set(" ") for f in q.facets for a in f.alternatives)
