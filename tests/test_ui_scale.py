"""Graceful degradation of the web app at a large corpus (issue 25), measured by what is read, never by time.

The bundled corpus of 38 papers stands in for a large one through small settings: the Map draws a sample of
``map_points`` papers (chosen by a hash of their ids, the cited papers always added, and says so), the Papers tab
reads ``page_size`` records a page, and the app's start reads no paper beyond the example questions' few. Store
reads are counted where the store is read (:class:`vectorstore.store.Store`), below every cache."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from askpapers.rag.api import AskPapers
from askpapers.rag.report.catalogue import shown_title
from askpapers.rag.settings import UISettings
from askpapers.vectorstore.lexical import rowid_of
from tests.conftest import CORPUS, make_settings
from tests.test_ui import CHROMIUM, free_port
from tests.test_ui import browser as browser  # the module's headless Chromium fixture

browser_test = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium is not installed")
N = 10  # the map's sample
PAGE = 7  # papers per page (38 papers: 6 pages, the last of 3)
TOTAL = 38


@pytest.fixture(scope="module")
def store_settings(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Any:
    from askpapers.vectorstore.pipeline import ingest

    s = make_settings(tmp_path_factory.mktemp("scale") / "store")
    assert ingest([CORPUS], s.store, progress=False, embedder=embedder).added == TOTAL
    return s


def small(settings: Any, **ui: Any) -> Any:
    return settings.model_copy(update={"ui": UISettings(**{"map_points": N, "page_size": PAGE, **ui})})


class Reads:
    """Records, vectors and full scans read from one facade's store, counted as they come back. Records and vectors
    are read from the BM25 index, and from Chroma those it lacks: both count, as ``get_papers``, ``paper_vectors``
    and ``chunk_vectors``."""

    def __init__(self, app: AskPapers) -> None:
        self.counts: Counter[str] = Counter()
        store = app.store_index.store
        dense = app.store_index.dense
        for name in ("paper_vectors", "chunk_vectors"):
            setattr(dense, f"_{name}", self._counted(name, getattr(dense, f"_{name}")))
        records = app.store_index.records
        records._read = self._counted("get_papers", records._read)  # type: ignore[method-assign]
        every = store.iter_papers

        def iter_papers(*args: Any, **kwargs: Any) -> Iterator[Any]:
            for p in every(*args, **kwargs):
                self.counts["iter_papers"] += 1
                yield p

        store.iter_papers = iter_papers  # type: ignore[method-assign]

    def _counted(self, name: str, fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        def call(*args: Any, **kwargs: Any) -> dict[str, Any]:
            out = fn(*args, **kwargs)
            self.counts[name] += len(out)
            return out

        return call

    def take(self) -> Counter[str]:
        out = Counter(self.counts)
        self.counts.clear()
        return out


def facade(settings: Any) -> tuple[AskPapers, Reads]:
    app = AskPapers(settings, warm=False)
    app.index  # noqa: B018  (open the store)
    return app, Reads(app)


def test_the_listing_follows_incremental_updates(tmp_path: Path) -> None:
    """The lexical index's listing (what the pages sort and the sample is drawn from) gains added papers and
    a replaced paper's new title in an update, as a rebuild would have them."""
    from askpapers.vectorstore.lexical import LexicalIndex
    from askpapers.vectorstore.types import Paper

    index = LexicalIndex(tmp_path / "x.lexical.sqlite")
    index.rebuild([Paper("a", "Alpha", "One abstract.", "V1", 2020), Paper("b", "Beta", "Two abstract.")], "r1")
    index.update([Paper("b", "Beta two", "Two abstract.", "V2", 2021), Paper("c", "Gamma", "Three.")], "r2", 0.0)
    assert sorted(index.listing()) == [
        ("a", "Alpha", "V1", 2020),
        ("b", "Beta two", "V2", 2021),
        ("c", "Gamma", "", None),
    ]
    assert index.sample_ids(3) == sorted("abc", key=rowid_of) and index.years() == [2021, 2020]


# -- the map's sample ------------------------------------------------------------------------------------------
def test_the_map_is_a_bounded_stable_sample_that_says_so(store_settings: Any, monkeypatch: Any) -> None:
    import askpapers.rag.report.topic_map as topic_map

    fitted: list[int] = []
    named: list[int] = []
    project, names = topic_map.project, topic_map.topic_names
    monkeypatch.setattr(topic_map, "project", lambda v, threads=1: fitted.append(len(v)) or project(v, threads))
    monkeypatch.setattr(topic_map, "topic_names", lambda p, labels, words=3: named.append(len(p)) or names(p, labels))
    (store_settings.store.data_dir / "map-projection.npz").unlink(missing_ok=True)
    app, reads = facade(small(store_settings))
    view = app.map_view([])
    ids = [p.paper_id for p in view.points]
    everyone = [p.paper_id for p in app.index.listing()]
    assert len(everyone) == TOTAL and len(ids) == N == view.sampled and view.total == TOTAL
    assert sorted(ids) == sorted(sorted(everyone, key=rowid_of)[:N])  # the ids that hash lowest
    assert fitted == [N] and named == [N]  # the projection and the topics: the sample's papers only
    counted = reads.take()
    assert counted["get_papers"] == N and counted["paper_vectors"] == N and counted["iter_papers"] == 0
    assert view.note() == "Showing 10 of 38 papers, a sample (the same papers until the corpus changes)."
    again, _ = facade(small(store_settings))  # another process: the same sample, drawn at the same places
    assert [(p.paper_id, p.x, p.y, p.topic) for p in again.map_view([]).points] == [
        (p.paper_id, p.x, p.y, p.topic) for p in view.points
    ]
    assert fitted == [N]  # (its projection came from the file the first one stored)


def test_cited_papers_are_always_on_the_map(store_settings: Any) -> None:
    app, reads = facade(small(store_settings))
    sample = app.map_view([]).points
    reads.take()
    inside = [p.paper_id for p in sample[:2]]
    outside = [p.paper_id for p in app.index.listing() if p.paper_id not in {q.paper_id for q in sample}][:3]
    view = app.map_view([*inside, *outside, "no-such-paper"])
    drawn = [p.paper_id for p in view.points]
    assert set(inside + outside) <= set(drawn) and "no-such-paper" not in drawn
    assert view.points[:N] == sample  # the sample does not move for them
    assert len(view.points) == N + 3 and view.sampled == N and view.cited == 5
    assert reads.take()["get_papers"] == 3  # only the cited papers outside the sample were read
    topics = {p.topic for p in sample}
    for p in view.points[N:]:  # beside a sampled paper, in its topic
        assert p.topic in topics and any(abs(p.x - q.x) < 1 and abs(p.y - q.y) < 1 for q in sample)
    assert view.note().endswith("; the 5 cited papers are always shown.")
    assert app.map_view(inside[:1]).note().endswith("; the cited paper is always shown.")


def test_a_corpus_within_the_limit_is_drawn_whole(store_settings: Any) -> None:
    app, _ = facade(small(store_settings, map_points=TOTAL))
    view = app.map_view([])
    assert len(view.points) == TOTAL and not view.is_sample and view.note() == ""


# -- the Papers tab's pages ------------------------------------------------------------------------------------
def test_a_page_reads_only_its_own_records(store_settings: Any) -> None:
    app, reads = facade(small(store_settings))
    first = app.page(1)
    assert len(first.papers) == PAGE and first.pages == 6 and first.total == first.matched == TOTAL
    counted = reads.take()
    assert counted["get_papers"] == PAGE and counted["iter_papers"] == 0 and counted["paper_vectors"] == 0
    assert "**38 papers** in the corpus" in first.summary() and "page 1 of 6 (papers 1–7)" in first.summary()
    pages = [first, *(app.page(n) for n in range(2, 7))]
    assert reads.take()["get_papers"] == TOTAL - PAGE  # every other page: its own papers, once
    assert len(pages[-1].papers) == 3 and "papers 36–38" in pages[-1].summary()
    assert app.page(99).page == 6 and app.page(0).page == 1  # clamped to the pages there are
    # sorted over the whole corpus, not page by page
    shown = [p for pg in pages for p in pg.papers]
    assert sorted(p.paper_id for p in shown) == sorted(p.paper_id for p in app.papers())
    titles = [shown_title(p.title).lower() for p in shown]
    assert titles == sorted(titles)
    newest = [p for n in range(1, 7) for p in app.page(n, sort="Newest first").papers]
    years = [p.year or 0 for p in newest]
    assert years == sorted(years, reverse=True) and "newest first" in app.page(1, sort="Newest first").summary()


def test_a_search_pages_through_its_matches_with_their_count(store_settings: Any) -> None:
    app, reads = facade(small(store_settings))
    says = [p.paper_id for p in app.papers() if "bottleneck" in f"{p.title} {p.abstract}".lower()]
    reads.take()
    found = app.page(1, "bottleneck")
    assert found.matched == len(says) and found.total == TOTAL and len(says) > PAGE  # more than one page
    assert f"**{len(says)} of 38 papers** match the search" in found.summary()
    assert reads.take()["get_papers"] == PAGE
    rest = [p for n in range(2, found.pages + 1) for p in app.page(n, "bottleneck").papers]
    assert sorted(p.paper_id for p in [*found.papers, *rest]) == sorted(says)
    none = app.page(1, "zzzqqq-nothing")
    assert none.matched == 0 and none.papers == [] and none.pages == 1 and "**0 of 38 papers**" in none.summary()


# -- the app's start -------------------------------------------------------------------------------------------
def test_the_app_start_reads_no_more_than_its_bounds(store_settings: Any, monkeypatch: Any) -> None:
    """The web app's start, as `launch` does it: the store opened, the map fitted in the background, the page
    built (example questions, filters) and its first load (the table's first page, the map): records read from
    the store stay within the example questions' MOST_READ, a page and the map's sample, not the corpus."""
    import askpapers.rag.api as api
    from askpapers.ui import corpus_view
    from askpapers.ui.app import Handlers, build
    from askpapers.ui.exports import Exports

    most = 5
    monkeypatch.setattr(api, "MOST_READ", most)
    app, reads = facade(small(store_settings))
    corpus_view.warm_map(app)
    build(app)
    h = Handlers(app, Exports())
    count, df, page = h.table()
    h.corpus_map(None)
    counted = reads.take()
    assert counted["iter_papers"] == most  # the example questions' statistics
    assert PAGE <= counted["get_papers"] <= N + PAGE  # the map's sample and the first page (none read twice)
    assert counted["paper_vectors"] == N and counted["chunk_vectors"] == 0
    assert sum(counted.values()) < 2 * TOTAL and len(df) == PAGE and page == 1 and "page 1 of 6" in count


# -- in a real headless Chromium -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def url(store_settings: Any) -> Iterator[str]:
    import gradio as gr

    from askpapers.ui.app import launch

    _, address, _ = launch(small(store_settings, page_size=10), port=free_port(), block=False)
    yield address.rstrip("/")
    gr.close_all()


def open_page(browser: Any, url: str) -> Any:
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    page.wait_for_selector("#question textarea", timeout=60_000)
    return page


def titles(page: Any) -> list[str]:
    cells = page.locator("#papers [role=gridcell][data-col='0']")
    return [cells.nth(i).inner_text().strip() for i in range(cells.count())]


def count_says(page: Any, text: str) -> str:
    """The count line once it says ``text`` and Gradio's "processing" status is gone from it."""
    page.wait_for_function(
        "t => { const s = document.querySelector('#paper-count')?.innerText || '';"
        " return s.includes(t) && !/processing|pending|queue/i.test(s); }",
        arg=text,
    )
    return str(page.locator("#paper-count").inner_text())


@browser_test
def test_the_map_says_it_shows_a_sample_with_the_cited_papers(browser: Any, url: str) -> None:
    from tests.test_ui import ask

    page = open_page(browser, url)
    page.get_by_role("tab", name="Map").click()
    page.wait_for_selector("#map svg .pt", timeout=60_000)
    note = page.locator("#map .map-note")
    assert note.inner_text() == "Showing 10 of 38 papers, a sample (the same papers until the corpus changes)."
    assert page.locator("#map svg .pt").count() == N
    page.get_by_role("tab", name="Chat").click()
    ask(page, "Which papers use information bottleneck?")
    cited = page.locator("#sources details").count()
    assert cited >= 2
    page.get_by_role("tab", name="Map").click()
    page.wait_for_function(
        "n => (document.querySelector('#map .map-note')?.innerText || '').includes(`the ${n} cited papers`)", arg=cited
    )
    assert page.locator("#map svg .pt.cited").count() == cited  # every cited paper, in the sample or not
    assert N <= page.locator("#map svg .pt").count() <= N + cited
    assert "always shown" in page.locator("#map .map-note").inner_text()
    page.close()


@browser_test
def test_the_papers_tab_pages_through_the_whole_corpus(browser: Any, url: str) -> None:
    page = open_page(browser, url)
    page.get_by_role("tab", name="Papers").click()
    count_says(page, "page 1 of 4 (papers 1–10)")
    assert "**" not in count_says(page, "38 papers")  # (Markdown rendered)
    first = titles(page)
    assert len(first) == 10 and first == sorted(first, key=str.lower)
    page.click("#paper-next")
    count_says(page, "page 2 of 4 (papers 11–20)")
    second = titles(page)
    assert len(second) == 10 and not set(first) & set(second)
    assert first[-1].lower() <= second[0].lower()  # sorted across pages, not within each
    assert page.locator("#paper-page input").input_value() == "2"
    page.click("#paper-next")
    # (each click once the page before it is shown: a click while the last is pending may be dropped, as under load)
    count_says(page, "page 3 of 4 (papers 21–30)")
    page.click("#paper-next")
    count_says(page, "page 4 of 4 (papers 31–38)")
    assert len(titles(page)) == 8
    page.click("#paper-previous")
    count_says(page, "page 3 of 4 (papers 21–30)")
    page.fill("#paper-search textarea, #paper-search input", "bottleneck")
    said = count_says(page, "match the search")
    assert "of 38 papers" in said and "page 1 of" in said  # a new search starts at its first page
    page.close()
