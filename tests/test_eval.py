"""Metrics on hand-computed examples, and ``askpapers eval`` end to end on tiny gold files."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from askpapers.rag.evaluation.metrics import ndcg_at, prefix, prf, recall_at
from tests.conftest import CORPUS
from tests.test_query import read


def test_prf() -> None:
    assert prf({"a", "b", "c", "d"}, {"a", "b", "e"}) == pytest.approx((0.5, 2 / 3, 4 / 7))
    assert prf(set(), set()) == (1.0, 1.0, 1.0)  # abstaining on a none question is right
    assert prf({"a"}, set()) == (0.0, 0.0, 0.0)
    assert prf(set(), {"a"}) == (0.0, 0.0, 0.0)
    # an "acceptable" / unknown paper counts neither way
    assert prf({"a", "x"}, {"a"}, {"x"}) == (1.0, 1.0, 1.0)


def test_recall_at() -> None:
    ranked = ["a", "x", "b", "y", "c"]
    assert recall_at(ranked, {"a", "b", "c", "d"}, 2) == 0.25
    assert recall_at(ranked, {"a", "b", "c", "d"}, 5) == 0.75
    assert recall_at(ranked, set(), 5) == 1.0


def test_ndcg_at() -> None:
    # relevant at ranks 1 and 3 of 2 relevant: (1 + 1/log2(4)) / (1 + 1/log2(3))
    expected = (1 + 1 / 2) / (1 + 1 / math.log2(3))
    assert ndcg_at(["a", "x", "b"], {"a": 1.0, "b": 1.0}, 10) == pytest.approx(expected)
    assert ndcg_at(["a", "b"], {"a": 1.0, "b": 1.0}, 10) == pytest.approx(1.0)
    assert ndcg_at(["x", "y"], {"a": 1.0}, 10) == 0.0
    assert ndcg_at(["b", "a"], {"a": 2.0, "b": 1.0}, 10) == pytest.approx(
        (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    )
    assert ndcg_at(["x", "a"], {"a": 1.0}, 1) == 0.0  # cut at k


def test_prefix_matching() -> None:
    text = "x" * 100
    assert prefix(text) == "x" * 80 and prefix("short") == "short"


def test_topic_spellings() -> None:
    def spellings(question: str) -> list[list[str]]:
        return [f.all_spellings() for f in read(question).facets]

    assert spellings("Which papers use or study the information bottleneck?") == [["information bottleneck"]]
    assert spellings("Which papers use or study neural radiance fields (NeRF)?") == [["neural radiance fields", "NeRF"]]
    assert spellings("Which papers use or study mixture-of-experts (MoE) models?")[0][:4] == [
        "mixture-of-experts models", "MoE models", "mixture-of-experts", "MoE"
    ]  # fmt: skip
    assert {"backdoor attacks", "backdoor defenses"} <= set(spellings("backdoor attacks or defenses")[0])
    assert spellings("graph neural networks or transformers") == [["graph neural networks", "transformers"]]
    assert spellings("state space models") == [["state space models"]]  # no hyphenated term: keep the head noun


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).parent / "askpapers")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "ASKPAPERS_DATA_DIR": str(tmp_path / "main")}
    proc = subprocess.run([exe, "eval", *args, "--json"], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_eval_dev_questions_end_to_end(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    wrong_none = {"id": "n", "kind": "none", "question": "Which papers are about reservoir computing?", "relevant": []}
    gold.write_text(
        "\n".join(json.dumps(r) for r in [
            {"id": "a", "kind": "list", "question": "Which papers are about reservoir computing?",
             "relevant": ["Reservoir Computing (RC) has established itself as an efficient paradigm for tem"]},
            {"id": "b", "kind": "factoid", "question": "What rate gap does WaterSIC reach?",
             "relevant": ["This paper considers the problem of converting a given dense linear layer to low"],
             "answer_contains": ["0.255"]},
            wrong_none,
        ]) + "\n"
    )  # fmt: skip
    data = json.loads(_run([str(gold), "--corpus", str(CORPUS)], tmp_path).stdout)
    s = data["summary"]
    assert s["list mean F1"] == 1.0 and s["factoid hit"] == 1.0
    assert s["abstention accuracy"] == 0.0, "a question that does have matches is scored as a failed abstention"
    assert s["evidence verbatim"] == 1.0
    assert not (tmp_path / "main").exists(), "eval never touches the user's main store"
    cached = list((tmp_path / "cache" / "askpapers" / "eval").glob("dev-*/COMPLETE"))
    assert len(cached) == 1
    _run([str(gold), "--corpus", str(CORPUS)], tmp_path)  # reuses the cached store
    assert len(list((tmp_path / "cache" / "askpapers" / "eval").glob("dev-*"))) == 1


def test_eval_conference_and_beir_formats(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    papers = [
        {
            "id": "p1",
            "title": "T1",
            "abstract": "We apply optimal transport to align point clouds.",
            "keywords": ["ot"],
        },
        {"id": "p2", "title": "T2", "abstract": "Optimal transport distances for domain adaptation."},
        {"id": "p3", "title": "T3", "abstract": "A study of protein folding with diffusion models."},
        {"id": "p4", "title": "T4", "abstract": "Not in the pool: optimal transport again."},
    ]
    corpus.write_text("\n".join(json.dumps(p) for p in papers) + "\n")
    pool = tmp_path / "pool.ids"
    pool.write_text("p1\np2\np3\n")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"qid": "q1", "question": "Which papers use optimal transport?",
                                "relevant_ids": ["p1"], "text_mention_only_ids": ["p2"]}) + "\n")  # fmt: skip
    data = json.loads(_run([str(gold), "--corpus", str(corpus), "--pool", str(pool)], tmp_path).stdout)
    row = data["rows"][0]
    assert row["P"] == 1.0 and row["R"] == 1.0, "p2 is unknown: it counts neither way; p4 is not in the pool"
    assert data["summary"]["R@10"] == 1.0 and data["summary"]["nDCG@10"] == 1.0

    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"id": "1", "text": "protein folding diffusion"}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n1\tp3\t1\n")
    data = json.loads(_run([str(queries), "--corpus", str(corpus), "--qrels", str(qrels)], tmp_path).stdout)
    assert data["summary"]["queries"] == 1.0 and data["summary"]["nDCG@10"] == 1.0
