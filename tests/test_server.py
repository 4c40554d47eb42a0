"""Server mode: askpapers on a real `chroma run` server, including the server going away and coming back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from askpapers.rag.api import AskPapers
from askpapers.vectorstore.config import StoreSettings
from askpapers.vectorstore.errors import StoreError
from askpapers.vectorstore.lexical import lexical_path
from askpapers.vectorstore.pipeline import ingest
from tests.chroma_server import ChromaServer
from tests.conftest import CORPUS, make_settings

ASKPAPERS = Path(sys.executable).parent / "askpapers"


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[ChromaServer]:
    s = ChromaServer(tmp_path / "chroma-data").start()
    yield s
    s.stop()


def server_settings(server: ChromaServer, data_dir: Path):  # type: ignore[no-untyped-def]
    settings = make_settings(data_dir)
    store = StoreSettings(
        data_dir=data_dir, default_corpus=CORPUS, chroma_host="127.0.0.1", chroma_port=server.port, collection="lab"
    )
    return settings.model_copy(update={"store": store})


def cli(args: list[str], env: dict[str, str], ok: bool = True) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **env}
    proc = subprocess.run([str(ASKPAPERS), *args], capture_output=True, text=True, env=full_env, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_everything_lives_in_the_server(server: ChromaServer, tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    import chromadb

    settings = server_settings(server, tmp_path / "local")
    report = ingest([CORPUS], settings.store, progress=False, embedder=embedder)
    assert report.added == 38
    # the server holds the papers and chunks; the local directory holds only the derived BM25 index
    client = chromadb.HttpClient(host="127.0.0.1", port=server.port)
    assert client.get_collection("lab_papers").count() == 38
    assert client.get_collection("lab").count() == report.chunks
    local = sorted(p.name for p in (tmp_path / "local").iterdir())
    assert not any(name.endswith(".sqlite3") for name in local), local
    assert lexical_path(settings.store).exists() and "@127.0.0.1" in lexical_path(settings.store).name

    app = AskPapers(settings)
    answer = app.ask("Which papers use information bottleneck?")
    assert len(answer.citations) == 6
    followup = app.ask(
        "Which of them uses mutual information?",
        history=[
            {"role": "user", "content": "Which papers use information bottleneck?"},
            {"role": "assistant", "content": answer.text},
        ],
    )
    assert followup.citations and {c.paper_id for c in followup.citations} <= {c.paper_id for c in answer.citations}


def test_bm25_follows_ingests_by_another_process(server: ChromaServer, tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    settings = server_settings(server, tmp_path / "machine-a")
    ingest([CORPUS], settings.store, progress=False, embedder=embedder)
    app = AskPapers(settings)
    assert not [h for h in app.search("zyxquorble lattice tomography") if "zyxquorble" in h.snippet.lower()]

    new = tmp_path / "new.jsonl"
    new.write_text(
        json.dumps({"id": "zq1", "title": "Zyxquorble", "abstract": "We introduce zyxquorble lattice tomography."})
        + "\n",
        encoding="utf-8",
    )
    # another machine: its own data directory, the same server
    env = {"ASKPAPERS_DATA_DIR": str(tmp_path / "machine-b"), "ASKPAPERS_CHROMA_HOST": "127.0.0.1",
           "ASKPAPERS_CHROMA_PORT": str(server.port), "ASKPAPERS_COLLECTION": "lab"}  # fmt: skip
    assert "1 added" in cli(["ingest", str(new), "--no-progress"], env).stdout
    hits = app.search("zyxquorble lattice tomography")
    assert hits and hits[0].paper_id == "zq1"  # the same AskPapers, no restart
    assert app.ask("Which papers use zyxquorble lattice tomography?").citations[0].paper_id == "zq1"


def test_server_down_mid_session_then_back(server: ChromaServer, tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    settings = server_settings(server, tmp_path / "local")
    ingest([CORPUS], settings.store, progress=False, embedder=embedder)
    app = AskPapers(settings)
    assert app.ask("Which papers are about reservoir computing?").citations

    server.stop()
    for _ in range(2):  # every failed request is reported, none hangs or crashes
        with pytest.raises(StoreError, match=rf"Chroma server at http://127\.0\.0\.1:{server.port}.*is it running"):
            app.ask("Which papers are about reservoir computing?")
    env = {"ASKPAPERS_DATA_DIR": str(tmp_path / "local"), "ASKPAPERS_CHROMA_HOST": "127.0.0.1",
           "ASKPAPERS_CHROMA_PORT": str(server.port), "ASKPAPERS_COLLECTION": "lab"}  # fmt: skip
    proc = cli(["ask", "Which papers are about reservoir computing?"], env, ok=False)
    assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1
    assert f"127.0.0.1:{server.port}" in proc.stderr

    server.start()  # same path, same port: the first request after recovery succeeds
    answer = app.ask("Which papers are about reservoir computing?")
    assert [c.title for c in answer.citations] == ["Parallel Echo State Network (ParalESN)"]


def test_server_down_at_start_then_up(tmp_path: Path) -> None:
    server = ChromaServer(tmp_path / "chroma-data")  # not started yet
    settings = server_settings(server, tmp_path / "local")
    app = AskPapers(settings)
    with pytest.raises(StoreError, match="cannot open the Chroma server"):
        app.ask("Which papers study contextual bandits?")
    server.start()
    try:  # the same object recovers, and an empty server gets the bundled corpus
        answer = app.ask("Which papers study contextual bandits?")
        assert answer.citations[0].title == "Near-optimal algorithm for adversarial environments"
    finally:
        server.stop()
