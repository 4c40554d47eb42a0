"""The Gradio app: streaming chat with cited papers, a sources panel, a corpus browser and map, uploads.

A thin layer over :mod:`rag.api`: every answer, search, map and ingest comes from there. Abstract text is
always escaped before it reaches HTML, so hostile abstracts render as text. The tabs are laid out in
:mod:`ui.app_tabs`, and what their events call is in :mod:`ui.app_events`; here they are wired and served.
"""

from __future__ import annotations

from askpapers.ui import gradio_env  # noqa: F401  (its environment, before gradio is imported)

# isort: split
import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr

from askpapers.rag import AskPapers, settle, stop_ingests
from askpapers.rag.settings import Settings, get_settings
from askpapers.ui import corpus_view
from askpapers.ui.app_events import Handlers, exports_update
from askpapers.ui.app_tabs import chat_tab, map_tab, papers_tab
from askpapers.ui.exports import Exports, exit_on_sigterm
from askpapers.ui.guard import middleware, trusted_proxies
from askpapers.ui.page import CSS, HEAD, JS
from askpapers.ui.views import sources_html


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
        c = chat_tab(app)
        p = papers_tab()
        m = map_tab()
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
        settle()  # what is alive now lives as long as the server: out of the collector's walks (rag.runtime)
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
