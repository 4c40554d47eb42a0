"""The eval stores' cache: two evals of the same papers started together build the store once, and neither fails."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from askpapers.rag.evaluation import evaluate

RECORDS = [{"paper_id": "p1", "title": "A paper", "abstract": "We study information bottlenecks."}]


def test_two_evals_of_the_same_papers_build_their_store_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    builds: list[list[Path]] = []
    errors: list[BaseException] = []
    others: list[threading.Thread] = []

    def second_eval() -> None:
        try:
            evaluate.eval_store("conference", RECORDS, tmp_path)
        except BaseException as e:  # (reported by the assertion below)
            errors.append(e)

    def fake_ingest(paths: list[Path], *_: Any, **__: Any) -> None:
        assert all(p.exists() for p in paths)
        builds.append(paths)
        if len(builds) == 1:  # a second eval of the same papers starts while the first is building
            other = threading.Thread(target=second_eval)
            other.start()
            other.join(timeout=2)  # (it waits for this build, or, unguarded, builds and cleans up on its own)
            others.append(other)

    monkeypatch.setattr(evaluate, "ingest", fake_ingest)
    monkeypatch.setattr(evaluate, "get_embedder", lambda *_: None)
    monkeypatch.setattr(evaluate, "AskPapers", lambda settings: settings.store.data_dir)

    first = evaluate.eval_store("conference", RECORDS, tmp_path)
    for other in others:
        other.join()

    assert errors == []
    assert len(builds) == 1
    assert (Path(first) / "COMPLETE").read_text() == "ok\n"
    assert not (Path(first) / "corpus.jsonl").exists()
