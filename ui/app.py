"""The Gradio app: streaming chat with cited papers, a sources panel, a corpus browser and map, uploads.

A thin layer over :mod:`rag.api`: every answer, search, map and ingest comes from there. Abstract text is
always escaped before it reaches HTML, so hostile abstracts render as text.
"""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")  # before gradio is imported
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GRADIO_SSR_MODE", "False")

import html
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from rag.api import AskPapers
from rag.citations import neutralise_markup
from rag.export import to_bibtex, to_csv, to_markdown
from rag.settings import Settings, get_settings
from rag.types import Answer
from vectorstore.errors import AskPapersError

EXAMPLES = [
    "Which papers use information bottleneck?",
    "Which papers are about federated learning?",
    "What rate gap does WaterSIC reach?",
    "Which papers study multimodal large language models or vision-language models?",
]
_MARKER = re.compile(r"(?<!\[)\[(\d{1,3})\](?!\()")
CSS = """
#sources details { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 6px 10px; }
#sources details { margin: 6px 0; }
#sources summary { cursor: pointer; font-weight: 600; }
#sources mark { background: #fff3a3; padding: 0 2px; }
#sources .meta { color: var(--body-text-color-subdued); font-size: 0.9em; }
#sources .flag { color: #b45309; font-size: 0.9em; }
"""


def _text(content: Any) -> str:
    """Message content as text (Gradio may send a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    if isinstance(content, dict):
        return str(content.get("text", ""))
    return ""


def history_messages(history: list[Any] | None) -> list[dict[str, str]]:
    out = []
    for m in history or []:
        if isinstance(m, dict) and m.get("role") in ("user", "assistant"):
            out.append({"role": str(m["role"]), "content": _text(m.get("content"))})
    return out


def link_markers(text: str, n: int) -> str:
    """[n] markers become links to the matching entry of the sources panel."""
    return _MARKER.sub(
        lambda m: f"[\\[{m.group(1)}\\]](#source-{m.group(1)})" if int(m.group(1)) <= n else m.group(0), text
    )


def highlight(abstract: str, evidence: str) -> str:
    i = abstract.find(evidence) if evidence else -1
    if i < 0:
        return html.escape(abstract)
    j = i + len(evidence)
    return html.escape(abstract[:i]) + "<mark>" + html.escape(evidence) + "</mark>" + html.escape(abstract[j:])


def sources_html(answer: Answer | None) -> str:
    if answer is None:
        return "<p class='meta'>Cited papers appear here.</p>"
    parts = []
    if not answer.citations:
        parts.append("<p class='meta'>No paper is cited.</p>")
        for h in answer.nearest:
            parts.append(f"<p class='meta'>Nearest, <b>not matching</b>: {html.escape(h.title)}</p>")
    for c in answer.citations:
        venue = f" · {html.escape(c.venue)}" if c.venue else ""
        code = "".join(
            f" · <a href='{html.escape(u, quote=True)}' target='_blank' rel='noopener noreferrer'>code</a>"
            for u in c.code_urls
            if u.startswith("https://")
        )
        parts.append(
            f"<details id='source-{c.n}' class='source'><summary>[{c.n}] {html.escape(c.title)}</summary>"
            f"<div class='meta'>score {c.score:.4f}{venue}{code}</div>"
            f"<p class='evidence'>“{html.escape(c.evidence)}”</p>"
            f"<p class='abstract'>{highlight(c.abstract, c.evidence)}</p></details>"
        )
    if answer.unsupported:
        items = "".join(f"<li>{html.escape(s)}</li>" for s in answer.unsupported)
        parts.append(f"<div class='flag'><b>Not supported by the cited papers:</b><ul>{items}</ul></div>")
    return "\n".join(parts)


def notice_md(answer: Answer | None) -> str:
    if answer is None:
        return ""
    mode = f"LLM ({answer.model})" if answer.mode == "llm" else "extractive (no LLM)"
    lines = [f"**Answer mode:** {mode} · {len(answer.citations)} cited · {answer.latency_s:.2f} s"]
    lines += [f"⚠️ {html.escape(n)}" for n in answer.notices]
    return "  \n".join(lines)


def export_files(answer: Answer) -> list[str]:
    if not answer.citations:
        return []
    d = Path(tempfile.mkdtemp(prefix="askpapers-export-"))
    out = []
    for name, text in (("cited-papers.md", to_markdown(answer)), ("cited-papers.csv", to_csv(answer)),
                       ("cited-papers.bib", to_bibtex(answer))):  # fmt: skip
        (d / name).write_text(text, encoding="utf-8")
        out.append(str(d / name))
    return out


def build(app: AskPapers) -> gr.Blocks:
    settings = app.settings

    def filters(venue: str, year: float | None, has_code: bool) -> dict[str, Any] | None:
        f: dict[str, Any] = {}
        if venue:
            f["venue"] = venue
        if year:
            f["year"] = int(year)
        if has_code:
            f["has_code"] = True
        return f or None

    def respond(
        message: str, history: list[Any], mode: str, k: float, venue: str, year: float | None, has_code: bool
    ) -> Iterator[tuple[Any, ...]]:
        past = history_messages(history)
        shown = [*past, {"role": "user", "content": message}, {"role": "assistant", "content": "…"}]
        yield shown, "", "", gr.skip(), gr.skip(), gr.skip()  # the notice is set again with the final answer
        text = ""
        try:
            for item in app.ask_stream(message, past, mode=mode, k=int(k), filters=filters(venue, year, has_code)):  # type: ignore[arg-type]
                if isinstance(item, Answer):
                    shown[-1] = {"role": "assistant", "content": link_markers(item.text, len(item.citations))}
                    yield shown, "", notice_md(item), sources_html(item), export_files(item), item
                    return
                text += item
                shown[-1] = {"role": "assistant", "content": neutralise_markup(text)[0]}
                yield shown, "", gr.skip(), gr.skip(), gr.skip(), gr.skip()
        except AskPapersError as e:
            shown[-1] = {"role": "assistant", "content": f"⚠️ {e}"}
            yield shown, "", f"⚠️ {html.escape(str(e))}", sources_html(None), [], None

    def table() -> tuple[str, pd.DataFrame]:
        rows = [
            {"Title": p.title, "Venue": p.venue, "Year": p.year or "", "Code": " ".join(p.code_urls), "ID": p.paper_id}
            for p in app.papers()
        ]
        df = pd.DataFrame(rows, columns=["Title", "Venue", "Year", "Code", "ID"])
        return f"**{len(rows)} papers** in the corpus. Click a row to read its abstract.", df

    def show_abstract(evt: gr.SelectData) -> str:
        row = evt.row_value or []
        pid = str(row[-1]) if row else ""
        paper = app.retriever.papers([pid]).get(pid)
        if paper is None:
            return ""
        venue = f" · {html.escape(paper.venue)}" if paper.venue else ""
        return (
            f"<div id='abstract-view'><h3>{html.escape(paper.title)}</h3>"
            f"<p class='meta'>{html.escape(pid)}{venue}</p><p>{html.escape(paper.abstract)}</p></div>"
        )

    def corpus_map(answer: Answer | None) -> pd.DataFrame:
        cited = {c.paper_id for c in answer.citations} if answer else set()
        rows = [
            {
                "x": p.x,
                "y": p.y,
                "title": p.title,
                "topic": "★ cited in last answer" if p.paper_id in cited else p.topic,
            }
            for p in app.corpus_map()
        ]
        return pd.DataFrame(rows, columns=["x", "y", "title", "topic"])

    def add(files: list[Any] | None, progress: gr.Progress = gr.Progress(track_tqdm=True)) -> tuple[Any, ...]:  # noqa: B008
        if not files:
            return ("⚠️ Choose a .txt, .jsonl, .json or .csv file first.", gr.skip(), gr.skip(), gr.skip(), None)
        paths = [f if isinstance(f, str) else getattr(f, "name", str(f)) for f in files]
        try:
            report = app.add_files(paths, progress=True)  # a tqdm bar, which gr.Progress(track_tqdm) shows
        except AskPapersError as e:
            msg = str(e)
            for p in paths:  # show the uploaded file's own name, not Gradio's temp path
                msg = msg.replace(p, Path(p).name)
            return (f"⚠️ Nothing was added. {html.escape(msg)}", gr.skip(), gr.skip(), gr.skip(), None)
        count, df = table()
        return (f"✅ {html.escape(report.summary())}", count, df, corpus_map(None), None)

    with gr.Blocks(title="askpapers") as demo:
        last = gr.State(None)
        gr.Markdown("## askpapers\nAsk about the papers in the corpus; every answer cites the abstracts it used.")
        with gr.Tab("Chat"), gr.Row():
            with gr.Column(scale=3):
                chatbot = gr.Chatbot(label="Chat", height=520, elem_id="chat", sanitize_html=True)
                with gr.Row():
                    box = gr.Textbox(
                        placeholder="Which papers use information bottleneck?",
                        show_label=False, scale=5, elem_id="question", submit_btn=False,
                    )  # fmt: skip
                    send = gr.Button("Ask", variant="primary", scale=1, elem_id="ask")
                gr.Examples(EXAMPLES, inputs=box, label="Examples")
                with gr.Accordion("Settings", open=False):
                    mode = gr.Radio(["auto", "extractive", "llm"], value=settings.mode, label="Answer mode")
                    k = gr.Slider(1, 50, value=settings.retrieval.max_list, step=1, label="Most papers to cite")
                    venues = sorted({p.venue for p in app.papers() if p.venue})
                    venue = gr.Dropdown(["", *venues], value="", label="Venue", allow_custom_value=True)
                    year = gr.Number(value=None, precision=0, label="Year")
                    has_code = gr.Checkbox(label="Only papers with code")
                new_chat = gr.Button("New chat", size="sm")
            with gr.Column(scale=2):
                notice = gr.Markdown(elem_id="notice")
                sources = gr.HTML(sources_html(None), elem_id="sources")
                exports = gr.File(label="Export cited papers (Markdown, CSV, BibTeX)", file_count="multiple",
                                  interactive=False, elem_id="exports")  # fmt: skip
        with gr.Tab("Papers"):
            count = gr.Markdown(elem_id="paper-count")
            papers = gr.Dataframe(
                headers=["Title", "Venue", "Year", "Code", "ID"], datatype=["str"] * 5, interactive=False,
                show_search="search", wrap=True, elem_id="papers", max_height=480,
            )  # fmt: skip
            abstract = gr.HTML(elem_id="abstract")
            with gr.Row():
                upload = gr.File(label="Add abstracts (.txt, .jsonl, .json, .csv)", file_count="multiple",
                                 file_types=[".txt", ".jsonl", ".json", ".csv"], elem_id="upload")  # fmt: skip
                add_btn = gr.Button("Add to corpus", elem_id="add")
            upload_status = gr.Markdown(elem_id="upload-status")
        with gr.Tab("Map"):
            gr.Markdown(
                "Papers projected from their embeddings (PCA), coloured by topic cluster; ★ = cited by the last answer."
            )
            plot = gr.ScatterPlot(x="x", y="y", color="topic", tooltip=["title", "topic"], height=560, elem_id="map")

        inputs = [box, chatbot, mode, k, venue, year, has_code]
        outputs = [chatbot, box, notice, sources, exports, last]
        for trigger in (send.click, box.submit):
            trigger(respond, inputs, outputs, api_visibility="private").then(corpus_map, last, plot)
        new_chat.click(lambda: ([], "", sources_html(None), [], None), None, [chatbot, notice, sources, exports, last])
        papers.select(show_abstract, None, abstract)
        add_btn.click(add, upload, [upload_status, count, papers, plot, upload])
        demo.load(table, None, [count, papers]).then(corpus_map, last, plot)

        def api_ask(question: str, history: list[dict[str, str]] | None = None, mode: str = "auto") -> dict[str, Any]:
            """Answer a question; returns the answer text and its citations (the CLI's --json shape)."""
            try:
                return app.ask(question, history_messages(history), mode=mode).to_dict()  # type: ignore[arg-type]
            except AskPapersError as e:
                return {"question": question, "error": str(e), "answer": "", "citations": [], "found": False}

        gr.api(api_ask, api_name="ask")  # type: ignore[attr-defined]
    return demo  # type: ignore[no-any-return]


def theme() -> gr.themes.Base:
    """The default theme with system fonts: nothing is fetched from a font CDN."""
    return gr.themes.Default(
        font=["system-ui", "-apple-system", "Segoe UI", "Roboto", "sans-serif"],
        font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "monospace"],
    )


def launch(
    settings: Settings | None = None, *, host: str | None = None, port: int | None = None, share: bool = False,
    block: bool = True,
) -> Any:  # fmt: skip
    settings = settings or get_settings()
    app = AskPapers(settings)
    app.retriever  # noqa: B018  (open the store, ingesting the bundled corpus if it is empty)
    demo = build(app)
    demo.queue(default_concurrency_limit=4)
    return demo.launch(
        server_name=host or settings.ui.host,
        server_port=port if port is not None else settings.ui.port,
        share=share,
        auth=settings.ui.credentials(),
        theme=theme(),
        css=CSS,
        footer_links=["api"],
        prevent_thread_lock=not block,
        quiet=not block,
        ssr_mode=False,
        state_session_capacity=500,  # Gradio keeps per-session state; the default (10,000) grows memory for hours
    )
