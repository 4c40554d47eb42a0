"""Ingestion at scale: killed with SIGKILL part-way and resumed, concurrent ingests, queries during an ingest."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.embed import DIM, EMBEDDER_ID
from askpapers.vectorstore.store import Store
from tests.chroma_server import ChromaServer
from tests.conftest import CORPUS

ASKPAPERS = Path(sys.executable).parent / "askpapers"
PROGRESS = re.compile(rb"(\d+)/(\d+)")


class Ingest:
    """`askpapers ingest --progress` in a child process, with the number of papers committed so far."""

    def __init__(self, paths: list[Path], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [str(ASKPAPERS), "ingest", *map(str, paths), "--progress", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
        )
        self.done = 0
        self.stderr = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        while chunk := self.proc.stderr.read1(4096):  # type: ignore[attr-defined]
            self.stderr += chunk
            found = PROGRESS.findall(self.stderr[-200:])
            if found:
                self.done = int(found[-1][0])

    def wait_for(self, papers: int, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while self.done < papers:
            assert self.proc.poll() is None, f"ingest ended early: {self.stderr.decode()[-500:]}"
            assert time.monotonic() < deadline, "ingest made no progress"
            time.sleep(0.02)

    def finish(self) -> dict[str, int]:
        out, _ = self.proc.communicate(timeout=300)
        self._reader.join(timeout=5)
        assert self.proc.returncode == 0, self.stderr.decode()[-1000:]
        assert b"Traceback" not in self.stderr
        report: dict[str, int] = json.loads(out)
        return report


@pytest.fixture(params=["embedded", "server"])
def store_env(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    env = {"ASKPAPERS_DATA_DIR": str(tmp_path / "store"), "ASKPAPERS_BATCH_SIZE": "3",
           "ASKPAPERS_DEFAULT_CORPUS": str(CORPUS)}  # fmt: skip
    if request.param == "embedded":
        yield env
        return
    server = ChromaServer(tmp_path / "chroma-data").start()
    yield {**env, "ASKPAPERS_CHROMA_HOST": "127.0.0.1", "ASKPAPERS_CHROMA_PORT": str(server.port)}
    server.stop()


def open_store(env: dict[str, str]) -> Store:
    host = env.get("ASKPAPERS_CHROMA_HOST", "")
    port = int(env.get("ASKPAPERS_CHROMA_PORT", "8000"))
    settings = StoreSettings(data_dir=Path(env["ASKPAPERS_DATA_DIR"]), chroma_host=host, chroma_port=port)
    return Store(settings, EMBEDDER_ID, DIM)


def check_consistent(store: Store, papers: int) -> None:
    """Exactly ``papers`` papers; each has exactly its chunks; no chunk id twice; no chunk without its paper."""
    stored = store.stored()
    assert len(stored) == papers == store.count()
    res = store.chunks.get(include=[])
    ids = res["ids"]
    assert len(ids) == len(set(ids)), "a chunk id appears twice"
    expected = {f"{pid}:{i}" for pid, s in stored.items() for i in range(s.n_chunks)}
    assert set(ids) == expected


def test_sigkill_mid_ingest_then_rerun_finishes_the_rest(store_env: dict[str, str]) -> None:
    run = Ingest([CORPUS], store_env)
    # progress counts papers embedded, before their batch's commit: 15 embedded means batch 5 is done
    # embedding, so (batches run one after another) at least four batches of three are committed
    run.wait_for(15)
    os.kill(run.proc.pid, signal.SIGKILL)
    run.proc.wait()
    assert run.proc.returncode == -signal.SIGKILL

    committed = open_store(store_env).count()
    assert 12 <= committed < 38
    report = Ingest([CORPUS], store_env).finish()
    # finished batches are not redone: only the papers that were not committed are embedded again
    assert report["unchanged"] == committed and report["added"] == 38 - committed
    check_consistent(open_store(store_env), 38)
    again = Ingest([CORPUS], store_env).finish()
    assert (again["added"], again["updated"], again["unchanged"]) == (0, 0, 38)


def write_jsonl(path: Path, prefix: str, n: int) -> Path:
    lines = [
        json.dumps({"id": f"{prefix}{i}", "abstract": f"We study {prefix} method {i} for sparse graphs."})
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_two_ingests_at_once_and_queries_during_an_ingest(store_env: dict[str, str], tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", "alpha", 30)
    b = write_jsonl(tmp_path / "b.jsonl", "beta", 30)
    first = Ingest([CORPUS, a], store_env)
    second = Ingest([b], store_env)
    first.wait_for(6)
    # a question in a third process while the ingests run
    ask = subprocess.run(
        [str(ASKPAPERS), "ask", "Which papers study contextual bandits?", "--json"],
        capture_output=True, text=True, env={**os.environ, **store_env}, timeout=300,
    )  # fmt: skip
    assert ask.returncode == 0, ask.stderr
    assert "Traceback" not in ask.stderr
    assert json.loads(ask.stdout)["question"]
    r1, r2 = first.finish(), second.finish()
    assert r1["added"] == 68 and r2["added"] == 30
    check_consistent(open_store(store_env), 98)
