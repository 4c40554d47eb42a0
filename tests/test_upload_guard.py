"""Which files the web app reads and serves (issue 23, items 5–7): only files its own upload route received, in
its own upload folder; export files served from its own rotated folder, never copied into Gradio's cache; and a
FileData with a URL refused before Gradio can fetch it."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import CORPUS, make_settings
from tests.test_hardening import call


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[tuple[str, Any]]:
    import gradio as gr

    from askpapers.rag.api import AskPapers
    from askpapers.ui.app import launch
    from askpapers.vectorstore.pipeline import ingest
    from tests.test_ui import free_port

    settings = make_settings(tmp_path_factory.mktemp("guard") / "store")
    ingest([CORPUS], settings.store, progress=False, embedder=embedder)
    _, url, _ = launch(settings, port=free_port(), block=False)
    yield url.rstrip("/"), AskPapers(settings)
    gr.close_all()


def record(abstract: str) -> str:
    return json.dumps({"id": abstract.split()[0].lower(), "abstract": abstract}) + "\n"


def test_a_file_another_process_left_in_the_shared_gradio_folder_is_neither_read_nor_served(
    web: tuple[str, Any],
) -> None:
    url, app = web
    shared = Path(tempfile.gettempdir()) / "gradio" / f"planted-{os.getpid()}"
    shared.mkdir(parents=True, exist_ok=True)
    planted = shared / "planted.jsonl"
    planted.write_text(record("Quokka smiles are measured by a planted file nobody uploaded."))
    before = len(app.papers())
    event, out = call(url, "add", [[{"path": str(planted), "meta": {"_type": "gradio.FileData"}}]])
    assert event == "error" or "not a file uploaded to this app" in str(out), out
    assert httpx.get(f"{url}/gradio_api/file={planted}", timeout=30).status_code in (403, 404)
    assert len(app.papers()) == before


def test_a_file_in_the_apps_own_upload_folder_that_was_never_uploaded_is_refused(
    web: tuple[str, Any], tmp_path: Path
) -> None:
    from gradio_client import Client, handle_file

    url, app = web
    own = Path(os.environ["GRADIO_TEMP_DIR"])  # the launch pointed Gradio at a folder of this process
    assert own.name.startswith("askpapers-gradio-") and own.parent == Path(tempfile.gettempdir())
    planted = own / "planted" / "planted.jsonl"
    planted.parent.mkdir(exist_ok=True)
    planted.write_text(record("Wombat burrows are mapped by a file placed in the upload folder."))
    event, out = call(url, "add", [[{"path": str(planted), "meta": {"_type": "gradio.FileData"}}]])
    assert event == "error" or "not a file uploaded to this app" in str(out), out
    good = tmp_path / "okapi.jsonl"
    good.write_text(record("Okapi stripes are studied with drones over the forest."))
    status = Client(url + "/", verbose=False).predict([handle_file(str(good))], api_name="/add")[0]
    assert "1 added" in status, status
    assert not app.ask("Which papers map wombat burrows?").found


@pytest.mark.parametrize(
    "payload",
    [
        {"path": None, "url": "http://203.0.113.9/corpus.jsonl", "meta": {"_type": "gradio.FileData"}},
        {"url": "https://example.com/corpus.jsonl", "meta": {"_type": "gradio.FileData"}},
        {"path": "http://203.0.113.9/corpus.jsonl", "meta": {"_type": "gradio.FileData"}},
    ],
)
def test_a_filedata_url_is_refused_before_gradio_fetches_it(
    web: tuple[str, Any], payload: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import gradio.processing_utils as pu

    url, _ = web
    fetched: list[str] = []

    async def fetch(where: str, cache_dir: str) -> str:
        fetched.append(where)
        raise RuntimeError("test: no download")

    monkeypatch.setattr(pu, "async_ssrf_protected_download", fetch)
    r = httpx.post(f"{url}/gradio_api/call/add", json={"data": [[payload]]}, timeout=60)
    assert r.status_code == 400 and "uploaded to this app first" in r.json()["detail"], r.text
    r = httpx.post(f"{url}/gradio_api/queue/join", timeout=60,
                   json={"data": [[payload]], "fn_index": 0, "session_hash": "s1"})  # fmt: skip
    assert r.status_code == 400
    assert fetched == []


def test_export_files_are_served_from_the_apps_folder_not_copied(tmp_path: Path, corpus_settings: Any) -> None:
    import gradio as gr
    from gradio import processing_utils

    from askpapers.rag.api import AskPapers
    from askpapers.ui.app import build
    from askpapers.ui.exports import Exports

    exports = Exports(keep=3)
    app = AskPapers(corpus_settings)
    build(app, exports)
    answer = app.ask("Which papers use information bottleneck?")
    block = gr.File(file_count="multiple")
    cache = Path(block.GRADIO_CACHE)
    before = set(cache.rglob("cited-papers.*")) if cache.exists() else set()
    served = []
    for _ in range(10):
        for path in exports.write(answer):
            out = processing_utils.move_files_to_cache({"path": path, "meta": {"_type": "gradio.FileData"}}, block,
                                                       postprocess=True)  # fmt: skip
            served.append(out["path"])
    after = set(cache.rglob("cited-papers.*")) if cache.exists() else set()
    assert after == before, "no copy in Gradio's cache"
    assert all(Path(p).is_relative_to(exports.root) for p in served)
    assert len(list(exports.root.rglob("cited-papers.*"))) == 3 * 3, "the newest 3 answers' files only"
    exports.close()
