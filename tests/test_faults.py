"""Faults: a read-only data directory, corrupted SQLite files, a full disk mid-ingest, LLM failures under load."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from askpapers.rag.api import AskPapers
from askpapers.rag.settings import LLMSettings, RetrievalSettings, Settings
from askpapers.rag.types import Answer
from askpapers.vectorstore.errors import StoreError
from askpapers.vectorstore.lexical import lexical_path
from askpapers.vectorstore.pipeline import ingest
from askpapers.vectorstore.store import Store
from tests.conftest import CORPUS, make_settings
from tests.fake_openai import FakeOpenAI, Reply

ASKPAPERS = Path(sys.executable).parent / "askpapers"
RC = "Which papers are about reservoir computing?"
IB = "Which papers use information bottleneck?"


def cli(args: list[str], data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASKPAPERS_DATA_DIR": str(data_dir), "ASKPAPERS_DEFAULT_CORPUS": str(CORPUS)}
    proc = subprocess.run([str(ASKPAPERS), *args], capture_output=True, text=True, env=env, timeout=300)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc


def consistent(settings: Settings, embedder: Any) -> int:
    """The paper count, after checking that every chunk belongs to a stored paper and no paper lacks one."""
    store = Store(settings.store, embedder.embedder_id, embedder.dim)
    stored = store.stored()
    ids = store.chunks.get(include=[])["ids"]
    assert set(ids) == {f"{pid}:{i}" for pid, s in stored.items() for i in range(s.n_chunks)}
    return len(stored)


@pytest.fixture()
def built(tmp_path: Path, embedder: Any) -> Settings:
    settings = make_settings(tmp_path / "store")
    ingest([CORPUS], settings.store, progress=False, embedder=embedder)
    return settings


# -- a read-only data directory -------------------------------------------------------------------------------
@pytest.fixture()
def read_only(tmp_path: Path, built: Settings) -> Iterator[Path]:
    """The built store, seen through a read-only path: a read-only bind mount as root, else chmod."""
    if built.store.mode != "embedded":
        pytest.skip("a data directory is only read for the embedded store")
    src = built.store.data_dir
    if os.geteuid() != 0:
        for p in [src, *src.rglob("*")]:
            p.chmod(p.stat().st_mode & ~0o222)
        yield src
        for p in [src, *src.rglob("*")]:
            p.chmod(p.stat().st_mode | 0o200)
        return
    mnt = tmp_path / "ro"
    mnt.mkdir()
    ok = subprocess.run(["mount", "--bind", str(src), str(mnt)], capture_output=True).returncode == 0
    ok = ok and subprocess.run(["mount", "-o", "remount,bind,ro", str(mnt)], capture_output=True).returncode == 0
    if not ok:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        pytest.skip("running as root without the right to mount: cannot make a directory read-only")
    yield mnt
    subprocess.run(["umount", str(mnt)], check=True)


def test_read_only_data_dir_still_answers_and_ingest_fails_clearly(
    read_only: Path, built: Settings, tmp_path: Path, embedder: Any
) -> None:
    settings = built.model_copy(update={"store": built.store.model_copy(update={"data_dir": read_only})})
    app = AskPapers(settings)
    assert app.index.read_only
    assert [c.title for c in app.ask(RC).citations] == ["Parallel Echo State Network (ParalESN)"]
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"id": "x", "abstract": "We study sparse autoencoders."}) + "\n", encoding="utf-8")
    with pytest.raises(StoreError, match=r"cannot write to the data directory .* nothing was changed"):
        ingest([extra], settings.store, progress=False, embedder=embedder)
    proc = cli(["ingest", str(extra)], read_only)
    assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1
    assert "cannot write to the data directory" in proc.stderr
    proc = cli(["ask", RC, "--json"], read_only)
    assert proc.returncode == 0 and json.loads(proc.stdout)["citations"][0]["title"].startswith("Parallel Echo")
    assert consistent(built, embedder) == 38  # nothing lost


# -- corrupted SQLite files -----------------------------------------------------------------------------------
def test_corrupted_bm25_index_is_rebuilt_from_chroma(built: Settings) -> None:
    app = AskPapers(built)
    before = [c.paper_id for c in app.ask(IB).citations]
    path = lexical_path(built.store)
    path.write_bytes(b"this is not a database" * 100)
    fresh = AskPapers(built)
    assert [c.paper_id for c in fresh.ask(IB).citations] == before
    assert path.read_bytes().startswith(b"SQLite format 3")


def test_corrupted_chroma_file_is_a_clear_error(built: Settings, embedder: Any) -> None:
    if built.store.mode != "embedded":
        pytest.skip("the server owns its files")
    db = built.store.data_dir / "chroma.sqlite3"
    db.write_bytes(b"garbage" * 4096)
    with pytest.raises(StoreError, match=rf"Chroma store at {built.store.data_dir}"):
        AskPapers(built).ask(RC)
    proc = cli(["ask", RC], built.store.data_dir)
    assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1
    assert str(built.store.data_dir) in proc.stderr


# -- the disk fills up during an ingest -----------------------------------------------------------------------
def test_disk_full_mid_ingest_keeps_the_previous_index(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, built: Settings, embedder: Any
) -> None:
    more = tmp_path / "more.jsonl"
    more.write_text(
        "\n".join(json.dumps({"id": f"m{i}", "abstract": f"We study sparse method {i} for graphs."}) for i in range(12))
        + "\n",
        encoding="utf-8",
    )
    settings = built.model_copy(update={"store": built.store.model_copy(update={"batch_size": 4})})
    real_write, calls = Store.write, []

    def write(self: Store, *args: Any, **kwargs: Any) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_write(self, *args, **kwargs)

    monkeypatch.setattr(Store, "write", write)
    with pytest.raises(StoreError, match="No space left on device"):
        ingest([more], settings.store, progress=False, embedder=embedder)
    assert consistent(settings, embedder) == 38 + 4  # the first batch was committed, nothing half-written
    assert [c.title for c in AskPapers(settings).ask(RC).citations] == ["Parallel Echo State Network (ParalESN)"]
    monkeypatch.setattr(Store, "write", real_write)  # space is back: the same command finishes the rest
    report = ingest([more], settings.store, progress=False, embedder=embedder)
    assert (report.added, report.unchanged) == (8, 4)
    assert consistent(settings, embedder) == 50


# -- the LLM endpoint fails while several sessions use it ----------------------------------------------------
@pytest.fixture()
def fake_llm() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI().start()
    yield fake
    fake.stop()


QUESTIONS = [IB, RC, "Which papers study contextual bandits?", "Which papers are about federated learning?",
             "Which papers use the Koopman operator?", "Which papers are about recommender systems?"]  # fmt: skip


def test_llm_faults_under_concurrent_sessions(corpus_settings: Settings, fake_llm: FakeOpenAI) -> None:
    # (3 s: a good reply is in time on a busy machine; a hang of 8 s is far past it)
    llm = LLMSettings(api_key="sk-test-faults", base_url=fake_llm.url, model="m", timeout=3.0, max_retries=0)
    app = AskPapers(Settings(store=corpus_settings.store, retrieval=RetrievalSettings(), llm=llm))
    own = {q: {c.paper_id for c in app.ask(q, mode="extractive").citations} for q in QUESTIONS}
    failures = [Reply(status=500), Reply(status=401), Reply(hang=8.0), Reply(malformed=True)]
    good = Reply("The first paper in the context is relevant [1].")
    replies = [failures[i // 2 % 4] if i % 2 else good for i in range(24)]
    fake_llm.quiet_steps().on(
        "answer", *replies
    )  # every question's one answer request: half of them fail, in four ways

    def session(i: int) -> list[tuple[str, Answer]]:
        out = []
        for q in (QUESTIONS[i % len(QUESTIONS)], QUESTIONS[(i + 1) % len(QUESTIONS)]):
            out.append((q, app.ask(q)))
        return out

    with ThreadPoolExecutor(max_workers=12) as pool:
        results = [a for batch in pool.map(session, range(12)) for a in batch]
    assert len(results) == 24  # every request answered, none raised
    fallbacks = 0
    for q, answer in results:
        assert answer.citations, q
        if answer.mode == "extractive":
            fallbacks += 1
            assert answer.notices and "sk-test-faults" not in " ".join(answer.notices)
            assert {c.paper_id for c in answer.citations} == own[q]
        else:  # an LLM answer cites its own question's papers, never another session's
            assert answer.mode == "llm"
            assert {c.paper_id for c in answer.citations} <= own[q] | {h.paper_id for h in app.search(q, k=20)}
    assert fallbacks == 12 and len(fake_llm.of("answer")) == 24


class _Flaky:
    """A collection whose reads fail with Chroma's InternalError ``fails`` times before answering."""

    def __init__(self, fails: int, error: Exception) -> None:
        self.fails, self.error, self.calls, self.writes = fails, error, 0, 0

    def query(self, **kwargs: Any) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self.fails:
            raise self.error
        return {"ids": [["p1"]]}

    def upsert(self, **kwargs: Any) -> None:
        self.writes += 1
        raise self.error


def _guarded(flaky: _Flaky, slept: list[float]) -> Any:
    from askpapers.vectorstore.chroma_client import Guarded
    from askpapers.vectorstore.config import StoreSettings

    return Guarded(flaky, StoreSettings(data_dir=Path("/nonexistent")), sleep=slept.append)


def test_a_read_meeting_a_concurrent_writers_commit_is_retried_then_answers() -> None:
    """Chroma's "Error finding id" while another process commits a batch: the read is tried again, not failed."""
    from chromadb.errors import InternalError

    from askpapers.vectorstore.chroma_client import READ_RETRY_PAUSES

    slept: list[float] = []
    flaky = _Flaky(2, InternalError("Error executing plan: Internal error: Error finding id"))
    guarded = _guarded(flaky, slept)
    assert guarded.query(query_embeddings=[[0.0]]) == {"ids": [["p1"]]}
    assert flaky.calls == 3 and guarded.retries == 2 and slept == list(READ_RETRY_PAUSES[:2])

    # a read that keeps failing ends in one StoreError after every pause, with the reason
    slept.clear()
    stuck = _Flaky(99, InternalError("Error finding id"))
    with pytest.raises(StoreError, match="Error finding id"):
        _guarded(stuck, slept).query(query_embeddings=[[0.0]])
    assert stuck.calls == len(READ_RETRY_PAUSES) + 1 and slept == list(READ_RETRY_PAUSES)


def test_writes_and_other_errors_are_not_retried() -> None:
    from chromadb.errors import InternalError

    slept: list[float] = []
    writer = _Flaky(99, InternalError("Error finding id"))
    with pytest.raises(StoreError):
        _guarded(writer, slept).upsert(ids=["p1"])
    assert writer.writes == 1 and slept == []
    bad = _Flaky(99, ValueError("Expected where to have exactly one operator"))
    with pytest.raises(StoreError, match="exactly one operator"):
        _guarded(bad, slept).query(query_embeddings=[[0.0]])
    assert bad.calls == 1 and slept == []


class _HalfCommitted:
    """A collection in which some records' vectors stay unreadable (another process's uncommitted batch): a
    ``get`` of embeddings naming any of them fails with Chroma's InternalError, as an embedded store does."""

    def __init__(self, vectors: dict[str, list[float]], unreadable: set[str], error: Exception) -> None:
        self.vectors, self.unreadable, self.error, self.calls = vectors, unreadable, error, 0

    def get(self, ids: list[str] | None = None, where: Any = None, include: Any = None) -> dict[str, Any]:
        self.calls += 1
        if where is not None:
            ids = [i for i in self.vectors if i.rpartition(":")[0] in where["paper_id"]["$in"]]
        wanted = [i for i in ids or [] if i in self.vectors]
        if set(wanted) & self.unreadable:
            raise self.error
        return {"ids": wanted, "embeddings": [self.vectors[i] for i in wanted]}


def test_vectors_of_papers_another_process_is_still_writing_are_left_out_not_a_failed_question() -> None:
    """CI's `ask` during two ingests: one unreadable vector failed the batched read of a hundred (after its
    retries) and so the question. The read is split; every readable vector comes back, the others are left out."""
    from chromadb.errors import InternalError

    from askpapers.vectorstore.chroma_client import READ_RETRY_PAUSES, Guarded
    from askpapers.vectorstore.config import StoreSettings
    from askpapers.vectorstore.store import Store

    error = InternalError("Error executing plan: Internal error: Error finding id")
    ids = [f"p{i}" for i in range(100)]
    writing = {"p7", "p61"}
    papers = _HalfCommitted({p: [float(i), 1.0] for i, p in enumerate(ids)}, writing, error)
    chunks = _HalfCommitted({f"{p}:{j}": [float(j), 0.0] for p in ids for j in range(5 if p == "p3" else 1)},
                            {"p61:0"}, error)  # fmt: skip
    slept: list[float] = []
    settings = StoreSettings(data_dir=Path("/nonexistent"))
    store = Store.__new__(Store)
    store.papers = Guarded(papers, settings, sleep=slept.append)
    store.chunks = Guarded(chunks, settings, sleep=slept.append)

    vectors = store.paper_vectors(ids)
    assert set(vectors) == set(ids) - writing
    assert vectors["p8"].tolist() == [8.0, 1.0]
    # the batched read was retried as before, then split without pauses: far fewer reads than one per paper
    assert slept == list(READ_RETRY_PAUSES)
    assert papers.calls - (len(READ_RETRY_PAUSES) + 1) <= 2 * len(writing) * 7 and store.papers.left_out == 2

    by_paper = store.chunk_vectors(ids)
    assert set(by_paper) == set(ids) - {"p61"}
    assert len(by_paper["p3"]) == 5  # the paper with more chunks than are guessed is read whole
    assert [row[0] for row in by_paper["p3"]] == [0.0, 1.0, 2.0, 3.0, 4.0]

    # any other error still fails the read at once
    papers.error = ValueError("Expected where to have exactly one operator")
    with pytest.raises(StoreError, match="exactly one operator"):
        store.paper_vectors(ids)


def test_a_split_read_that_reads_every_key_warns_of_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """The writer may commit between the batched read's retries and its halves: then nothing is left out, and no
    warning says otherwise."""
    from chromadb.errors import InternalError

    from askpapers.vectorstore.chroma_client import READ_RETRY_PAUSES, Guarded
    from askpapers.vectorstore.config import StoreSettings

    class Committing(_HalfCommitted):  # mid-commit for the batched read and its retries, then committed
        def get(self, ids: list[str] | None = None, where: Any = None, include: Any = None) -> dict[str, Any]:
            if self.calls <= len(READ_RETRY_PAUSES):
                self.calls += 1
                raise self.error
            return super().get(ids, where, include)

    papers = Committing({f"p{i}": [float(i)] for i in range(8)}, set(), InternalError("Error finding id"))
    guarded = Guarded(papers, StoreSettings(data_dir=Path("/nonexistent")), sleep=lambda _: None)
    with caplog.at_level("WARNING", logger="askpapers"):
        results = guarded.readable([f"p{i}" for i in range(8)], lambda g, part: g.get(ids=part, include=["x"]))
    assert papers.calls > len(READ_RETRY_PAUSES) + 1  # the batched read failed, and was split
    assert sorted(pid for r in results for pid in r["ids"]) == [f"p{i}" for i in range(8)]
    assert guarded.left_out == 0 and "left out" not in caplog.text
