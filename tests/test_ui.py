"""The Gradio app in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from askpapers.vectorstore.titles import derive_title
from tests.conftest import CORPUS, make_settings

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]  # fmt: skip
XSS = (
    "Zebra stripe camouflage is studied with <script>window.__xss = 1</script> a new model. "
    'We show <img src=x onerror="window.__xss = 2"> that stripes confuse biting flies. '
    "See [our site](javascript:window.__xss=3) for details."
)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory, embedder) -> Iterator[str]:  # type: ignore[no-untyped-def]
    from askpapers.ui.app import launch
    from askpapers.vectorstore.pipeline import ingest

    d = tmp_path_factory.mktemp("ui")
    hostile = d / "hostile.jsonl"
    hostile.write_text(json.dumps({"id": "xss", "abstract": XSS}) + "\n", encoding="utf-8")
    settings = make_settings(d / "store")
    ingest([CORPUS, hostile], settings.store, progress=False, embedder=embedder)
    _, url, _ = launch(settings, port=free_port(), block=False)
    yield url.rstrip("/")
    import gradio as gr

    gr.close_all()


PATIENCE = 90_000  # ms a page waits for what a test expects before failing (a busy CI machine is slow, never wrong)


class _Patient:
    """The browser, whose pages wait ``PATIENCE`` for what they expect (Playwright's default is 30 s; a first
    answer on a loaded 2-core machine has taken longer). A wait still ends as soon as its condition holds."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def new_context(self, **kwargs: Any) -> Any:
        context = self._browser.new_context(**kwargs)
        context.set_default_timeout(PATIENCE)
        return context

    def new_page(self, **kwargs: Any) -> Any:
        page = self._browser.new_page(**kwargs)
        page.set_default_timeout(PATIENCE)
        return page

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield _Patient(b)
        b.close()


@pytest.fixture()
def page(browser, ui):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.requests = []  # type: ignore[attr-defined]
    page.on("request", lambda r: page.requests.append(r.url))  # type: ignore[attr-defined]
    page.goto(ui)
    page.wait_for_selector("#question textarea", timeout=60_000)
    yield page
    context.close()


@contextmanager
def opened(browser: Any, settings: Any, width: int = 1300, height: int = 1000) -> Iterator[Any]:
    """The app for ``settings`` on a free loopback port, open in a new page of ``browser``; closed after."""
    import gradio as gr

    from askpapers.ui.app import launch

    _, url, _ = launch(settings, port=free_port(), block=False)
    try:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(url)
        page.wait_for_selector("#question textarea", timeout=60_000)
        yield page
        page.close()
    finally:
        gr.close_all()


def ask(page: Any, question: str, done: str = "Answer mode") -> None:
    """Ask in the chat and wait for the answer: two new messages, and a notice matching the regex ``done``."""
    before = page.locator("#chat .message").count()
    page.fill("#question textarea", question)
    page.click("#ask")
    # the first update adds the two messages and clears the notice; the final one sets the notice again
    page.wait_for_function(
        "([n, done]) => document.querySelectorAll('#chat .message').length >= n + 2"
        " && new RegExp(done).test(document.querySelector('#notice')?.innerText || '')",
        arg=[before, done],
        timeout=60_000,
    )
    page.wait_for_timeout(300)


def last_answer(page: Any) -> str:
    return str(page.locator("#chat .message").last.inner_text())


def test_example_question_cites_papers_and_opens_a_source(page, ui) -> None:  # type: ignore[no-untyped-def]
    ask(page, "Which papers use information bottleneck?")
    text = last_answer(page)
    assert "Found 6 papers" in text and "[1]" in text and "[6]" in text
    assert page.locator("#sources details").count() == 6
    assert not page.locator("#source-1 .abstract").is_visible()
    page.click("#source-1 summary")
    assert page.locator("#source-1 .abstract").is_visible()
    assert "information bottleneck" in page.locator("#source-1 mark").inner_text().lower()
    assert "extractive" in page.locator("#notice").inner_text()
    names = page.locator("#exports").inner_text().replace("\n", "")
    assert "cited-papers.md" in names and "cited-papers.csv" in names and "cited-papers.bib" in names
    hosts = {u.split("/")[2] for u in page.requests if u.startswith("http")}
    assert hosts == {ui.split("/")[2]}, "everything is served locally: no CDN, no analytics"
    # ASKPAPERS_SCREENSHOT=docs/screenshot-chat.png refreshes the README's screenshot
    target = os.environ.get("ASKPAPERS_SCREENSHOT") or str(Path(tempfile.gettempdir()) / "askpapers-chat.png")
    page.screenshot(path=target, full_page=True)
    assert Path(target).stat().st_size > 10_000


def test_followup_uses_the_chat_history(page) -> None:  # type: ignore[no-untyped-def]
    ask(page, "Which papers use information bottleneck?")
    ask(page, "Which of those are about time series?")
    text = last_answer(page)
    assert "Of the 6 papers in the previous answer, 1 matches" in text
    assert page.locator("#sources details").count() == 1
    assert "CGTFra" in page.locator("#source-1 summary").inner_text()


def test_abstract_html_renders_as_text(page) -> None:  # type: ignore[no-untyped-def]
    ask(page, "Which papers are about zebra stripe camouflage?")
    assert page.locator("#sources details").count() == 1
    page.click("#source-1 summary")
    shown = page.locator("#source-1 .abstract").inner_text()
    assert "<script>window.__xss = 1</script>" in shown and "onerror" in shown
    assert "[our site](javascript:" in shown  # the Markdown link stays text
    js_links = (
        "() => [...document.querySelectorAll('a')].filter(a => /^\\s*javascript:/i.test(a.getAttribute('href') || ''))"
    )
    assert page.evaluate(js_links + ".length") == 0
    page.get_by_role("tab", name="Papers").click()
    page.fill("#paper-search textarea, #paper-search input", "Zebra")  # titles and abstracts
    page.wait_for_function(  # the count line the finished search wrote (not Gradio's "processing" status over it)
        "() => { const t = document.querySelector('#paper-count')?.innerText || '';"
        " return t.includes('match the search') && !/processing|pending|queue/i.test(t); }"
    )
    title = derive_title(XSS)  # the row of the hostile paper, by its derived title
    page.locator("#papers").get_by_text(title, exact=True).locator("visible=true").first.click()
    page.wait_for_selector("#abstract-view", timeout=60_000)
    assert "<img src=x" in page.locator("#abstract-view").inner_text()
    assert page.evaluate("window.__xss") is None, "no script from an abstract may run"


def test_browse_and_map(page) -> None:  # type: ignore[no-untyped-def]
    page.get_by_role("tab", name="Papers").click()
    page.wait_for_function("() => document.querySelector('#paper-count')?.innerText.includes('papers')")
    assert "39 papers" in page.locator("#paper-count").inner_text()
    page.get_by_role("tab", name="Map").click()
    page.wait_for_selector("#map canvas, #map svg", timeout=60_000)


def test_upload_then_find_and_broken_upload(page, tmp_path: Path) -> None:
    good = tmp_path / "axolotl.jsonl"
    good.write_text(
        json.dumps({"id": "axo", "title": "Axolotl limb regeneration", "abstract": "We study axolotl limb "
                    "regeneration with single-cell atlases. Regeneration depends on positional memory."}) + "\n"
    )  # fmt: skip
    bad = tmp_path / "bad.jsonl"  # (a good line with an abstract long enough for an upload, and a broken one)
    bad.write_text('{"id": "ok1", "abstract": "Newts regrow their tails within weeks."}\n{"id": broken\n')
    page.get_by_role("tab", name="Papers").click()
    page.wait_for_function("() => document.querySelector('#paper-count')?.innerText.includes('papers')")
    before = page.locator("#paper-count").inner_text()
    page.set_input_files("#upload input[type=file]", str(bad))
    page.click("#add")
    page.wait_for_function("() => document.querySelector('#upload-status')?.innerText.includes('Nothing was added')")
    status = page.locator("#upload-status").inner_text()
    assert "bad.jsonl:2" in status
    assert "Skip bad lines" in status and "--skip-bad" not in status, "the web's own terms, not a CLI flag"
    # the count is unchanged (once any progress timer of the refresh has gone)
    page.wait_for_function("b => document.querySelector('#paper-count')?.innerText.trim() === b", arg=before.strip())
    # the file is still chosen: tick the box and add again, and the good line goes in
    page.locator("#skip-bad input[type=checkbox]").check()
    page.click("#add")
    page.wait_for_function("() => document.querySelector('#upload-status')?.innerText.includes('1 added')")
    status = page.locator("#upload-status").inner_text()
    assert "skipped bad.jsonl:2" in status, status
    page.wait_for_function("() => document.querySelector('#paper-count')?.innerText.includes('40 papers')")
    page.set_input_files("#upload input[type=file]", str(good))
    page.click("#add")
    page.wait_for_function("() => document.querySelector('#upload-status')?.innerText.includes('holds 41 papers')")
    page.wait_for_function("() => document.querySelector('#paper-count')?.innerText.includes('41 papers')")
    page.get_by_role("tab", name="Chat").click()
    ask(page, "Which papers study axolotl regeneration?")
    assert "Axolotl limb regeneration" in last_answer(page)


def test_gradio_client(ui) -> None:  # type: ignore[no-untyped-def]
    from gradio_client import Client

    client = Client(ui + "/", verbose=False)
    result = client.predict("Which papers use information bottleneck?", None, "extractive", api_name="/ask")
    assert result["found"] is True and len(result["citations"]) == 6
    assert all(c["evidence"] in c["abstract"] for c in result["citations"])
    follow = client.predict(
        "Which of those are about time series?",
        [{"role": "user", "content": "Which papers use information bottleneck?"}],
        "extractive",
        api_name="/ask",
    )
    assert [c["title"] for c in follow["citations"]] == ["CGTFra: Consistent inter-variate dependency modeling"]


def test_login_when_auth_is_set(browser, tmp_path: Path, monkeypatch, corpus_settings) -> None:  # type: ignore[no-untyped-def]
    from askpapers.rag.settings import Settings, UISettings
    from askpapers.ui.app import launch

    settings = Settings(store=corpus_settings.store, ui=UISettings(auth="ada:lovelace"))
    _, url, _ = launch(settings, port=free_port(), block=False)
    page = browser.new_page()
    page.goto(url)
    page.wait_for_selector("input[type=password]", timeout=60_000)
    assert page.locator("#question textarea").count() == 0
    page.fill("input[type=text]", "ada")
    page.fill("input[type=password]", "lovelace")
    page.keyboard.press("Enter")
    page.wait_for_selector("#question textarea", timeout=60_000)
    page.close()
