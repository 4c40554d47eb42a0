"""Questions that need the query plan, end to end through the Python API, the CLI and the browser: two facets, a
negation, a misspelling, a count, an overview in groups, filters in words, and a follow-up that only filters."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CORPUS

ASKPAPERS = Path(sys.executable).parent / "askpapers"
CASES = {
    "compound": ("Which papers use diffusion models for graph generation?",
                 "Found 1 paper matching “diffusion models” **and** “graph generation”:"),
    "negation": ("papers on large language models but not reinforcement learning",
                 "matching “large language models”, excluding “reinforcement learning”:"),
    "typo": ("whcih papres use diffusoin models", "Showing results for *which papers use diffusion models*."),
    "count": ("How many papers use diffusion models?", "**3 papers** match “diffusion models”:"),
    "overview": ("Compare the approaches to information bottleneck",
                 "**6 papers** match “information bottleneck”, in 2 groups by approach:"),
    "filters": ("information bottleneck papers with code",
                "Found 1 paper matching “information bottleneck” (with code):"),
}  # fmt: skip


def _check(case: str, answer: dict[str, Any]) -> None:
    """The same checks, whichever surface the answer came through (as --json / to_dict)."""
    expected = CASES[case][1]
    assert expected in answer["answer"], (case, answer["answer"][:300])
    for c in answer["citations"]:
        assert all(s in c["abstract"] for s in c["sentences"]) and c["evidence"] == c["sentences"][0]
    plan = answer["plan"]
    if case == "compound":
        assert [c["title"] for c in answer["citations"]] == [
            "Drift Variation Score (DVS): Dynamics of distributional evolution on complex manifolds"
        ]
        assert len(plan["facets"]) == 2
    elif case == "negation":
        assert answer["citations"] and plan["excluded"]
        assert not any(re.search(r"reinforcement learning", c["abstract"], re.I) for c in answer["citations"])
    elif case == "typo":
        assert len(answer["citations"]) == 3 and ("diffusoin", "diffusion") in map(tuple, plan["corrections"])
    elif case == "count":
        assert plan["intent"] == "count" and answer["total"] == 3 == len(answer["citations"])
    elif case == "overview":
        assert plan["intent"] == "overview" and len(answer["citations"]) == 6
        groups = [int(n) for n in re.findall(r"^\*\*.+\*\* \((\d+) papers?\)$", answer["answer"], re.M)]
        assert len(groups) == 2 and sum(groups) == 6
        numbers = [int(n) for n in re.findall(r"^(\d+)\. ", answer["answer"], re.M)]
        assert numbers == list(range(1, 7)), "numbered in reading order, group by group"
    elif case == "filters":
        assert plan["filters"] == {"has_code": True}
        assert all(c["code_urls"] for c in answer["citations"])


@pytest.mark.parametrize("case", CASES)
def test_through_the_python_api(app: Any, case: str) -> None:
    _check(case, app.ask(CASES[case][0], mode="extractive").to_dict())


def test_a_followup_can_only_filter(app: Any) -> None:
    first = app.ask("Which papers use information bottleneck?")
    cited = [c.paper_id for c in first.citations]
    history = [{"role": "user", "content": first.question},
               {"role": "assistant", "content": first.text, "paper_ids": cited}]  # fmt: skip
    narrowed = app.ask("only those with code", history)
    assert narrowed.plan["followup"] and narrowed.plan["filters"] == {"has_code": True}
    assert {c.paper_id for c in narrowed.citations} < {c.paper_id for c in first.citations}
    assert all(c.code_urls for c in narrowed.citations) and narrowed.citations
    excluded = app.ask("not the time series ones", history)
    assert (
        "CGTFra: Consistent inter-variate dependency modeling" not in {c.title for c in excluded.citations}
        and len(excluded.citations) == 5
    )


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, str]:
    from askpapers.vectorstore.pipeline import ingest
    from tests.conftest import make_settings

    settings = make_settings(tmp_path_factory.mktemp("plans-cli") / "store")
    if settings.store.mode != "embedded":
        pytest.skip("the CLI runs against the embedded store here")
    ingest([CORPUS], settings.store, progress=False, embedder=embedder)
    return {**os.environ, "ASKPAPERS_DATA_DIR": str(settings.store.data_dir),
            "ASKPAPERS_COLLECTION": settings.store.collection}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_through_the_cli(cli_store: dict[str, str], case: str) -> None:
    proc = subprocess.run([str(ASKPAPERS), "ask", CASES[case][0], "--json"], capture_output=True, text=True,
                          env=cli_store, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _check(case, json.loads(proc.stdout))


def test_in_the_browser(browser: Any, corpus_settings: Any) -> None:
    from tests.test_ui import ask, last_answer, opened

    with opened(browser, corpus_settings) as page:
        for case, (question, expected) in CASES.items():
            ask(page, question)
            shown = " ".join(last_answer(page).split())
            assert expected.replace("*", "") in shown, (case, shown[:200])  # the Markdown rendered


from tests.test_ui import browser as browser  # noqa: E402  (the module's headless Chromium fixture)
