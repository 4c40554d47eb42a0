"""The web app's tabs, laid out: the chat (answer, sources, exports, question box, examples, settings), the papers
(search, table, abstract, uploads) and the map. Each returns its components; :mod:`ui.app` wires their events."""

from __future__ import annotations

from askpapers.ui import gradio_env  # noqa: F401  (its environment, before gradio is imported)

# isort: split
from types import SimpleNamespace

import gradio as gr

from askpapers.rag import MAX_K, SORTS, AskPapers
from askpapers.ui import corpus_view
from askpapers.ui.page import LATEX
from askpapers.ui.views import sources_html

EXAMPLES = ["Which papers use information bottleneck?"]  # when the store has too little text for its own


def chat_tab(app: AskPapers) -> SimpleNamespace:
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


def papers_tab() -> SimpleNamespace:
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


def map_tab() -> SimpleNamespace:
    with gr.Tab("Map"):
        gr.Markdown(
            "Papers placed by their embeddings (t-SNE: similar papers sit together), coloured by topic; "
            "★ = cited by the last answer. Point at a paper for its title, click it for its abstract."
        )
        plot = gr.HTML(corpus_view.map_html([]), css_template=corpus_view.MAP_CSS, js_on_load=corpus_view.MAP_JS,
                       elem_id="map")  # fmt: skip
        abstract = gr.HTML(elem_id="map-abstract")
    return SimpleNamespace(plot=plot, abstract=abstract)
