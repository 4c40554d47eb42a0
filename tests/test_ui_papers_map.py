"""The Papers and Map tabs in a real headless Chromium: abstract search, columns that fit, a visible sort
control, LaTeX titles as text; the map's stars, labels, legend, tooltips and clicks, hostile titles inert."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from askpapers.ui.render import latex_text
from tests.conftest import CORPUS, make_settings
from tests.test_ui import CHROMIUM, ask, free_port
from tests.test_ui import browser as browser  # the module's headless Chromium fixture

browser_test = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")
HOSTILE_TITLE = '<img src=x onerror="window.__xss = 7">Zebra <b>stripes</b>'
EXTRA = [
    {"id": "latex", "title": "$\\bf{\\Phi}_\\textrm{Flow}$: Differentiable Simulations on $\\ell_2$ balls",
     "abstract": "We simulate fluids differentiably with a new solver.", "venue": "AAAI", "year": 2019},
    {"id": "hostile", "title": HOSTILE_TITLE, "abstract": "Zebra stripes confuse biting flies, we find.",
     "venue": "Zoology <script>window.__xss = 8</script>", "year": 2021},
]  # fmt: skip


def test_latex_titles_become_plain_text() -> None:
    assert latex_text("$\\bf{\\Phi}_\\textrm{Flow}$: Differentiable") == "Φ_Flow: Differentiable"
    assert latex_text("Optimal bounds for $\\ell_p$ sampling via $\\ell_2$") == "Optimal bounds for ℓₚ sampling via ℓ₂"
    assert latex_text("RoboMP$^2$ and $\\mathcal{O}(\\sqrt{T})$") == "RoboMP² and O(√T)"
    assert latex_text("costs $5 only") == "costs $5 only"  # one dollar sign is no math
    assert "<" in latex_text("$<img src=x>$")  # text stays text: escaping is the renderer's job


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    from askpapers.vectorstore.pipeline import ingest

    d = tmp_path_factory.mktemp("papers-map")
    extra = d / "extra.jsonl"
    extra.write_text("".join(json.dumps(r) + "\n" for r in EXTRA), encoding="utf-8")
    s = make_settings(d / "store")
    ingest([CORPUS, extra], s.store, progress=False, embedder=embedder)
    return s


@pytest.fixture(scope="module")
def url(settings: Any) -> Iterator[str]:
    import gradio as gr

    from askpapers.ui.app import launch

    _, address, _ = launch(settings, port=free_port(), block=False)
    yield address.rstrip("/")
    gr.close_all()


def open_page(browser: Any, url: str, width: int = 1400, height: int = 1000) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    page.wait_for_selector("#question textarea", timeout=60_000)
    return page


def papers_tab(page: Any) -> None:
    page.get_by_role("tab", name="Papers").click()
    page.wait_for_function("() => document.querySelector('#paper-count')?.innerText.includes('papers')")


# The count line as the finished search wrote it: not the old one, not Gradio's "processing | 0.4s" status over it
SETTLED = """([before, want]) => {
    const t = document.querySelector('#paper-count')?.innerText || '';
    return t !== before && t.includes(want) && !/processing|pending|queue/i.test(t);
}"""


def search(page: Any, text: str) -> str:
    before = page.locator("#paper-count").inner_text()
    page.fill("#paper-search textarea, #paper-search input", text)
    want = "match the search" if text.strip() else "in the corpus"
    page.wait_for_function(SETTLED, arg=[before, want])
    return str(page.locator("#paper-count").inner_text())


def column(page: Any, col: int) -> list[str]:
    cells = page.locator(f"#papers [role=gridcell][data-col='{col}']")
    return [cells.nth(i).inner_text().strip() for i in range(cells.count())]


def map_tab(page: Any, selector: str = "#map svg .pt") -> None:
    page.get_by_role("tab", name="Map").click()
    page.wait_for_selector(selector, timeout=60_000)


@browser_test
def test_search_covers_abstracts_with_a_match_count(browser: Any, url: str, settings: Any) -> None:
    from askpapers.rag.api import AskPapers

    everything = AskPapers(settings).papers()
    # the oracle: papers whose abstract says it (most of them do not say it in the title)
    says = [p for p in everything if "bottleneck" in f"{p.title} {p.abstract}".lower()]
    in_title = [p for p in says if "bottleneck" in p.title.lower()]
    assert len(says) > len(in_title) >= 1
    page = open_page(browser, url)
    papers_tab(page)
    count = search(page, "bottleneck")
    assert f"{len(says)} of {len(everything)} papers" in count
    shown = column(page, 0)
    assert len(shown) == len(says)
    assert sorted(shown) == sorted(latex_text(p.title) for p in says)
    page.click("#papers [role=gridcell][data-col='0'] >> nth=0")
    page.wait_for_selector("#abstract-view", timeout=60_000)
    assert "bottleneck" in page.locator("#abstract-view").inner_text().lower()
    assert "match" not in search(page, "")  # cleared: every paper again
    assert len(everything) > len(says)
    page.close()


@browser_test
@pytest.mark.parametrize("width,height", [(1400, 1000), (390, 844)])
def test_columns_fit_and_latex_titles_are_text(browser: Any, url: str, width: int, height: int) -> None:
    page = open_page(browser, url, width, height)
    papers_tab(page)
    box = page.locator("#papers").bounding_box()
    for name in ("Title", "Venue", "Year", "Code"):
        head = page.locator(f"#papers th[title='{name}']").bounding_box()
        assert head is not None and head["width"] > 20, name
        assert head["x"] >= box["x"] - 1 and head["x"] + head["width"] <= box["x"] + box["width"] + 1, name
    assert page.locator("#papers th[title='ID']").is_hidden()
    wrap = "document.querySelector('#papers .virtual-table-viewport')"
    assert page.evaluate(f"() => {wrap}.scrollWidth <= {wrap}.clientWidth + 1"), "no horizontal scrolling"
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
    search(page, "Differentiable Simulations")
    title = column(page, 0)[0]
    assert title.startswith("Φ_Flow: Differentiable Simulations on ℓ₂ balls")
    assert "\\" not in title and "$" not in title
    page.close()


@browser_test
def test_a_visible_sort_control_orders_by_title_venue_and_year(browser: Any, url: str) -> None:
    page = open_page(browser, url)
    papers_tab(page)
    control = page.locator("#paper-sort")
    assert control.is_visible() and "Sort by" in control.inner_text()
    titles = column(page, 0)
    assert titles == sorted(titles, key=str.lower)
    for label, col, check in (
        ("Oldest first", 2, lambda v: v[:2] == ["2019", "2021"] and v == sorted(v)),
        ("Newest first", 2, lambda v: "2019" not in v[:3] and v == sorted(v, reverse=True)),
        ("Venue", 1, lambda v: v[0] == "AAAI"),
    ):
        before = column(page, 0)
        control.get_by_label(label).check()
        page.wait_for_function(
            "b => [...document.querySelectorAll(\"#papers [role=gridcell][data-col='0']\")].map(c => c.innerText"
            ".trim()).join('|') !== b",
            arg="|".join(before),
        )
        values = column(page, col)
        assert check(values), (label, values[:5], values[-5:])
    page.close()


@browser_test
def test_map_stars_labels_legend_tooltip_and_click(browser: Any, url: str) -> None:
    page = open_page(browser, url)
    ask(page, "Which papers use information bottleneck?")
    cited = page.locator("#sources details").count()
    assert cited >= 2
    map_tab(page, "#map svg .pt.cited")
    assert page.locator("#map svg .pt.cited").count() == cited
    # the stars are drawn on top: after every plain point
    on_top = "() => { const s = [...document.querySelectorAll('#map svg > *')]; const i = s.findIndex(e => "
    on_top += "e.matches('.cited')); return i > 0 && s.slice(i).every(e => e.matches('.cited')); }"
    assert page.evaluate(on_top)
    legend = page.locator("#map .map-legend li")
    topics = legend.count() - 1
    assert topics >= 2 and "cited in the last answer" in legend.first.inner_text()
    plot = page.locator("#map").bounding_box()
    for i in range(legend.count()):  # every entry is shown whole, none cut off
        b = legend.nth(i).bounding_box()
        assert legend.nth(i).is_visible() and b["x"] + b["width"] <= plot["x"] + plot["width"] + 1
    labels = page.locator("#map .map-label .name")
    assert labels.count() == topics
    for i in range(topics):
        name = labels.nth(i).inner_text()
        assert labels.nth(i).is_visible() and name and not name[0].isdigit()
        assert not {"https", "github", "com"} & set(name.replace("·", " ").split()), name
    # colours: one per topic, none of them the stars' colour
    dots = "[...document.querySelectorAll('#map circle.pt')]"
    assert len(set(page.evaluate(f"() => {dots}.map(c => c.getAttribute('fill'))"))) == topics
    star = page.evaluate("() => getComputedStyle(document.querySelector('#map .star-shape')).fill")
    assert star not in page.evaluate(f"() => {dots}.map(c => getComputedStyle(c).fill)")
    # pointing at a star shows its title and topic, no coordinates; a click opens its abstract
    first = page.locator("#map .pt.cited").first
    title = first.get_attribute("data-title")
    first.hover()
    tip = page.locator("#map .map-tip")
    assert tip.is_visible() and title in tip.inner_text()
    assert "x:" not in tip.inner_text() and "y:" not in tip.inner_text()
    first.click()
    page.wait_for_selector("#map-abstract-view", timeout=60_000)
    assert page.locator("#map-abstract-view h3").inner_text() == title
    page.close()


@browser_test
def test_hostile_titles_stay_text_on_the_map(browser: Any, url: str) -> None:
    page = open_page(browser, url)
    map_tab(page)
    point = page.locator("#map .pt[data-id='hostile']")
    assert point.count() == 1 and point.get_attribute("data-title") == HOSTILE_TITLE
    point.hover()
    assert HOSTILE_TITLE in page.locator("#map .map-tip").inner_text()
    point.click(force=True)
    page.wait_for_selector("#map-abstract-view", timeout=60_000)
    assert HOSTILE_TITLE in page.locator("#map-abstract-view").inner_text()
    assert "<script>" in page.locator("#map-abstract-view").inner_text()
    assert page.locator("#map img, #map-abstract img, #map b:not(.map-tip b)").count() == 0
    assert page.evaluate("window.__xss") is None
    page.close()


@browser_test
def test_map_on_a_phone(browser: Any, url: str, tmp_path: Path) -> None:
    page = open_page(browser, url, 390, 844)
    map_tab(page)
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
    nums = page.locator("#map .map-label .num")
    assert nums.count() >= 2 and nums.first.is_visible()  # numbered on the map, named in the legend
    assert page.locator("#map .map-legend").is_visible()
    page.locator("#map circle.pt").first.click(force=True)
    page.wait_for_selector("#map-abstract-view", timeout=60_000)
    page.close()


class Gate:
    """A function whose calls each wait until the test lets them go: the test chooses the order they finish in."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.calls: list[threading.Event] = []
        self.done = 0
        self.free = False  # let every later call through at once
        self.lock = threading.Lock()

    def __call__(self) -> Any:
        go = threading.Event()
        with self.lock:
            self.calls.append(go)
            if self.free:
                go.set()
        go.wait(timeout=300)
        try:
            return self.fn()
        finally:
            with self.lock:
                self.done += 1

    def open(self) -> None:
        for go in list(self.calls):
            go.set()


def until(page: Any, ready: Any, what: str) -> None:
    for _ in range(600):
        if ready():
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"timed out waiting for {what}")


@browser_test
def test_a_fit_that_finishes_after_an_answer_stars_the_last_answer(browser: Any, tmp_path: Path, embedder: Any) -> None:
    """No projection is cached, so every map waits for the first fit. Two answers are given meanwhile: the map
    then stars the second answer's papers (its redraw is not dropped while the first one waits), and the page's
    first map, asked for before any answer, finishing last does not wipe them."""
    import gradio as gr

    from askpapers.rag.api import AskPapers
    from askpapers.ui.app import launch
    from askpapers.vectorstore.pipeline import ingest

    s = make_settings(tmp_path / "store")
    ingest([CORPUS], s.store, progress=False, embedder=embedder)
    assert not (s.store.data_dir / "map-projection.npz").exists()
    app = AskPapers(s)
    gate = Gate(app.corpus_map)
    app.corpus_map = gate  # type: ignore[method-assign]
    _, address, _ = launch(s, app=app, port=free_port(), block=False)
    try:
        page = open_page(browser, address.rstrip("/"))
        until(page, lambda: len(gate.calls) >= 2, "the start-up fit and the page's first map")
        ask(page, "Which papers use information bottleneck?")
        assert page.locator("#sources details").count() == 6
        until(page, lambda: len(gate.calls) >= 3, "the first answer's map")
        ask(page, "Which papers are about reservoir computing?")
        cited = page.locator("#sources details").count()
        assert cited == 1
        page.get_by_role("tab", name="Map").click()  # (a tab not shown is not drawn)
        gate.free = True
        gate.calls[2].set()  # the fit runs for the first answer's map; every later redraw goes straight through
        page.wait_for_function(
            "n => (document.querySelector('#map')?.innerText || '').includes(`cited in the last answer (${n})`)",
            arg=cited, timeout=120_000,
        )  # fmt: skip
        gate.calls[1].set()  # the page's first map (no answer yet) and the start-up fit finish last
        gate.calls[0].set()
        until(page, lambda: gate.done == len(gate.calls), "every redraw to finish")
        page.wait_for_timeout(1500)  # (their outputs, if any, reach the page)
        page.wait_for_selector("#map svg .pt.cited", timeout=60_000)
        assert f"cited in the last answer ({cited})" in page.locator("#map .map-legend").inner_text()
        assert page.locator("#map svg .pt.cited").count() == cited
        page.close()
    finally:
        gate.open()
        gr.close_all()
