"""Hostile callers of the web app and the API: bounded and typed inputs, uploads only from uploads, a damaged
index, malformed auth, login back-off, the Host check, export clean-up, and text that fights the display."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import CORPUS, make_settings
from tests.test_ui import browser as browser  # the module's headless Chromium fixture

ASKPAPERS = Path(sys.executable).parent / "askpapers"
IB = "Which papers use information bottleneck?"


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[tuple[str, Any]]:
    import gradio as gr

    from askpapers.rag.api import AskPapers
    from askpapers.ui.app import launch
    from askpapers.vectorstore.pipeline import ingest
    from tests.test_ui import free_port

    settings = make_settings(tmp_path_factory.mktemp("hardening") / "store")
    ingest([CORPUS], settings.store, progress=False, embedder=embedder)
    _, url, _ = launch(settings, port=free_port(), block=False)
    yield url.rstrip("/"), AskPapers(settings)
    gr.close_all()


def call(url: str, api: str, data: list[Any]) -> tuple[str, Any]:
    """One call of a Gradio endpoint over its HTTP API, exactly as sent (no client-side checks or uploads)."""
    r = httpx.post(f"{url}/gradio_api/call/{api}", json={"data": data}, timeout=60)
    r.raise_for_status()
    event_id = r.json()["event_id"]
    event, payload = "", None
    with httpx.stream("GET", f"{url}/gradio_api/call/{api}/{event_id}", timeout=120) as s:
        for line in s.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event in ("complete", "error"):
                payload = json.loads(line[6:])
                return event, payload
    return event, payload


# -- bounded, typed inputs -------------------------------------------------------------------------------------


def test_a_50k_character_history_is_refused_by_the_bounds(web: tuple[str, Any]) -> None:
    url, _ = web
    commas = "Which papers use sparse" + "," * 20_000 + "x"
    for history in (
        [{"role": "user", "content": commas}],  # one message over the per-message limit
        [{"role": "user", "content": "Which papers use sparse" + "," * 9_000}] * 6,  # 54k characters in all
        [{"role": "user", "content": "q"}] * 51,  # too many messages
    ):
        event, out = call(url, "ask", [IB, history, "extractive", None, None, None, None])
        assert event == "complete"
        error = out[0]["error"]
        assert "history" in error and ("limit" in error or "more than" in error), error
    event, out = call(url, "ask", [IB, [{"role": "user", "content": "Which papers use sparse" + "," * 5_000}],
                                   "extractive", None, None, None, None])  # fmt: skip
    assert event == "complete" and "error" not in out[0] and out[0]["found"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([IB, 42, "extractive", None, None, None, None], "the history must be a list"),
        ([IB, ["hi"], "extractive", None, None, None, None], "history message 1 is not"),
        ([IB, [{"role": "robot", "content": "x"}], "extractive", None, None, None, None], "history message 1: role"),
        ([IB, None, "extractive", None, None, 1e30, None], "invalid filters: year"),
        ([IB, None, "extractive", None, None, "abc", None], "invalid filters: year"),
        ([IB, None, "extractive", "abc", None, None, None], "k must be a whole number from 1 to 1000"),
        ([IB, None, "extractive", 0, None, None, None], "k must be a whole number from 1 to 1000"),
        ([IB, None, "extractive", -3, None, None, None], "k must be a whole number from 1 to 1000"),
        ([IB, None, "extractive", None, None, None, "maybe"], "invalid filters: has_code"),
        ([IB, None, "sideways", None, None, None, None], "unknown mode"),
        ([{"x": 1}, None, "extractive", None, None, None, None], "the question must be text"),
    ],
)
def test_bad_api_arguments_get_clear_errors(web: tuple[str, Any], args: list[Any], message: str) -> None:
    url, _ = web
    event, out = call(url, "ask", args)
    assert event == "complete", out
    assert message in out[0]["error"], out[0]
    assert "Traceback" not in json.dumps(out)


def test_python_api_validates_at_the_boundary(corpus_settings: Any) -> None:
    from askpapers.rag.api import AskPapers
    from askpapers.vectorstore.errors import AskPapersError, QuestionError

    app = AskPapers(corpus_settings)
    cases = [({"year": "abc"}, "invalid filters: year"), ({"year": 10**30}, "invalid filters"),
             ({"colour": "red"}, "colour: unknown name"), (["venue"], "must be a mapping")]  # fmt: skip
    for filters, message in cases:
        with pytest.raises(QuestionError, match=message):
            app.ask(IB, filters=filters)  # type: ignore[arg-type]
    for k in (0, -3, 1001, 2.5, "abc", True):
        with pytest.raises(QuestionError, match="k must be a whole number from 1 to 1000"):
            app.ask(IB, k=k)  # type: ignore[arg-type]
    assert issubclass(QuestionError, AskPapersError)
    no, unset = app.search("learning", k=50, filters={"has_code": "no"}), app.search("learning", k=50)
    assert [h.paper_id for h in no] == [h.paper_id for h in unset], '"no" means no code filter, not True'
    assert all(h.code_urls for h in app.search("learning", k=50, filters={"has_code": "yes"}))


# -- uploads come only from uploads ----------------------------------------------------------------------------


def test_add_reads_only_files_gradio_received_as_uploads(web: tuple[str, Any], tmp_path: Path) -> None:
    import gradio as gr
    from gradio_client import Client, handle_file

    from askpapers.ui.guard import uploaded_paths
    from askpapers.vectorstore.errors import InputError

    url, app = web
    before = len(app.papers())
    secret = tmp_path / "notes.txt"
    secret.write_text("Quetzalcoatlus wing membranes are studied here as a secret note of the server.\n")
    secret.chmod(0o600)
    upload_root = Path(gr.utils.get_upload_folder())
    link_dir = upload_root / f"evil-{os.getpid()}"
    link_dir.mkdir(parents=True, exist_ok=True)
    (link_dir / "link.txt").unlink(missing_ok=True)
    (link_dir / "link.txt").symlink_to(secret)
    attempts = {
        "absolute": str(secret),
        "relative": os.path.relpath(secret),
        "symlink": str(link_dir / "link.txt"),
        "dotdot": os.path.join(upload_root, os.path.relpath(secret, upload_root)),  # upload_root/../../…
    }
    assert ".." in attempts["dotdot"] and ".." in attempts["relative"]
    for how, path in attempts.items():
        # askpapers' own check, whatever shape the payload has
        for payload in ({"path": path, "meta": {"_type": "gradio.FileData"}}, {"path": path}, path, [path]):
            with pytest.raises(InputError, match="not a file uploaded to this app"):
                uploaded_paths(payload, upload_root)
        # and through the running app's HTTP API, exactly as an attacker would send them: nothing is read
        for payload in ([{"path": path, "meta": {"_type": "gradio.FileData"}}], [{"path": path}], [path]):
            event, out = call(url, "add", [payload])
            assert event == "error" or "not a file uploaded to this app" in str(out), (how, out)
    assert len(app.papers()) == before
    assert not app.ask("Which papers study Quetzalcoatlus wing membranes?").found
    inside = link_dir / "real.jsonl"
    inside.write_text("{}")
    assert uploaded_paths({"path": str(inside), "orig_name": "mine.jsonl"}, upload_root) == [(inside, "mine.jsonl")]
    # a real upload, through gradio_client (which uploads the file first), is accepted
    good = tmp_path / "okapi.jsonl"
    good.write_text(json.dumps({"id": "okapi", "abstract": "Okapi stripes are studied with drones."}) + "\n")
    status = Client(url + "/", verbose=False).predict([handle_file(str(good))], api_name="/add")[0]
    assert "1 added" in status, status
    assert app.ask("Which papers study okapi stripes?").found


# -- a damaged index, malformed settings -----------------------------------------------------------------------


def test_a_running_app_rebuilds_a_damaged_bm25_file(tmp_path: Path, embedder: Any) -> None:
    import sqlite3

    from askpapers.rag.api import AskPapers
    from askpapers.vectorstore.lexical import lexical_path
    from askpapers.vectorstore.pipeline import ingest

    settings = make_settings(tmp_path / "store")
    ingest([CORPUS], settings.store, progress=False, embedder=embedder)
    app = AskPapers(settings)
    assert len(app.ask(IB).citations) == 6
    path = lexical_path(settings.store)
    inode = path.stat().st_ino
    with path.open("r+b") as fh:  # overwritten in place, as another program might
        fh.write(b"this is not a database " * 4096)
    assert path.stat().st_ino == inode
    answer = app.ask(IB)
    assert len(answer.citations) == 6
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM papers").fetchone()[0] == 38


def test_malformed_auth_stops_start_up_with_a_clear_error(tmp_path: Path) -> None:
    env = {**os.environ, "ASKPAPERS_DATA_DIR": str(tmp_path / "d")}
    for value, why in (("justapassword", "pair 1 has no ':'"), ("ada:lovelace,bob", "pair 2 has no ':'"),
                       (":pw", "empty user name"), ("ada:", "empty password")):  # fmt: skip
        proc = subprocess.run([str(ASKPAPERS), "serve", "--port", "1"], capture_output=True, text=True, timeout=120,
                              env={**env, "ASKPAPERS_AUTH": value})  # fmt: skip
        assert proc.returncode == 1, proc.stderr
        assert "ASKPAPERS_AUTH must be user:password pairs" in proc.stderr and why in proc.stderr
        assert "Traceback" not in proc.stderr
        for secret in value.replace(",", ":").split(":"):
            if len(secret) > 3:
                assert secret not in proc.stderr


# -- login back-off, several users, and the Host check ----------------------------------------------------------


def test_login_back_off_several_users_and_the_host_check(corpus_settings: Any) -> None:
    """The back-off runs on an injected clock that only the test moves: no sleeping, and no outcome that depends
    on how fast a busy machine answers 100 requests."""
    import gradio as gr

    from askpapers.rag.settings import Settings, UISettings
    from askpapers.ui.app import launch
    from tests.test_ui import free_port

    now = [1000.0]
    settings = Settings(store=corpus_settings.store, ui=UISettings(auth="ada:lovelace, alan:turing"))
    _, url, _ = launch(settings, port=free_port(), block=False, clock=lambda: now[0])
    url = url.rstrip("/")
    try:

        def login(user: str, password: str) -> httpx.Response:
            return httpx.post(f"{url}/login", data={"username": user, "password": password}, timeout=30)

        assert login("ada", "lovelace").status_code == 200
        assert login("alan", "turing").status_code == 200
        assert [login("ada", "wrong").status_code for _ in range(3)] == [400, 400, 400]
        refused = login("ada", "lovelace")  # right password, but during the back-off
        assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
        # while the clock stands still, no guess is checked at all, however many are sent
        assert [login("ada", f"guess{i}").status_code for i in range(100)] == [429] * 100
        now[0] += 1.0  # the first wait is over: one more wrong guess is checked, and doubles the wait
        assert login("ada", "guess").status_code == 400
        assert login("ada", "lovelace").headers["retry-after"] == "2"
        now[0] += 1.5
        assert login("ada", "lovelace").headers["retry-after"] == "1"  # half a second left, rounded up
        now[0] += 0.5
        assert login("ada", "lovelace").status_code == 200
        assert login("ada", "wrong").status_code == 400  # a success forgets the failures
        port = url.rsplit(":", 1)[1]
        assert httpx.get(f"{url}/", headers={"Host": f"evil.example:{port}"}, timeout=30).status_code == 400
        assert httpx.get(f"{url}/", headers={"Host": f"localhost:{port}"}, timeout=30).status_code == 200
        assert httpx.get(f"{url}/", timeout=30).status_code == 200
    finally:
        gr.close_all()


def test_export_folders_are_rotated_and_removed_at_exit(tmp_path: Path) -> None:
    script = """
import sys
from askpapers.rag.types import Answer, Citation
from askpapers.ui.app import Exports
e = Exports(keep=5)
a = Answer(question="q", text="t [1]", found=True, citations=[
    Citation(n=1, paper_id="p", title="T", evidence="E.", abstract="E.", score=0.1)])
for _ in range(12):
    files = e.write(a)
print(e.root, len([p for p in e.root.iterdir() if p.is_dir()]), len(files))
"""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    root, kept, files = proc.stdout.split()
    assert int(kept) == 5 and int(files) == 3
    assert not Path(root).exists(), "the folder goes when the process exits"
    assert not list(tmp_path.glob("askpapers-export-*"))


EXPORTER = """
import os, signal, sys
from askpapers.rag.types import Answer, Citation
from askpapers.ui.exports import Exports
e = Exports()
e.write(Answer(question="q", text="t [1]", found=True, citations=[
    Citation(n=1, paper_id="p", title="T", evidence="E.", abstract="E.", score=0.1)]))
print(e.root, flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
sys.stdin.read()  # "live": until the test closes stdin
"""


def test_export_folders_of_killed_processes_are_removed_by_the_next_one(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    killed = subprocess.run([sys.executable, "-c", EXPORTER, "kill"], capture_output=True, text=True, env=env,
                            timeout=120)  # fmt: skip
    assert killed.returncode == -9
    dead = Path(killed.stdout.strip())
    assert dead.is_dir() and dead.parent == tmp_path, "a killed process cannot clean up after itself"
    live = subprocess.Popen([sys.executable, "-c", EXPORTER, "live"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)  # fmt: skip
    try:
        alive = Path(str(live.stdout.readline()).strip())  # type: ignore[union-attr]
        assert alive.is_dir()
        legacy = tmp_path / "askpapers-export-abc123"  # an older version's folder: no lock, left alone
        (legacy / "1").mkdir(parents=True)
        elsewhere = tmp_path / "elsewhere"  # a link to an unlocked folder, and a folder of another name
        (elsewhere / "keep").mkdir(parents=True)
        (elsewhere / "owner.lock").touch()
        (tmp_path / "askpapers-export-link").symlink_to(elsewhere)
        (tmp_path / "askpapers-export-file").write_text("x")
        started = subprocess.run([sys.executable, "-c", EXPORTER, "live"], input="", capture_output=True, text=True,
                                 env=env, timeout=120)  # fmt: skip
        assert started.returncode == 0, started.stderr
        assert not dead.exists(), "the next process removed the killed one's folder"
        assert alive.is_dir() and (alive / "1" / "cited-papers.bib").is_file(), "a live process's folder stays"
        assert legacy.is_dir() and (elsewhere / "keep").is_dir() and (tmp_path / "askpapers-export-link").is_symlink()
        assert (tmp_path / "askpapers-export-file").is_file()
        assert not Path(started.stdout.strip()).exists(), "and that one removed its own at exit"
    finally:
        live.communicate("", timeout=60)
    assert live.returncode == 0 and not alive.exists()


def test_serve_ended_by_sigterm_removes_its_export_folder(tmp_path: Path) -> None:
    import signal

    from tests.test_ui import free_port

    port = free_port()
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "ASKPAPERS_DATA_DIR": str(tmp_path / "data"),
           "ASKPAPERS_DEFAULT_CORPUS": str(CORPUS)}  # fmt: skip
    proc = subprocess.Popen([str(ASKPAPERS), "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        folders = list((tmp_path / "tmp").glob("askpapers-export-*"))
        assert len(folders) == 1
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM
    assert not list((tmp_path / "tmp").glob("askpapers-export-*")), "the folder goes with the server"


# -- text that fights the terminal or the page -------------------------------------------------------------------

EVIL_TITLE = "\x1b]0;pwned\x07Evil \x1b[2J\x1b[31mtitle\u202e gnp.exe"
EVIL_ABSTRACT = (
    "Capybara grooming networks are studied here. \x1b]52;c;ZXZpbA==\x07 The clipboard write above must never "
    "reach a terminal, \x9b31m nor this colour. " + "W" * 5000 + " ends the abstract."
)


@pytest.fixture(scope="module")
def evil_store(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    from askpapers.vectorstore.pipeline import ingest

    d = tmp_path_factory.mktemp("evil")
    f = d / "evil.jsonl"
    f.write_text(json.dumps({"id": "evil", "title": EVIL_TITLE, "abstract": EVIL_ABSTRACT}) + "\n", encoding="utf-8")
    settings = make_settings(d / "store")
    ingest([CORPUS, f], settings.store, progress=False, embedder=embedder)
    return settings


def test_cli_output_holds_no_escape_sequences_and_json_stays_exact(evil_store: Any) -> None:
    if evil_store.store.mode != "embedded":
        pytest.skip("the CLI runs against the embedded store here")
    env = {**os.environ, "ASKPAPERS_DATA_DIR": str(evil_store.store.data_dir),
           "ASKPAPERS_COLLECTION": evil_store.store.collection}  # fmt: skip
    q = "Which papers study capybara grooming networks?"
    for args in (["ask", q], ["search", "capybara grooming"], ["ask", q, "--mode", "extractive", "--k", "1"]):
        proc = subprocess.run([str(ASKPAPERS), *args], capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        for bad in ("\x1b", "\x07", "\x9b", "\u202e"):
            assert bad not in proc.stdout and bad not in proc.stderr, (args, bad)
        assert "Capybara grooming" in proc.stdout
    proc = subprocess.run([str(ASKPAPERS), "ask", q, "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert "\x1b" not in proc.stdout and "\x9b" not in proc.stdout and "\u202e" not in proc.stdout
    data = json.loads(proc.stdout)
    assert data["citations"][0]["abstract"] == EVIL_ABSTRACT and data["citations"][0]["title"] == EVIL_TITLE


def test_bidi_overrides_and_long_lines_are_tamed_in_the_page(evil_store: Any, browser: Any) -> None:
    from tests.test_ui import ask, opened

    with opened(browser, evil_store, 1200, 900) as page:
        ask(page, "Which papers study capybara grooming networks?")
        page.click("#source-1 summary")
        summary = page.locator("#source-1 summary").inner_text()
        assert "\u202e" not in summary and "Evil" in summary and "\x1b" not in summary
        overflow = page.evaluate("() => { const e = document.querySelector('#sources'); "
                                 "return e.scrollWidth - e.clientWidth; }")  # fmt: skip
        assert overflow <= 1, f"the sources panel overflows by {overflow}px"
