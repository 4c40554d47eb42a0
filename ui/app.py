"""The Gradio app: streaming chat with cited papers, a sources panel, a corpus browser and map, uploads.

A thin layer over :mod:`rag.api`: every answer, search, map and ingest comes from there. Abstract text is
always escaped before it reaches HTML, so hostile abstracts render as text.
"""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # before gradio is imported
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_SSR_MODE", "False")

import atexit
import html
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gradio as gr
import pandas as pd

from askpapers.rag import (
    MAX_K,
    SORTS,
    AskPapers,
    AskPapersError,
    BadLinesError,
    QuestionError,
    clean_question,
    recent_messages,
    stop_ingests,
)
from askpapers.rag.settings import Settings, get_settings
from askpapers.rag.types import Answer, Progress
from askpapers.ui import corpus_view
from askpapers.ui.exports import Exports, exit_on_sigterm
from askpapers.ui.guard import middleware, trusted_proxies, uploaded_paths
from askpapers.ui.page import CSS, HEAD, JS, LATEX
from askpapers.ui.render import answer_html, text_html
from askpapers.ui.views import chat_view, filters, notice_md, sources_html, turn

REDRAW_SESSIONS = 2000  # sessions whose map redraws are counted (the oldest forgotten first)
SKIP_HINT = "; fix it, or tick “Skip bad lines” and press “Add to corpus” again (the file is still chosen)"
EXAMPLES = ["Which papers use information bottleneck?"]  # when the store has too little text for its own


def show_all_button(answer: Answer | None) -> Any:
    """ "Show all 139 papers" under an answer that lists fewer than match; hidden otherwise."""
    if answer is None or not answer.more:
        return gr.update(visible=False)
    label = f"Show all {answer.total} papers" if answer.total <= MAX_K else f"Show {MAX_K} of {answer.total} papers"
    return gr.update(visible=True, value=label)


def exports_update(files: list[str]) -> Any:
    """The export files under the answer; the box is hidden while there are none (it would push the question box
    below the fold on a desktop screen)."""
    return gr.update(value=files, visible=bool(files))


class Handlers:
    """What the page's events call; each goes through the facade."""

    def __init__(self, app: AskPapers, exports: Exports) -> None:
        self.app = app
        self.exports = exports
        self.upload_dir = gr.utils.get_upload_folder()
        self.received: set[str] = set()  # the files this app's upload route saved (Gradio's own record of them)
        self._redraws: OrderedDict[str, int] = OrderedDict()  # per session: how many map redraws were asked for
        self._redraws_lock = threading.Lock()

    def respond(
        self, message: str, convo: list[dict[str, Any]] | None, mode: str, k: float, venue: str,
        year: float | str | None, has_code: bool,
    ) -> Iterator[tuple[Any, ...]]:  # fmt: skip
        """The answer to ``message`` streamed into the chat, then its notice, sources, exports and "Show all"."""
        skip = gr.skip()
        convo = list(convo or [])
        try:
            clean_question(message)
        except QuestionError as e:  # an empty question: said once, with no empty bubble in the chat
            yield skip, skip, f"⚠️ {text_html(str(e))}", skip, skip, skip, skip, skip
            return
        past = recent_messages([m for m in convo if not m.get("shown_only")])
        pending = [*convo, turn("user", message), {"role": "assistant", "content": "", "html": "<p>…</p>"}]
        hide = gr.update(visible=False)
        yield chat_view(pending), "", "", skip, skip, skip, skip, hide  # the notice comes back at the end
        text = ""
        try:
            scope = filters(venue, year, has_code)
            stream = self.app.ask_stream(message, past, mode=mode, k=int(k), filters=scope)  # type: ignore[arg-type]
            for item in stream:
                if isinstance(item, Answer):
                    done = [
                        *convo,
                        turn("user", message),
                        turn("assistant", item.text, item.paper_ids),
                    ]
                    files = exports_update(self.exports.write(item))
                    yield (chat_view(done), "", notice_md(item), sources_html(item), files, item, done,
                           show_all_button(item))  # fmt: skip
                    return
                if isinstance(item, Progress):  # long work: "Read papers 13–24 of 51 (2 of 5 batches)"
                    yield skip, "", f"⏳ {text_html(item.text)}", skip, skip, skip, skip, skip
                    continue
                text += item
                pending[-1]["html"] = answer_html(text)  # every partial render is as safe as the final one
                yield chat_view(pending), "", skip, skip, skip, skip, skip, skip
        except AskPapersError as e:
            # shown in the chat, but not history: the next question's follow-up logic never sees a failed turn
            pending[-2]["shown_only"] = True
            pending[-1] = {
                "role": "assistant",
                "content": "",
                "html": f"<p>⚠️ {text_html(str(e))}</p>",
                "shown_only": True,
            }
            yield (chat_view(pending), "", f"⚠️ {text_html(str(e))}", sources_html(None), exports_update([]), None,
                   pending, hide)  # fmt: skip

    def show_all(
        self, convo: list[dict[str, Any]] | None, last: Answer | None, mode: str, venue: str,
        year: float | str | None, has_code: bool,
    ) -> Iterator[tuple[Any, ...]]:  # fmt: skip
        """The last question asked again for every paper that matches: its answer replaces the shorter one."""
        convo = list(convo or [])
        if last is None or len(convo) < 2 or convo[-2].get("role") != "user":
            yield tuple(gr.skip() for _ in range(8))
            return
        question = str(convo[-2]["content"])
        yield from self.respond(question, convo[:-2], mode, min(last.total, MAX_K), venue, year, has_code)

    def table(self, query: str = "", sort: str = "Title", page: float | None = 1) -> tuple[str, pd.DataFrame, int]:
        """One page of the papers, in the order ``sort`` names over the whole corpus; with a ``query``, of those
        whose title or abstract states it (the product's own BM25 search) or whose venue, year or id contains it.
        Returns what it shows in words, the rows and the page number (see :meth:`AskPapers.page`)."""
        try:
            shown = self.app.page(int(page or 1), query or "", sort or "Title")
        except AskPapersError as e:
            return f"⚠️ {text_html(str(e))}", pd.DataFrame([], columns=corpus_view.COLUMNS), 1
        df = pd.DataFrame(corpus_view.rows(shown.papers), columns=corpus_view.COLUMNS)
        return shown.summary(), df, shown.page

    def next_page(self, query: str, sort: str, page: float | None) -> tuple[str, pd.DataFrame, int]:
        return self.table(query, sort, int(page or 1) + 1)

    def previous_page(self, query: str, sort: str, page: float | None) -> tuple[str, pd.DataFrame, int]:
        return self.table(query, sort, int(page or 1) - 1)

    def show_abstract(self, evt: gr.SelectData) -> str:
        row = evt.row_value or []
        pid = str(row[-1]) if row else ""
        return corpus_view.abstract_html(self.app.paper(pid))

    def corpus_map(self, answer: Answer | None, shown: str = "", request: gr.Request | None = None) -> tuple[Any, str]:
        """The map with the last answer's papers starred, and what it shows (its key); not sent again while the
        page shows that already (the same points and the same stars): at 2,610 papers it is about 565 KB.

        The first map of a store waits for its projection to be fitted, and redraws run side by side: one asked for
        after an earlier answer may finish after one asked for after a later answer. Only the session's latest
        redraw draws, so the map always stars the last answer's papers."""
        session = getattr(request, "session_hash", None) or ""
        with self._redraws_lock:
            mine = self._redraws.pop(session, 0) + 1
            self._redraws[session] = mine
            while len(self._redraws) > REDRAW_SESSIONS:
                self._redraws.popitem(last=False)
        cited = sorted({c.paper_id for c in answer.citations}) if answer else []
        view = self.app.map_view(cited)  # (a large corpus: a sample, with the cited papers always on it)
        if session and self._redraws.get(session, mine) != mine:  # a later answer's redraw draws its own stars
            return gr.skip(), gr.skip()
        note = view.note()
        key = corpus_view.map_key(view.points, cited, note)
        if key == shown:
            return gr.skip(), shown
        return corpus_view.map_html(view.points, set(cited), note), key

    def open_point(self, evt: gr.EventData) -> str:
        """A click on the map: the clicked paper's abstract."""
        data = evt._data if isinstance(evt._data, dict) else {}
        return corpus_view.abstract_html(self.app.paper(str(data.get("paper_id", ""))), elem_id="map-abstract-view")

    def add(
        self,
        files: Any,
        skip_bad: Any = False,
        progress: gr.Progress = gr.Progress(track_tqdm=True),  # noqa: B008
    ) -> tuple[Any, ...]:
        """Ingest uploaded files. The payload is raw (``preprocess=False``): only files Gradio received as
        uploads are read, never a server path that a caller names. ``skip_bad``: the "Skip bad lines" box."""
        if not files:
            return ("⚠️ Choose a .txt, .jsonl, .json or .csv file first.", gr.skip(), gr.skip(), gr.skip())
        accepted: list[tuple[Path, str]] = []
        skip = skip_bad is True
        try:
            accepted = uploaded_paths(files, self.upload_dir, self.received)
            limits = self.app.settings.ui.upload_limits()  # checked record by record before anything is embedded
            report = self.app.add_files(
                [p for p, _ in accepted], skip_bad=skip, progress=True, limits=limits
            )  # (tqdm: gr.Progress)
        except AskPapersError as e:
            msg = e.detail + SKIP_HINT if isinstance(e, BadLinesError) else str(e)  # in the page's terms
            for path, name in accepted:  # the uploaded file's own name, not Gradio's temp path
                msg = msg.replace(str(path), name)
            return (f"⚠️ Nothing was added. {text_html(msg)}", gr.skip(), gr.skip(), gr.skip())
        count, df, _ = self.table()
        skipped = "".join(f"<br>{text_html(m)}" for m in report.messages[:20]) if skip else ""
        for path, name in accepted:
            skipped = skipped.replace(str(path), html.escape(name))
        return (f"✅ {html.escape(report.summary())}{skipped}", count, df, None)

    def api_ask(
        self, question: str, history: list[dict[str, Any]] | None = None, mode: str = "auto", k: int | None = None,
        venue: str | None = None, year: int | None = None, has_code: bool | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Answer a question; returns the answer text and its citations (the CLI's --json shape)."""
        try:
            scope = {"venue": venue, "year": year, "has_code": has_code}
            return self.app.ask(question, history, mode=mode, k=k, filters=scope).to_dict()  # type: ignore[arg-type]
        except AskPapersError as e:
            return {"question": str(question)[:200], "error": str(e), "answer": "", "citations": [], "found": False}


def _chat_tab(app: AskPapers) -> SimpleNamespace:
    """The chat: the answer with its exports, and its sources beside it (after it on a narrow screen), then the
    question box, examples and settings."""
    settings = app.settings
    with gr.Tab("Chat"):
        with gr.Row(elem_id="answer-row"):
            with gr.Column(scale=3, min_width=340, elem_id="chat-col"):
                chatbot = gr.Chatbot(label="Chat", height="min(68vh, 680px)", elem_id="chat", sanitize_html=True,
                                     render_markdown=False, latex_delimiters=LATEX, autoscroll=False)  # fmt: skip
                with gr.Row(elem_id="question-row"):  # under the answer, so it stays in view after one
                    box = gr.Textbox(
                        placeholder="Ask about the papers in the corpus",
                        show_label=False, scale=5, elem_id="question", submit_btn=False,
                        max_length=2000,
                    )  # fmt: skip
                    send = gr.Button("Ask", variant="primary", scale=1, min_width=80, elem_id="ask")
            with gr.Column(scale=2, min_width=320, elem_id="sources-col"):  # after the input on a narrow screen
                notice = gr.Markdown(elem_id="notice")
                sources = gr.HTML(sources_html(None), elem_id="sources")
                show_all = gr.Button("Show all", visible=False, size="sm", elem_id="show-all")
                files = gr.File(label="Export cited papers (Markdown, CSV, BibTeX)", file_count="multiple",
                                interactive=False, elem_id="exports", height=110, visible=False)  # fmt: skip
        gr.Examples(app.example_questions() or EXAMPLES, inputs=box, label="Examples", elem_id="examples")
        with gr.Accordion("Settings", open=False):
            mode = gr.Radio(["auto", "extractive", "llm"], value=settings.mode, label="Answer mode")
            k = gr.Slider(1, MAX_K, value=settings.answer.max_list, step=1, label="Most papers to list",
                          info=f"Default {settings.answer.max_list}; an answer that lists fewer than match says "
                               "so and can show them all.")  # fmt: skip
            venues, newest_first = app.filter_choices()  # (counted in the index: no paper is read)
            years = [str(y) for y in newest_first]
            venue = gr.Dropdown(["", *venues], value="", label="Venue", allow_custom_value=True)
            year = gr.Dropdown(["", *years], value="", label="Year", allow_custom_value=True, elem_id="year")
            has_code = gr.Checkbox(label="Only papers with code")
        new_chat = gr.Button("New chat", size="sm")
    return SimpleNamespace(chatbot=chatbot, box=box, send=send, mode=mode, k=k, venue=venue, year=year,
                           has_code=has_code, new_chat=new_chat, notice=notice, sources=sources,
                           files=files, show_all=show_all)  # fmt: skip


def _papers_tab() -> SimpleNamespace:
    with gr.Tab("Papers"):
        with gr.Row(equal_height=True):
            search = gr.Textbox(placeholder="Search titles and abstracts, e.g. bottleneck", show_label=False,
                                elem_id="paper-search", scale=3, min_width=200, max_length=2000)  # fmt: skip
            sort = gr.Radio(list(SORTS), value="Title", label="Sort by", elem_id="paper-sort", scale=2,
                            min_width=200)  # fmt: skip
        count = gr.Markdown(elem_id="paper-count")
        papers = gr.Dataframe(
            headers=corpus_view.COLUMNS, datatype=["str"] * 5, interactive=False, wrap=True, elem_id="papers",
            max_height=480, column_widths=corpus_view.COLUMN_WIDTHS,
        )  # fmt: skip
        with gr.Row(elem_id="paper-pages"):
            previous = gr.Button("◀ Previous", size="sm", elem_id="paper-previous", scale=0, min_width=110)
            page = gr.Number(value=1, precision=0, minimum=1, label="Page", elem_id="paper-page", scale=0,
                             min_width=90)  # fmt: skip
            following = gr.Button("Next ▶", size="sm", elem_id="paper-next", scale=0, min_width=110)
        abstract = gr.HTML(elem_id="abstract")
        with gr.Row():
            upload = gr.File(label="Add abstracts (.txt, .jsonl, .json, .csv)", file_count="multiple",
                             file_types=[".txt", ".jsonl", ".json", ".csv"], elem_id="upload")  # fmt: skip
            with gr.Column(scale=0, min_width=200):
                skip_bad = gr.Checkbox(label="Skip bad lines", value=False, elem_id="skip-bad",
                                       info="add the good records of a file with malformed ones")  # fmt: skip
                add_btn = gr.Button("Add to corpus", elem_id="add")
        upload_status = gr.Markdown(elem_id="upload-status")
    return SimpleNamespace(search=search, sort=sort, count=count, papers=papers, abstract=abstract, upload=upload,
                           skip_bad=skip_bad, add_btn=add_btn, upload_status=upload_status, page=page,
                           previous=previous, following=following)  # fmt: skip


def _map_tab() -> SimpleNamespace:
    with gr.Tab("Map"):
        gr.Markdown(
            "Papers placed by their embeddings (t-SNE: similar papers sit together), coloured by topic; "
            "★ = cited by the last answer. Point at a paper for its title, click it for its abstract."
        )
        plot = gr.HTML(corpus_view.map_html([]), css_template=corpus_view.MAP_CSS, js_on_load=corpus_view.MAP_JS,
                       elem_id="map")  # fmt: skip
        abstract = gr.HTML(elem_id="map-abstract")
    return SimpleNamespace(plot=plot, abstract=abstract)


def build(app: AskPapers, exports: Exports | None = None) -> gr.Blocks:
    h = Handlers(app, exports or Exports())
    # export files are served from the app's own folder (rotated: the newest answers' only), never copied into
    # Gradio's cache, where copies would pile up for an hour
    gr.set_static_paths([str(h.exports.root)])
    with gr.Blocks(title="askpapers", delete_cache=(3600, 3600)) as demo:
        h.received = demo.upload_file_set  # (the same set: the upload route adds to it)
        last = gr.State(None)
        convo = gr.State([])
        gr.Markdown("## askpapers\nAsk about the papers in the corpus; every answer cites the abstracts it used.")
        c = _chat_tab(app)
        p = _papers_tab()
        m = _map_tab()
        plot = m.plot
        inputs = [c.box, convo, c.mode, c.k, c.venue, c.year, c.has_code]
        outputs = [c.chatbot, c.box, c.notice, c.sources, c.files, last, convo, c.show_all]
        shown = gr.State("")  # what the map on the page shows (see Handlers.corpus_map)
        # "always_last": a redraw asked for while one is still waiting (for the first fit) runs after it, where the
        # default would drop it and leave an earlier answer's stars on the map
        redraw: dict[str, Any] = {"fn": h.corpus_map, "inputs": [last, shown], "outputs": [plot, shown],
                                  "show_progress": "hidden", "trigger_mode": "always_last"}  # fmt: skip
        for trigger in (c.send.click, c.box.submit):
            trigger(h.respond, inputs, outputs, api_visibility="private").then(**redraw)
        c.show_all.click(h.show_all, [convo, last, c.mode, c.venue, c.year, c.has_code], outputs,
                         api_visibility="private").then(**redraw)  # fmt: skip

        def cleared() -> tuple[Any, ...]:
            return [], "", sources_html(None), exports_update([]), None, [], gr.update(visible=False)

        c.new_chat.click(cleared, None, [c.chatbot, c.notice, c.sources, c.files, last, convo, c.show_all]).then(
            **redraw
        )
        p.papers.select(h.show_abstract, None, p.abstract)
        listed = [p.count, p.papers, p.page]
        for event in (p.search.change, p.sort.change):  # a new search or order starts at its first page
            event(h.table, [p.search, p.sort], listed, trigger_mode="always_last", show_progress="hidden")
        turn_page: dict[str, Any] = {"inputs": [p.search, p.sort, p.page], "outputs": listed,
                                     "trigger_mode": "always_last", "show_progress": "hidden"}  # fmt: skip
        p.following.click(h.next_page, **turn_page)
        p.previous.click(h.previous_page, **turn_page)
        p.page.submit(h.table, **turn_page)
        p.add_btn.click(
            h.add,
            [p.upload, p.skip_bad],
            [p.upload_status, p.count, p.papers, p.upload],
            preprocess=False,
            show_progress_on=p.upload_status,
            concurrency_limit=app.settings.ui.ingest_concurrency,  # uploads queue in order, answers keep running
            concurrency_id="ingest",
        ).then(h.table, [p.search, p.sort, p.page], listed, show_progress="hidden").then(**redraw)
        plot.click(h.open_point, None, m.abstract)
        demo.load(h.table, None, listed, show_progress="hidden").then(**redraw)
        gr.api(h.api_ask, api_name="ask")  # type: ignore[attr-defined]
    return demo  # type: ignore[no-any-return]


def private_upload_folder() -> Path:
    """Point Gradio's upload and cache folder at a new folder of this process (removed at exit), so files that
    other processes put in the shared ``<temp>/gradio`` are neither served nor accepted as uploads."""
    folder = Path(tempfile.mkdtemp(prefix="askpapers-gradio-"))
    os.environ["GRADIO_TEMP_DIR"] = str(folder)
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def theme() -> gr.themes.Base:
    """The default theme with system fonts: nothing is fetched from a font CDN."""
    return gr.themes.Default(
        font=["system-ui", "-apple-system", "Segoe UI", "Roboto", "sans-serif"],
        font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "monospace"],
    )


def launch(
    settings: Settings | None = None, *, host: str | None = None, port: int | None = None, share: bool = False,
    block: bool = True, app: AskPapers | None = None, clock: Callable[[], float] | None = None,
) -> Any:  # fmt: skip
    """Serve the web app (``app``: an AskPapers of ``settings`` already made, else one is). ``clock`` times the
    login back-off (``time.monotonic`` unless a test gives its own)."""
    settings = settings or (app.settings if app else get_settings())
    private_upload_folder()  # uploads land in a folder of this process, not the shared <temp>/gradio
    app = app or AskPapers(settings)
    app.index  # noqa: B018  (open the store, ingesting the bundled corpus if it is empty)
    threading.Thread(target=corpus_view.warm_map, args=(app,), daemon=True, name="askpapers-map").start()
    demo = build(app)
    # Answers run in Gradio's worker threads, never on its event loop. Extractive answers are CPU work that
    # shares one embedder, so more than a few at once only queue inside it; LLM answers mostly wait on the
    # network. The limit keeps the page and other sessions responsive while a few answers run.
    demo.queue(default_concurrency_limit=settings.ui.concurrency)
    if block:  # a server on its own: `kill` ends it as Ctrl-C does, its clean-up run
        exit_on_sigterm(before=stop_ingests)  # an ingest stops at its next batch boundary, nothing half-written
    bind = host or settings.ui.host
    trusted_proxies(settings.ui.trusted_proxies)  # (read by uvicorn when the server starts)
    return demo.launch(
        server_name=bind,
        server_port=port if port is not None else settings.ui.port,
        share=share,
        auth=settings.ui.credentials(),
        theme=theme(),
        css=CSS + corpus_view.PAPERS_CSS,
        js=JS,
        head=HEAD,
        footer_links=["api"],
        prevent_thread_lock=not block,
        quiet=not block,
        ssr_mode=False,
        state_session_capacity=500,  # Gradio keeps per-session state; the default (10,000) grows memory for hours
        max_file_size=settings.ui.max_upload_mb * 1024 * 1024,
        app_kwargs={"middleware": middleware(bind, settings.ui.allowed_hosts, clock)},
    )
