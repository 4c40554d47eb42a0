"""Upload limits, ingest queueing and SIGTERM during an ingest (issue 23, item 1).

The review's file: a CSV with 300,000 one-word rows, 5 MB, which took the server from 0.43 to 3.5 GB and a core for
8 minutes while another client's one-line upload waited. Memory is measured from /proc (the resident set of this
process, where the web app runs), never time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from askpapers.vectorstore.errors import InputError
from askpapers.vectorstore.upload import UploadLimits, check_upload
from tests.conftest import CORPUS, ROOT, make_settings

MESSAGE = "this file has 300,000 records; the limit per upload is 20,000 — use `askpapers ingest` for bulk loads"


def rss_mb(field: str = "VmRSS") -> float:
    """This process's resident memory (VmRSS) or its peak so far (VmHWM), in MB, from /proc/self/status."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(field)


@pytest.fixture(scope="module")
def flood(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("flood") / "flood.csv"
    with path.open("w", encoding="utf-8") as f:
        f.write("id,abstract\n")
        f.writelines(f"r{i},w{i} x\n" for i in range(300_000))
    assert 4_000_000 < path.stat().st_size < 6_000_000  # about the review's 5 MB
    return path


def test_the_limits_are_checked_record_by_record_before_anything_is_built(flood: Path, tmp_path: Path) -> None:
    before = rss_mb("VmHWM")
    with pytest.raises(InputError) as e:
        check_upload([flood], UploadLimits())
    assert str(e.value) == MESSAGE
    assert rss_mb("VmHWM") - before < 100, "counting 300,000 records keeps none of them"
    short = tmp_path / "short.csv"
    short.write_text("id,abstract\nr1,A long enough abstract about graph learning.\nr2,w1 x\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"short.csv:3: the abstract has 4 characters; an upload needs at least 20"):
        check_upload([short], UploadLimits())
    big = tmp_path / "big.jsonl"
    big.write_text(json.dumps({"abstract": "Graph learning on large sparse graphs. " * 2_000}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"holds 0.1 MB of text; the limit per upload is 0.0 MB — use `askpapers"):
        check_upload([big], UploadLimits(max_bytes=10_000))
    assert check_upload([big], UploadLimits()) == 1


def test_the_settings_hold_the_limits() -> None:
    from askpapers.rag.settings import UISettings

    limits = UISettings(upload_max_papers=5, upload_max_text_mb=1.5, upload_min_abstract=30).upload_limits()
    assert limits == UploadLimits(max_papers=5, max_bytes=1_500_000, min_abstract=30)
    assert UISettings().upload_limits() == UploadLimits(max_papers=20_000, max_bytes=50_000_000, min_abstract=20)


# -- the web app: the flood is refused with the message, a one-line upload beside it completes ------------------


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[tuple[str, Any]]:
    import gradio as gr

    from askpapers.rag.api import AskPapers
    from askpapers.ui.app import launch
    from askpapers.vectorstore.pipeline import ingest
    from tests.test_ui import free_port

    settings = make_settings(tmp_path_factory.mktemp("uploads") / "store")
    ingest([CORPUS], settings.store, progress=False, embedder=embedder)
    _, url, _ = launch(settings, port=free_port(), block=False)
    yield url.rstrip("/"), AskPapers(settings)
    gr.close_all()


def test_a_flood_upload_is_refused_and_a_one_line_upload_beside_it_completes(
    web: tuple[str, Any], flood: Path, tmp_path: Path
) -> None:
    from gradio_client import Client, handle_file

    url, app = web
    before = len(app.papers())
    one = tmp_path / "okapi.jsonl"
    one.write_text(json.dumps({"id": "okapi", "abstract": "Okapi stripes are studied with drones."}) + "\n")
    rss, peak = rss_mb(), rss_mb("VmHWM")
    out: dict[str, str] = {}

    def upload(name: str, path: Path) -> None:
        out[name] = Client(url + "/", verbose=False).predict([handle_file(str(path))], api_name="/add")[0]

    big = threading.Thread(target=upload, args=("flood", flood))
    big.start()
    upload("one", one)  # while the flood is being read, or queued behind it
    big.join(timeout=600)
    assert not big.is_alive(), "the flood upload never finished"
    assert MESSAGE in out["flood"] and "Nothing was added" in out["flood"], out["flood"]
    assert "1 added" in out["one"], out["one"]
    assert len(app.papers()) == before + 1
    grew, peaked = rss_mb() - rss, rss_mb("VmHWM") - peak
    print(f"RSS grew {grew:.0f} MB; the peak grew {peaked:.0f} MB")
    assert peaked < 300, f"the peak resident set grew {peaked:.0f} MB (the review saw 3 GB)"


# -- SIGTERM during an ingest ------------------------------------------------------------------------------------

SCRIPT = """
import sys, threading
from pathlib import Path
from tests.conftest import make_settings
from askpapers.ui.exports import exit_on_sigterm
from askpapers.rag.api import stop_ingests
from askpapers.vectorstore.pipeline import ingest

settings = make_settings(Path(sys.argv[1]))
settings.store.batch_size = 16
exit_on_sigterm(before=stop_ingests)
seen = []

def progress(done, total):
    if done >= 16 and not seen:  # the first batch is embedded: the parent may send SIGTERM now
        seen.append(done)
        print("EMBEDDING", flush=True)

def work():
    try:
        ingest([sys.argv[2]], settings.store, progress=False, on_progress=progress)
    except Exception as e:
        print("STOPPED", e, flush=True)

t = threading.Thread(target=work, daemon=True)
t.start()
while t.is_alive():
    t.join(0.05)
print("FINISHED", flush=True)
"""


def test_sigterm_during_an_ingest_stops_at_a_batch_boundary(tmp_path: Path, embedder: Any) -> None:
    from askpapers.vectorstore.pipeline import ingest

    records = tmp_path / "many.jsonl"
    with records.open("w", encoding="utf-8") as f:
        for i in range(160):
            f.write(json.dumps({"id": f"p{i:03d}", "abstract": f"Paper {i} studies topic {i} with method {i % 7} "
                                "on benchmark data and reports its accuracy in detail."}) + "\n")  # fmt: skip
    store = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(store), str(records)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "EMBEDDING", (line, proc.stderr.read() if proc.stderr else "")
    proc.send_signal(signal.SIGTERM)
    rest, err = proc.communicate(timeout=300)
    assert proc.returncode == 128 + signal.SIGTERM, (rest, err)
    assert "FINISHED" not in rest, (rest, err)  # (the worker may not get to print why it stopped)
    assert "Traceback" not in err, err
    report = ingest([records], make_settings(store).store, progress=False, embedder=embedder)  # adds only the rest
    stored_before = 160 - report.added
    assert 0 < stored_before < 160 and stored_before % 16 == 0, f"{stored_before} papers: not whole batches"
    assert report.unchanged == stored_before and report.total_papers == 160
