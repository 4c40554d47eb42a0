"""The chat tab with a long answer, in a real headless Chromium: showing N of M and "Show all", citations that open
and scroll to their source, a layout that fits, math and emphasis rendered, examples from the store's corpus."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_settings
from tests.test_k_limit import quokka_corpus
from tests.test_ui import CHROMIUM, ask, free_port, last_answer
from tests.test_ui import browser as browser  # the module's headless Chromium fixture

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")
Q = "Which papers study quokka foraging?"
N = 60  # papers that state the phrase: more than the 50 an answer lists by default


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[str]:
    import gradio as gr

    from askpapers.ui.app import launch
    from askpapers.vectorstore.pipeline import ingest

    d = tmp_path_factory.mktemp("ui-chat")
    settings = make_settings(d / "store")  # only these papers: not the bundled corpus
    ingest([quokka_corpus(d / "q.jsonl", N)], settings.store, progress=False, embedder=embedder)
    _, address, _ = launch(settings, port=free_port(), block=False)
    yield address.rstrip("/")
    gr.close_all()


def open_page(browser: Any, url: str, width: int = 1400, height: int = 1000, script: str = "") -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    if script:
        page.add_init_script(script)
    page.requests = []
    page.on("request", lambda r: page.requests.append(r.url))
    page.goto(url)
    page.wait_for_selector("#question textarea", timeout=60_000)
    return page


@pytest.fixture()
def page(browser: Any, url: str) -> Iterator[Any]:
    page = open_page(browser, url)
    yield page
    page.close()


def rect(page: Any, selector: str) -> dict[str, float]:
    return dict(page.evaluate(f"() => document.querySelector({selector!r}).getBoundingClientRect().toJSON()"))


def test_a_long_answer_says_showing_and_show_all_lists_the_rest(page: Any) -> None:
    ask(page, Q)
    text = last_answer(page)
    assert f"Found {N} papers" in text and f"Showing 50 of {N} papers" in text
    assert page.locator("#sources details").count() == 50
    assert f"Showing 50 of {N} papers" in page.locator("#sources").inner_text()
    assert "50 of 60 cited" in page.locator("#notice").inner_text()
    button = page.locator("#show-all")
    assert button.is_visible() and f"Show all {N} papers" in button.inner_text()
    button.click()
    page.wait_for_function(f"() => document.querySelectorAll('#sources details').length === {N}", timeout=60_000)
    assert page.locator("#chat .message-row").count() == 2, "the longer answer replaces the shorter one"
    assert "Showing" not in last_answer(page) and f"[{N}]" in last_answer(page)
    assert not page.locator("#show-all").is_visible()


def test_a_long_answer_is_a_compact_numbered_list(page: Any) -> None:
    ask(page, Q)
    answer = page.locator("#chat .message").last
    assert answer.locator("ol > li").count() == 50
    boxes = answer.locator("ol > li").evaluate_all("els => els.map(e => e.getBoundingClientRect().toJSON())")
    line = float(answer.locator("ol > li").first.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)"))
    gaps = [b["top"] - a["bottom"] for a, b in itertools.pairwise(boxes)]
    assert max(gaps) < line / 2, f"no blank line between the items: gaps up to {max(gaps):.0f}px"
    head = answer.locator("p").first.evaluate("e => e.getBoundingClientRect().bottom")
    assert boxes[0]["top"] - head < line, "nor between the first line and the list"


def test_a_citation_opens_scrolls_to_and_flashes_its_source(page: Any) -> None:
    ask(page, Q)
    page.evaluate("() => window.scrollTo(0, 0)")  # (clicking Ask scrolled the page to the button)
    before = page.evaluate("() => window.scrollY")
    assert not page.locator("#source-45").evaluate("e => e.open")
    page.evaluate("() => document.querySelector('#chat a.cite[href=\"#source-45\"]').click()")  # no test scrolling
    page.wait_for_timeout(300)
    assert page.locator("#source-45").evaluate("e => e.open"), "the source opens"
    assert "flash" in str(page.locator("#source-45").get_attribute("class")), "and is highlighted"
    panel, source = rect(page, "#sources"), rect(page, "#source-45")
    assert panel["top"] - 1 <= source["top"] < panel["bottom"], "the panel scrolls to it"
    assert page.evaluate("() => window.scrollY") == before, "the page does not move: the chat stays in view"
    chat = rect(page, "#chat")
    assert chat["top"] >= 0 and chat["bottom"] <= page.viewport_size["height"] + 1


def test_a_long_answer_fits_the_layout(page: Any) -> None:
    ask(page, Q)
    height = page.viewport_size["height"]
    assert rect(page, "#sources")["height"] <= height, "the sources panel scrolls inside the page"
    closed = page.locator("#source-7").evaluate("e => e.getBoundingClientRect().height")
    assert closed < 40, "a source is one line until opened"
    exports, question, chat, sources = (
        rect(page, "#exports"),
        rect(page, "#question"),
        rect(page, "#chat"),
        rect(page, "#sources"),
    )
    assert exports["left"] >= chat["right"] and exports["top"] >= sources["bottom"], "exports: in the sources column"
    assert exports["bottom"] <= height, "… and in view"
    assert question["top"] >= chat["bottom"] - 1 and question["bottom"] <= height, "the question box stays in view"
    # the question and the answer's first line stay in view: the chat does not jump to the end of the answer
    user, chat = rect(page, "#chat .user-row"), rect(page, "#chat")
    assert chat["top"] <= user["top"] < chat["bottom"]
    first = page.locator("#chat .message").last.locator("p").first
    assert "Found 60 papers" in first.inner_text() and first.is_visible()
    top = first.evaluate("e => e.getBoundingClientRect().top")
    assert chat["top"] <= top < chat["bottom"]


def test_the_question_box_is_in_view_when_the_page_opens(page: Any) -> None:
    height = page.viewport_size["height"]
    assert not page.locator("#exports").is_visible(), "no empty export box before there is an answer"
    for selector in ("#question", "#ask"):
        box = rect(page, selector)
        assert box["top"] >= 0 and box["bottom"] <= height, f"{selector} is below the fold: {box}"
    ask(page, Q)
    assert page.locator("#exports").is_visible() and page.locator("#exports").inner_text().count("cited-papers") == 3
    for selector in ("#question", "#ask"):  # after an answer too: the exports and "Show all" are beside it
        box = rect(page, selector)
        assert box["top"] >= 0 and box["bottom"] <= height, f"{selector} is below the fold after an answer: {box}"
    assert page.locator("#show-all").is_visible() and rect(page, "#show-all")["left"] >= rect(page, "#chat")["right"]
    page.get_by_text("New chat").click()
    page.wait_for_function(
        "() => !document.querySelector('#exports') || !document.querySelector('#exports').offsetParent"
    )


def test_math_and_emphasis_render_in_the_chat_and_the_sources(page: Any) -> None:
    ask(page, Q)
    page.click("#show-all")  # every paper, so the one with math and the one with emphasis are among them
    page.wait_for_function(f"() => document.querySelectorAll('#sources details').length === {N}", timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('#sources .katex').length > 0", timeout=60_000)
    assert "$\\times$" not in page.locator("#sources").evaluate("e => e.textContent")
    strong = page.locator("#sources strong").evaluate_all("els => els.map(e => e.textContent)")
    assert "QuokkaNet" in strong, "**QuokkaNet** in an abstract shows as bold, without the asterisks"
    assert "**QuokkaNet**" not in page.locator("#sources").evaluate("e => e.textContent")
    assert "**QuokkaNet**" not in last_answer(page) and "QuokkaNet" in last_answer(page)
    hosts = {u.split("/")[2] for u in page.requests if u.startswith("http")}
    assert len(hosts) == 1, f"KaTeX comes from the app itself, never a CDN: {hosts}"


def test_examples_come_from_the_corpus_in_the_store(page: Any) -> None:
    # (Gradio draws the examples' buttons after the page loads: read them once they are there)
    page.locator("#examples button").first.wait_for()
    examples = page.locator("#examples").inner_text()
    assert "WaterSIC" not in examples and "quokka foraging" in examples
    page.locator("#examples button").first.click()
    # the example reaches the question box through an event of its own: ask only once it is there
    page.wait_for_function("() => (document.querySelector('#question textarea')?.value || '').trim().length > 0")
    page.click("#ask")
    page.wait_for_function("() => /Answer mode/.test(document.querySelector('#notice')?.innerText || '')")
    assert "Found" in last_answer(page) or "papers" in last_answer(page)


def test_an_empty_question_leaves_no_bubble_and_the_year_is_empty(page: Any) -> None:
    page.click("#ask")
    page.wait_for_function("() => /empty/.test(document.querySelector('#notice')?.innerText || '')")
    assert page.locator("#chat .message-row").count() == 0
    page.get_by_text("Settings").click()
    assert page.locator("#year input").input_value() == ""


def test_on_a_narrow_screen_the_answer_is_full_width_and_the_input_comes_before_the_sources(
    browser: Any, url: str
) -> None:
    page = open_page(browser, url, 390, 844)
    try:
        ask(page, Q)
        chat, sources, question = rect(page, "#chat"), rect(page, "#sources"), rect(page, "#question")
        exports = rect(page, "#exports")
        assert chat["bottom"] <= question["top"] < sources["top"] <= exports["top"], "answer, input, then sources"
        assert question["bottom"] <= 844, "the question box is on the first screen"
        assert chat["width"] >= 390 - 2 * 12, "the chat spans the screen"
        answer = page.locator("#chat .message-row").last.evaluate("e => e.getBoundingClientRect().toJSON()")
        assert answer["width"] >= chat["width"] - 8, f"the answer is not an inset bubble: {answer} in {chat}"
        items = page.locator("#chat .message").last.locator("li")
        visible = sum(
            1
            for i in range(min(items.count(), 10))
            if items.nth(i).evaluate(
                "(e, c) => { const r = e.getBoundingClientRect(); return r.bottom <= c.bottom; }", chat
            )
        )
        assert visible >= 2, "more than a list item and a half is seen at once"
        page.screenshot(path=str(Path("/tmp") / "askpapers-chat-narrow.png"), full_page=True)
    finally:
        page.close()


# Counts the maps the server sends: the page's event stream (Gradio reads it with fetch) passes through a counter.
MAP_MARK = "class='corpus-map'"
COUNT_MAPS = """
(() => {
  window.__maps = 0; window.__bytes = 0;
  const MARK = MARK_JSON, fetched = window.fetch;
  window.fetch = async (...args) => {
    const r = await fetched(...args);
    const url = String((args[0] && args[0].url) || args[0]);
    if (!url.includes('queue/data') || !r.body) return r;
    const dec = new TextDecoder();
    let rest = '';
    const count = new TransformStream({ transform(chunk, out) {
      window.__bytes += chunk.byteLength;
      const text = rest + dec.decode(chunk, {stream: true});
      window.__maps += text.split(MARK).length - 1;
      rest = text.slice(-(MARK.length - 1));
      out.enqueue(chunk);
    }});
    return new Response(r.body.pipeThrough(count), {status: r.status, statusText: r.statusText, headers: r.headers});
  };
})();
""".replace("MARK_JSON", json.dumps(MAP_MARK))


def test_the_map_is_sent_again_only_when_its_stars_change(browser: Any, url: str) -> None:
    page = open_page(browser, url, script=COUNT_MAPS)
    try:
        page.wait_for_function("() => window.__maps === 1", timeout=60_000)  # the map, once the page has loaded
        ask(page, Q)
        page.wait_for_function("() => window.__maps === 2", timeout=60_000)  # now with the 50 cited papers starred
        ask(page, Q)  # the same 50 papers: the page has that map already
        page.click("#show-all")  # 60 papers: new stars
        page.wait_for_function(f"() => document.querySelectorAll('#sources details').length === {N}", timeout=60_000)
        page.get_by_role("tab", name="Map").click()
        page.wait_for_function(f"() => document.querySelectorAll('#map .pt.cited').length === {N}", timeout=60_000)
        assert page.evaluate("() => window.__maps") == 3, "sent on load, for the first answer and for “Show all”"
    finally:
        page.close()
