"""The LLM answer over every matching paper: map-reduce, failed batches, the judge, other languages, streaming and
cost, against the fake OpenAI-compatible server on 127.0.0.1 (tests/fake_openai.py), scripted per step."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from askpapers.rag.answerers.chain import load_prompt
from askpapers.rag.api import AskPapers
from askpapers.rag.settings import AnswerSettings, LLMSettings, Settings
from askpapers.rag.types import Answer, Progress
from tests.conftest import make_settings
from tests.fake_openai import FakeOpenAI, Reply
from tests.test_llm import server as server  # the module's fake OpenAI server

MERGING = "Which papers study model merging?"
DOMAINS = ["vision", "speech", "code", "robotics", "medicine", "law", "chemistry", "finance", "music", "maps",
           "weather", "games", "retrieval"]  # fmt: skip
TECHNIQUES = ["weight averaging", "task arithmetic", "sign election", "Fisher weighting"]
OTHER = ["protein folding", "graph colouring", "sorting networks", "ocean currents", "crop yields", "bird songs",
         "bridge loads", "river deltas", "glacier flow"]  # fmt: skip


def merging_records() -> list[dict[str, str]]:
    """51 abstracts on model merging, each different, and 9 on other things."""
    out = []
    for i in range(51):
        domain, technique = DOMAINS[i % len(DOMAINS)], TECHNIQUES[i % len(TECHNIQUES)]
        out.append({
            "id": f"merge-{i:02d}",
            "title": f"Merger{i:02d}: merging {domain} models by {technique}",
            "abstract": f"Model merging for {domain} models is our subject. Merger{i:02d} merges checkpoints by "
                        f"{technique} with a budget of {i + 2} checkpoints. On {domain} benchmarks it keeps "
                        f"{60 + i % 30} percent of the accuracy of the individual experts without retraining.",
        })  # fmt: skip
    for i, topic in enumerate(OTHER):
        out.append({
            "id": f"other-{i}",
            "title": f"A study of {topic}",
            "abstract": f"We measure {topic} over ten years of field data and report how the seasons change them. "
                        f"The data and code for the {topic} measurements are released.",
        })  # fmt: skip
    return out


@pytest.fixture()
def fake(server: FakeOpenAI) -> FakeOpenAI:
    server.reset()
    return server.quiet_steps()


def store_of(tmp: Path, records: list[dict[str, str]], embedder: Any) -> Settings:
    from askpapers.vectorstore.pipeline import ingest

    corpus = tmp / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    settings: Settings = make_settings(tmp / "store")
    ingest([corpus], settings.store, progress=False, embedder=embedder)
    return settings


@pytest.fixture(scope="module")
def merging(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Settings:
    return store_of(tmp_path_factory.mktemp("merging"), merging_records(), embedder)


def llm_app(base: Settings, fake: FakeOpenAI, **llm: Any) -> AskPapers:
    opts: dict[str, Any] = {"api_key": "sk-test", "base_url": fake.url, "model": "test-model", "timeout": 10.0,
                            "max_retries": 0, "context_chars": 3000}  # fmt: skip
    opts.update(llm)
    return AskPapers(Settings(store=base.store, llm=LLMSettings(**opts), answer=AnswerSettings(max_list=100)))


def numbers_in(text: str) -> list[int]:
    """The paper numbers of a request's context ("[12] Title" lines)."""
    return [int(m.group(1)) for m in re.finditer(r'^\[(\d+)\] .*\n<abstract n="\1">', text, re.MULTILINE)]


def system_of(body: dict[str, Any]) -> str:
    return str(next(m["content"] for m in body["messages"] if m["role"] == "system"))


def notes_citing_all(body: dict[str, Any]) -> str:
    """A map reply: one line of notes citing every paper of its batch."""
    cited = "".join(f"[{n}]" for n in numbers_in(system_of(body)))
    return f"- These papers merge fine-tuned checkpoints into one model {cited}."


def merged_answer(body: dict[str, Any]) -> str:
    """A reduce reply: one claim citing every number in the notes."""
    seen = sorted({int(n) for n in re.findall(r"\[(\d+)\]", system_of(body).split("Merge the notes")[1])})
    return "**Merging checkpoints.** These papers merge model checkpoints " + "".join(f"[{n}]" for n in seen) + "."


def stream(app: AskPapers, question: str, **kw: Any) -> tuple[list[Any], Answer]:
    items = list(app.ask_stream(question, **kw))
    assert isinstance(items[-1], Answer)
    return items[:-1], items[-1]


def test_every_matching_paper_survives_map_reduce(merging: Settings, fake: FakeOpenAI) -> None:
    fake.default("map", Reply(notes_citing_all))
    fake.default("reduce", Reply(merged_answer))
    app = llm_app(merging, fake)
    _, answer = stream(app, MERGING)
    assert answer.mode == "llm" and answer.total == 51
    ids = [c.paper_id for c in answer.citations]
    assert len(ids) == 51 and {i for i in ids if i.startswith("merge-")} == set(ids)
    assert [c.n for c in answer.citations] == list(range(1, 52))
    for c in answer.citations:
        assert c.evidence and c.evidence in c.abstract
    maps, reduces = fake.of("map"), fake.of("reduce")
    assert len(maps) >= 2 and len(reduces) == 1
    template = len(load_prompt("map").format(context="", first=0, last=0, total=0))
    for body in maps:  # every request fits the character budget
        assert len(system_of(body)) - template <= 3000
    read = sorted(n for body in maps for n in numbers_in(system_of(body)))
    assert read == list(range(1, 52)), "every paper is read once, numbered over the whole set"
    assert answer.unsupported == [] and answer.removed_markers == []
    assert "Also matching" not in answer.text, "the synthesis cites every paper"
    assert answer.usage["requests"] == len(fake.requests) and answer.usage["input_tokens"] > 0


def test_failed_and_empty_batches_keep_their_papers(merging: Settings, fake: FakeOpenAI) -> None:
    fake.on("map", Reply(status=500), Reply(""))
    fake.default("map", Reply(notes_citing_all))
    fake.default("reduce", Reply(merged_answer))
    _, answer = stream(llm_app(merging, fake, max_concurrency=1), MERGING)
    assert answer.mode == "llm" and len(answer.citations) == 51
    failed = [n for n in answer.notices if "could not read papers" in n]
    assert len(failed) == 2, answer.notices
    assert any("(500)" in n for n in failed) and any("returned nothing" in n for n in failed)
    assert all(re.search(r"batch \d+ of \d+", n) for n in failed)
    missing = [int(n) for n in re.findall(r"\[(\d+)\]", answer.text.split("Also matching")[1])]
    assert missing, "the papers of the failed batches are listed after the synthesis"
    assert {c.n for c in answer.citations} >= set(missing)


def test_every_batch_failing_falls_back_to_the_full_list(merging: Settings, fake: FakeOpenAI) -> None:
    fake.default("map", Reply(status=500))
    _, answer = stream(llm_app(merging, fake), MERGING)
    assert answer.mode == "extractive" and len(answer.citations) == 51
    assert "unavailable" in answer.notices[-1] and "(500)" in answer.notices[-1]


def test_streaming_shows_text_and_progress_before_the_last_batch(merging: Settings, fake: FakeOpenAI) -> None:
    fake.default("map", Reply(notes_citing_all, hang=0.3))
    fake.default("reduce", Reply(merged_answer))
    app = llm_app(merging, fake, max_concurrency=2)
    seen: list[tuple[int, Any]] = list(enumerate(app.ask_stream(MERGING)))  # (the order things arrived in)
    answer = seen[-1][1]
    assert isinstance(answer, Answer) and answer.mode == "llm"
    progress = [(t, i) for t, i in seen if isinstance(i, Progress)]
    texts = [(t, i) for t, i in seen if isinstance(i, str)]
    read = [t for t, i in progress if i.text.startswith("Read papers")]
    assert len(read) == len(fake.of("map")) >= 2
    assert texts[0][0] < read[-1], "text arrives before the last batch is read"
    assert progress[0][0] < read[-1]
    assert any(t > read[-1] for t, _ in texts), "the reduce step streams after the batches"
    assert answer.text == "".join(i for _, i in texts), "the final answer is the streamed text, checked"


SCALE = "有哪些关于模型合并的论文？"


def test_a_chinese_question_is_searched_in_english_and_answered_in_chinese(merging: Settings, fake: FakeOpenAI) -> None:
    fake.on("condense", Reply(json.dumps({"query": MERGING, "facets": [["model merging"]], "language": "Chinese"})))
    fake.default("map", Reply(notes_citing_all))
    fake.default("reduce", Reply(lambda body: "这些论文研究模型合并 [1][2]。其中一篇使用任务算术 [3]。"))
    _, answer = stream(llm_app(merging, fake), SCALE)
    assert answer.mode == "llm" and len(answer.citations) == 51, "the English query drove retrieval"
    assert "这些论文研究模型合并 [1][2]" in answer.text
    assert all(c.evidence in c.abstract for c in answer.citations)
    reduce = fake.of("reduce")[0]
    assert "write in Chinese" in system_of(reduce) and reduce["messages"][-1]["content"] == SCALE
    assert all(MERGING in json.dumps(b["messages"]) for b in fake.of("map")), "the batches read the English query"
    assert "Also matching" in answer.text  # the synthesis cited 3; the other 48 are listed
    # with no model, the same question gets an honest message
    offline = AskPapers(Settings(store=merging.store)).ask(SCALE)
    assert offline.mode == "extractive" and not offline.citations and "LLM endpoint" in offline.text


def test_condense_without_valid_json_searches_the_question_as_typed(merging: Settings, fake: FakeOpenAI) -> None:
    fake.on("condense", Reply("Sure! The question is about model merging."))
    fake.default("map", Reply(notes_citing_all))
    fake.default("reduce", Reply(merged_answer))
    _, answer = stream(llm_app(merging, fake), MERGING)
    assert answer.mode == "llm" and len(answer.citations) == 51
    assert any("searched as typed" in n for n in answer.notices)


def test_cost_and_time_are_reported(merging: Settings, fake: FakeOpenAI) -> None:
    fake.default("map", Reply(notes_citing_all))
    fake.default("reduce", Reply(merged_answer))
    app = llm_app(merging, fake, price_in=2.0, price_out=8.0)
    answer = app.ask(MERGING)
    u = answer.usage
    assert u["requests"] == len(fake.requests) and u["input_tokens"] == 100 * u["requests"]  # the fake's usage
    assert answer.cost_usd == pytest.approx((u["input_tokens"] * 2.0 + u["output_tokens"] * 8.0) / 1e6)
    data = answer.to_dict()
    assert data["usage"]["requests"] == u["requests"] and data["cost_usd"] == answer.cost_usd
    footer = answer.footer()
    assert f"{u['requests']} requests" in footer and "≈ $" in footer and " s" in footer


# -- the judge ------------------------------------------------------------------------------------------------------
CONFORMAL = "Which papers use conformal prediction for time series?"
JUDGED = [
    {"id": "cp-ts", "title": "Calibrated forecasts", "abstract": "We apply conformal prediction to time series "
     "forecasting. Our intervals keep their coverage under distribution shift."},
    {"id": "cp-ts2", "title": "Adaptive intervals", "abstract": "Conformal prediction gives distribution-free "
     "intervals. We extend it to time series with temporal dependence."},
    {"id": "conformer", "title": "Speech heads", "abstract": "A prediction head for time series of speech frames is "
     "made conformal to the encoder. It improves word error rates."},
    {"id": "quantile", "title": "Quantile forecasts", "abstract": "Predictive intervals for time series come from "
     "quantile regression; we also compare with conformal methods."},
    {"id": "other", "title": "Protein folding", "abstract": "We fold proteins with diffusion models and report "
     "accuracy on benchmarks."},
]  # fmt: skip


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Settings:
    return store_of(tmp_path_factory.mktemp("judge"), JUDGED, embedder)


def verdicts(**by_title: tuple[str, str]) -> Any:
    """A judge reply: the verdict and quote for each paper, by title."""

    def reply(body: dict[str, Any]) -> str:
        system = system_of(body)
        out = []
        for m in re.finditer(r"^\[(\d+)\] (.+)$", system, re.MULTILINE):
            if m.group(2) in by_title:
                match, quote = by_title[m.group(2)]
                out.append({"paper": int(m.group(1)), "match": match, "quote": quote})
        return json.dumps({"verdicts": out})

    return reply


def judged_ids(settings: Settings, fake: FakeOpenAI, reply: Any) -> tuple[list[str], Answer]:
    fake.on("judge", Reply(reply))
    fake.default("answer", Reply("Two papers apply conformal prediction to time series [1][2]."))
    answer = llm_app(settings, fake).ask(CONFORMAL)
    judge = fake.of("judge")
    assert len(judge) == 1 and "Quantile forecasts" in system_of(judge[0]) and "Speech heads" in system_of(judge[0])
    return sorted(c.paper_id for c in answer.citations), answer


def test_without_a_judge_the_extractive_rule_decides(judged: Settings, fake: FakeOpenAI) -> None:
    offline = AskPapers(Settings(store=judged.store)).ask(CONFORMAL)
    assert sorted(c.paper_id for c in offline.citations) == ["conformer", "cp-ts", "cp-ts2"]


def test_a_yes_with_a_fabricated_quote_adds_nothing(judged: Settings, fake: FakeOpenAI) -> None:
    ids, answer = judged_ids(
        judged, fake, verdicts(**{"Quantile forecasts": ("yes", "We use conformal prediction for time series.")})
    )
    assert "quantile" not in ids and "0 added" in " ".join(answer.notices)


def test_a_yes_with_a_real_quote_adds_the_paper(judged: Settings, fake: FakeOpenAI) -> None:
    ids, answer = judged_ids(
        judged, fake, verdicts(**{"Quantile forecasts": ("yes", "we also compare with conformal methods")})
    )
    assert "quantile" in ids
    cite = next(c for c in answer.citations if c.paper_id == "quantile")
    assert cite.evidence in cite.abstract and "conformal methods" in cite.evidence


def test_a_no_removes_a_borderline_paper(judged: Settings, fake: FakeOpenAI) -> None:
    ids, answer = judged_ids(judged, fake, verdicts(**{"Speech heads": ("no", "")}))
    assert ids == ["cp-ts", "cp-ts2"] and "1 removed" in " ".join(answer.notices)


def test_the_judge_can_be_turned_off(judged: Settings, fake: FakeOpenAI) -> None:
    fake.default("answer", Reply("Two papers apply conformal prediction to time series [1][2]."))
    answer = llm_app(judged, fake, judge=False).ask(CONFORMAL)
    assert not fake.of("judge") and len(answer.citations) == 3


@pytest.fixture(scope="module")
def fifty(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Settings:
    """A 50-paper store: the 38 bundled abstracts, the judge's five and seven on model merging."""
    from askpapers.vectorstore.pipeline import ingest
    from tests.conftest import CORPUS

    tmp = tmp_path_factory.mktemp("fifty")
    extra = tmp / "extra.jsonl"
    extra.write_text("".join(json.dumps(r) + "\n" for r in [*JUDGED, *merging_records()[:7]]), encoding="utf-8")
    settings: Settings = make_settings(tmp / "store")
    assert ingest([CORPUS, extra], settings.store, progress=False, embedder=embedder).total_papers == 50
    return settings


def test_the_judge_is_asked_on_a_50_paper_store(fifty: Settings, fake: FakeOpenAI) -> None:
    """Issue 23, item 3: a two-facet question on a 50-paper store really sends a judge request, which shows the
    judge only borderline papers: here "Speech heads", matched without the phrase "conformal prediction" (its words
    apart: "a prediction head ... made conformal"), and not the papers stating both phrases nor those far from them.
    (Until "conformer" no longer met "conformal" apart either, its "conformer prediction head" was the example.) Its
    "no" removes
    the paper. (Before stop 33, "time series" only ranked here, and the judge was shown "Quantile forecasts"; read
    as the second facet it is, that paper misses "conformal prediction" with a model probability of 0.17, below the
    judge's half cut. A judge's quotes are checked in the tests above.)"""
    fake.default("answer", Reply("Two papers apply conformal prediction to time series [1][2]."))
    fake.on("judge", Reply(verdicts(**{"Speech heads": ("no", "")})))
    answer = llm_app(fifty, fake).ask(CONFORMAL)
    judge = fake.of("judge")
    assert len(judge) == 1 and "Speech heads" in system_of(judge[0]), judge
    assert "Calibrated forecasts" not in system_of(judge[0]) and "Protein folding" not in system_of(judge[0])
    assert sorted(c.paper_id for c in answer.citations) == ["cp-ts", "cp-ts2"]
    assert "1 removed" in " ".join(answer.notices)
