"""No input can make the query or ingest path slow: every regular expression and text scan runs in linear time.

A regular expression that backtracks (``(?:[\\s,;]+or)+$`` on a run of commas) takes quadratic time or worse, and
holds the GIL while it runs, so one request could freeze every session. These tests time each pattern and each
text function on adversarial inputs of n and 8n units and compare the two times: linear work grows about 8×,
quadratic 64×. Ratios, not absolute times, so a slow or busy machine does not fail them.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

PACKAGES = ("rag", "vectorstore", "ui")
SKIP_MODULES = {"ui.app"}  # imports gradio (slow); it holds no pattern that sees user text unbounded
UNITS = [
    ",", " ", "  ,", "a", "a ", "a-", "A", "Ab", "A ", "(", "(a", "((", ")", "[", "[a", "![", "]", "<", "<a ",
    "*", "**", "_", ".", ". ", "a. ", "A. ", "or ", ", or", " and/or", "\u00a0", "1", "1.", "a(", "(AB)", " (ABC)",
    "A B ", "\x1b[", "\x1b]", "\t", "\n", "\n\n", "-", "--", "e.g.", "'", '"', "$", "\\", "/", "://", "http",
    "we propose ", "Which ", "papers ", "use ", "github.com/", "a\u2010b",
]  # fmt: skip
TAILS = ["", "x", "!", ")", "\x00"]
SMALL, LARGE = 400, 3200  # units; LARGE = 8 × SMALL
NOISE_FLOOR = 0.02  # seconds: below this at the large size, any growth is fine


def _modules() -> list[object]:
    out = []
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        for info in pkgutil.iter_modules(pkg.__path__, prefix=f"{pkg_name}."):
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


def _best(fn: Callable[[], object], repeat: int = 2) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _grows_linearly(fn: Callable[[str], object], unit: str, tail: str) -> tuple[bool, float, float]:
    small, large = unit * SMALL + tail, unit * LARGE + tail
    t_small = _best(lambda: fn(small))
    t_large = _best(lambda: fn(large))
    ok = t_large < NOISE_FLOOR or t_large < 20 * max(t_small, 1e-5)
    if not ok:  # measured again, longer, before it counts: on a busy machine one pair of runs can be preempted
        t_small = _best(lambda: fn(small), 5)
        t_large = _best(lambda: fn(large), 5)
        ok = t_large < NOISE_FLOOR or t_large < 20 * max(t_small, 1e-5)
    return ok, t_small, t_large


def test_the_patterns_are_collected() -> None:
    names = {n for n, _ in PATTERNS}
    assert len(PATTERNS) > 30
    assert "vectorstore.text._BOUNDARY" in names and "rag.citations.MARKER" in names


@pytest.mark.parametrize(("name", "pattern"), PATTERNS, ids=[n for n, _ in PATTERNS])
def test_every_pattern_runs_in_linear_time(name: str, pattern: re.Pattern[str]) -> None:
    slow = []
    for unit in UNITS:
        for tail in TAILS:
            ok, t_small, t_large = _grows_linearly(lambda s: (pattern.search(s), pattern.findall(s)), unit, tail)
            if not ok:
                slow.append(f"{unit!r}*n+{tail!r}: {t_small * 1000:.1f} → {t_large * 1000:.1f} ms")
    assert not slow, f"{name} grows faster than linearly on: " + "; ".join(slow[:5])


def _text_functions() -> list[tuple[str, Callable[[str], object]]]:
    from rag import inputs, query
    from tests.test_query import LEX
    from vectorstore import parse, text, titles

    return [
        ("inputs.clean_question", lambda s: inputs.clean_question(s[: inputs.MAX_QUESTION_CHARS * 4])),
        ("query.plan", lambda s: query.plan(s, LEX)),
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


@pytest.mark.parametrize(("name", "fn"), _text_functions(), ids=[n for n, _ in _text_functions()])
def test_text_functions_run_in_linear_time(name: str, fn: Callable[[str], object]) -> None:
    from vectorstore.errors import AskPapersError

    def call(s: str) -> object:
        try:
            return fn(s)
        except AskPapersError:  # a bounded input refused is fine
            return None

    slow = []
    for unit in UNITS:
        for tail in ("", "x", "?"):
            ok, t_small, t_large = _grows_linearly(call, unit, tail)
            if not ok:
                slow.append(f"{unit!r}*n+{tail!r}: {t_small * 1000:.1f} → {t_large * 1000:.1f} ms")
    assert not slow, f"{name} grows faster than linearly on: " + "; ".join(slow[:5])


ADVERSARIAL = st.lists(
    st.sampled_from([*"aA ,;.?!()[]-*_<>/\\\t\n\x1b'\"", " or ", " and ", "and/or", "GNNs", "(RL)"]), max_size=30
).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ADVERSARIAL, st.integers(min_value=1, max_value=40))
def test_planning_any_long_question_is_quick(fragment: str, repeat: int) -> None:
    """Property: a question of up to the limit, built from separators and connectives, plans in well under a
    second, and its topic is made of the question's own characters."""
    from rag.inputs import MAX_QUESTION_CHARS, clean_question
    from rag.query import plan
    from tests.test_query import LEX
    from vectorstore.errors import QuestionError

    raw = ("Which papers use sparse " + fragment * repeat)[:MAX_QUESTION_CHARS]
    try:
        question = clean_question(raw)
    except QuestionError:
        return
    t = time.perf_counter()
    q = plan(question, LEX)
    assert time.perf_counter() - t < 1.0
    assert all(set(a.lower()) <= set(question.lower()) | set(" ") for f in q.facets for a in f.alternatives)
