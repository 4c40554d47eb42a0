"""What the web app's events call: a question streamed into the chat, "Show all", the papers table, a paper's
abstract, the map's redraws and clicks, uploads and the ``ask`` API. Each goes through the facade (:mod:`rag.api`);
the page that wires them is :mod:`ui.app`."""

from __future__ import annotations

from askpapers.ui import gradio_env  # noqa: F401  (its environment, before gradio is imported)

# isort: split
import html
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd

from askpapers.rag import (
    MAX_K,
    AskPapers,
    AskPapersError,
    BadLinesError,
    QuestionError,
    clean_question,
    recent_messages,
)
from askpapers.rag.types import Answer, Progress
from askpapers.ui import corpus_view
from askpapers.ui.exports import Exports
from askpapers.ui.guard import uploaded_paths
from askpapers.ui.render import answer_html, text_html
from askpapers.ui.views import chat_view, filters, notice_md, sources_html, turn

REDRAW_SESSIONS = 2000  # sessions whose map redraws are counted (the oldest forgotten first)
SKIP_HINT = "; fix it, or tick “Skip bad lines” and press “Add to corpus” again (the file is still chosen)"


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
