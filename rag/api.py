"""The only door the CLI, the web app and Python users go through: :class:`AskPapers` and the module functions.

The facade wires the parts and holds no answering logic of its own: it validates the request
(:mod:`rag.read.inputs`), reads the question, works out a follow-up's scope once
(:mod:`rag.answerers.followup`, given the parts it needs), and hands the question to the answerer the mode names
(:data:`rag.answerers.ANSWERERS`), or a search to :func:`rag.report.results.search_hits`, which makes the results with
their snippets and weak flags. Settings are passed in, never read here.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from askpapers.rag.answerers import Answerer, Request, answerers
from askpapers.rag.answerers.extractive import abstain
from askpapers.rag.answerers.followup import FollowUps, context_of, previous_questions
from askpapers.rag.read import inputs
from askpapers.rag.read.cues import REQUEST_WORDS
from askpapers.rag.read.inputs import clean_question, missing_ids
from askpapers.rag.read.lexicon import CorpusLexicon, zipf
from askpapers.rag.read.reader import QueryReader, RuleReader
from askpapers.rag.report.catalogue import Catalogue, PaperPage
from askpapers.rag.report.examples import MOST_READ, example_questions
from askpapers.rag.report.results import search_hits, search_query
from askpapers.rag.report.titling import llm_titler
from askpapers.rag.report.topic_map import MapPoint, MapView, ProjectionCache, beside, build_map
from askpapers.rag.retrieve.chroma_index import PaperIndex
from askpapers.rag.retrieve.index import Index
from askpapers.rag.retrieve.retrieval import FusionRetriever, Query, hybrid
from askpapers.rag.settings import Settings, get_settings
from askpapers.rag.types import Answer, Hit, Message, Progress, QueryPlan
from askpapers.vectorstore.embed import get_embedder
from askpapers.vectorstore.embed_export import embed_to_jsonl
from askpapers.vectorstore.errors import QuestionError, StoreError
from askpapers.vectorstore.pipeline import ingest
from askpapers.vectorstore.pipeline import stop_ingests as _stop_ingests
from askpapers.vectorstore.text import content_stems
from askpapers.vectorstore.types import Filters, IngestReport, Paper
from askpapers.vectorstore.upload import UploadLimits, check_upload

log = logging.getLogger("askpapers")
Mode = Literal["auto", "extractive", "llm"]
MessageLike = Message | dict[str, Any]
SEARCH_MOST = 500  # the most results one search returns


@dataclass
class Parts:
    """What a facade wires together: the index, the fused retriever and one answerer per mode."""

    index: Index
    retriever: FusionRetriever
    answerers: dict[str, Answerer]
    lexicon: CorpusLexicon
    followups: FollowUps
    data_dir: Path  # where derived files (the map's projection) are kept
    reader: QueryReader  # how a question is read (the rule reader, over the lexicon)


class AskPapers:
    """A store, its retrievers and answerers, opened lazily; the first use of an empty store ingests the bundled
    corpus."""

    def __init__(self, settings: Settings, *, warm: bool = True, index: Index | None = None) -> None:
        """``warm``: opening the store starts the reranker's warm-up (see :mod:`rag.retrieve.rerank`), worth it when
        more than a question or two will be asked. ``index``: the papers to answer from (a
        :class:`~rag.retrieve.memory_index.MemoryIndex`, say) instead of the store the settings name."""
        self.settings = settings
        self._index = index
        self._parts: Parts | None = None
        self._lock = threading.Lock()
        self._warm = warm
        self._warmer: threading.Thread | None = None
        self._map_cache: tuple[tuple[str, int], list[MapPoint]] | None = None
        self._map_lock = threading.Lock()
        self._catalogue: Catalogue | None = None

    # -- the parts ---------------------------------------------------------------------------------------------
    @property
    def parts(self) -> Parts:
        with self._lock:
            if self._parts is None:
                index, data_dir = self._open()
                retriever = hybrid(index, self.settings.retrieval)
                lexicon = CorpusLexicon(index, REQUEST_WORDS, vectors=index)
                by_mode = answerers(index, retriever, self.settings, lexicon)
                reader = RuleReader(lexicon)
                followups = FollowUps(index, reader, by_mode["extractive"])
                parts = Parts(index, retriever, by_mode, lexicon, followups, data_dir, reader)
                self._parts = parts
                if self._warm and retriever.ranker is not None:
                    self._warmer = retriever.ranker.warm_in_background(wait=True)
            return self._parts

    def _open(self) -> tuple[Index, Path]:
        """The index given, or the store the settings name (the bundled corpus ingested into it when empty)."""
        if self._index is not None:
            return self._index, self.settings.store.data_dir
        embedder = get_embedder(self.settings.embedder.threads)
        index = PaperIndex(self.settings.store, embedder)
        _preopen(index)
        if index.count() == 0:
            corpus = self.settings.store.default_corpus
            if not corpus.exists():
                raise StoreError(
                    f"the store is empty and the bundled corpus {corpus} is missing; run `askpapers ingest PATH`"
                )
            ingest([corpus], self.settings.store, embedder=embedder)
        return index, index.settings.data_dir  # (a read-only store's copy, when it is one)

    @property
    def index(self) -> Index:
        return self.parts.index

    @property
    def store_index(self) -> PaperIndex:
        """The index as the Chroma store it reads (for the benchmarks that measure below the facade)."""
        index = self.parts.index
        if not isinstance(index, PaperIndex):
            raise StoreError("this facade answers from an index it was given, not from a Chroma store")
        return index

    def read(self, question: str) -> QueryPlan:
        """How a (validated) question is read: its :class:`~rag.types.QueryPlan`, by the facade's
        :class:`~rag.read.reader.QueryReader`."""
        parts = self.parts
        with parts.index.pinned():
            return parts.reader.read(question)

    # -- the corpus, for browsing, the map and uploads ---------------------------------------------------------
    def papers(self) -> list[Paper]:
        """Every paper in the store, by title."""
        return self.index.all_papers()

    def page(self, page: int = 1, query: str = "", sort: str = "Title") -> PaperPage:
        """One page of the Papers tab's table (``ASKPAPERS_PAGE_SIZE`` papers): the papers a search matches (all of
        them without one: title and abstract by the text search, or venue, year or id containing it), sorted over
        the whole corpus; only the page's records are read from the store (see :mod:`rag.report.catalogue`)."""
        index = self.index
        if self._catalogue is None or self._catalogue.index is not index:
            self._catalogue = Catalogue(index, self.settings.ui.page_size)
        return self._catalogue.page(page, query or "", sort or "Title", self.find)

    def filter_choices(self) -> tuple[list[str], list[int]]:
        """The venues (sorted) and years (newest first) the filters offer, from the lexical index's statistics (no
        paper record is read)."""
        index = self.index
        return index.venues(), index.years()

    def example_questions(self) -> list[str]:
        """A few questions the corpus in the store answers (topics it states often, a method one paper names)."""
        return example_questions(self.index.all_papers(MOST_READ))  # (not the whole of a large store at start-up)

    def paper(self, paper_id: str) -> Paper | None:
        """One paper by id, or None."""
        if not isinstance(paper_id, str) or not paper_id or len(paper_id) > 500:
            return None
        return self.index.papers([paper_id]).get(paper_id)

    def find(self, query: str) -> list[str]:
        """The ids of the papers whose title or abstract states ``query``: its words in a row (stemmed), or else
        all its words anywhere, best BM25 first (the lexical search of the answers, without its ranking cut)."""
        text = clean_question(query)
        index = self.index
        everything = max(index.size(), 1)
        with index.pinned():
            found = index.phrase_search([text], everything) or index.all_words_search([text], everything)
        return [pid for pid, _ in found]

    def corpus_map(self) -> list[MapPoint]:
        """The papers of the map's sample as 2-D points coloured by topic: every paper, or in a corpus larger than
        ``ASKPAPERS_MAP_POINTS`` that many chosen by a hash of their ids (the same ones until the corpus changes).
        The projection and the topics are fitted on the sample only, so their cost is bounded by its size; they are
        cached until the store changes, and the projection is also stored in the data directory (fitted once per
        store revision)."""
        index = self.index
        with self._map_lock:  # one fit at a time: a second caller waits for the first one's map
            key = (index.revision, index.count())
            if self._map_cache is None or self._map_cache[0] != key:
                ids = index.sample_ids(self.settings.ui.map_points)
                records = index.papers(ids)
                papers = sorted((records[pid] for pid in ids if pid in records), key=lambda p: p.title.lower())
                ids = [p.paper_id for p in papers]
                vectors = index.vectors(ids)
                mat = np.array([vectors[p.paper_id] for p in papers], dtype=np.float32).reshape(len(papers), -1)
                cache = ProjectionCache(self.parts.data_dir / "map-projection.npz")
                xy = cache.projection(key[0], ids, mat, threads=self.settings.embedder.threads or -1)
                self._map_cache = (key, build_map(papers, mat, xy))
            return self._map_cache[1]

    def map_view(self, cited: Sequence[str] = ()) -> MapView:
        """What the Map draws: the sample's points (:meth:`corpus_map`), and each cited paper outside the sample
        beside its nearest sampled paper, with how many of each (:meth:`MapView.note` says so in words)."""
        points = self.corpus_map()
        index = self.index
        drawn = {p.paper_id for p in points}
        wanted = [pid for pid in dict.fromkeys(cited) if isinstance(pid, str)]
        outside = [pid for pid in wanted if pid not in drawn]
        records = index.papers(outside) if outside else {}
        extra = [records[pid] for pid in outside if pid in records]
        vectors = index.vectors([p.paper_id for p in extra]) if extra else {}
        extra = [p for p in extra if p.paper_id in vectors]
        added: list[MapPoint] = []
        if extra:  # (the sample's vectors: read with the sample, kept by the index for this revision)
            near = index.vectors([p.paper_id for p in points])
            mat = np.array([near[p.paper_id] for p in points], dtype=np.float32)
            added = beside(points, mat, extra, np.array([vectors[p.paper_id] for p in extra], dtype=np.float32))
        on_map = sum(pid in drawn for pid in wanted) + len(added)
        return MapView([*points, *added], total=index.size(), sampled=len(points), cited=on_map)

    def add_files(
        self, paths: Sequence[str | Path], *, skip_bad: bool = False, progress: bool | None = None,
        limits: UploadLimits | None = None,
    ) -> IngestReport:  # fmt: skip
        """Ingest files into this store; the new papers are searchable at once (the bundled corpus is not added).

        With ``limits`` (the web app's uploads), the files are checked against them, one record at a time, before
        anything is parsed into papers or embedded."""
        if self._index is not None:
            raise StoreError("this facade answers from the index it was given: add the papers to that index")
        if limits is not None:
            check_upload(paths, limits, skip_bad)
        parts = self._parts
        embedder = parts.index.embedder if parts else get_embedder(self.settings.embedder.threads)
        titler = llm_titler(self.settings.llm) if self.settings.llm.configured else None
        report = ingest(
            paths, self.settings.store, skip_bad=skip_bad, progress=progress, embedder=embedder, titler=titler
        )
        if parts:
            parts.index.refresh()
            ranker = parts.retriever.ranker
            if self._warm and ranker is not None and (report.added or report.updated):
                # the caches were emptied for the new revision: built again in the background (questions that
                # come meanwhile build what they need, rather than wait for all of it)
                self._warmer = ranker.warm_in_background(wait=False)
        return report

    def embed_files(
        self, paths: Sequence[str | Path], out: Path, *, skip_bad: bool = False, progress: bool | None = None
    ) -> tuple[int, int]:
        """Embed files once into JSONL with an ``embedding`` per record; returns (written now, already there)."""
        embedder = get_embedder(self.settings.embedder.threads)
        return embed_to_jsonl(paths, out, self.settings.store, skip_bad=skip_bad, progress=progress, embedder=embedder)

    # -- search and answers ------------------------------------------------------------------------------------
    def search(self, query: str, k: int | None = None, *, filters: Filters | dict[str, Any] | None = None) -> list[Hit]:
        """The ``k`` papers that best match ``query`` (``ASKPAPERS_K`` when not given), one entry per paper."""
        text = clean_question(query)
        n = inputs.k_value(k, SEARCH_MOST) or self.settings.retrieval.k
        scope = inputs.filters_value(filters)
        if not content_stems(text):  # only stop-words, punctuation or emoji: nothing to rank the papers by
            return []
        parts = self.parts
        with parts.index.pinned():  # one freshness check for the reading, the retrieval and the results
            q = self.read(text)
            return search_hits(q, n, scope, parts.index, parts.retriever, self.settings.answer.dense_alone)

    def search_query(self, text: str) -> Query:
        """What :meth:`search` searches for a cleaned question (see :func:`search_query`)."""
        return search_query(self.read(text))

    def ask(
        self,
        question: str,
        history: Sequence[MessageLike] | None = None,
        *,
        mode: Mode | None = None,
        k: int | None = None,
        filters: Filters | dict[str, Any] | None = None,
    ) -> Answer:
        """The finished answer (the last item of :meth:`ask_stream`)."""
        text, messages, n, scope, started, name = self._checked(question, history, mode, k, filters)
        answer: Answer | None = None
        with self.parts.index.pinned():  # one freshness check for the reading and the answer, both run here
            for item in self._answer(self._request(text, messages, n, scope, started, llm=name == "llm"), name):
                if isinstance(item, Answer):
                    answer = item
        assert answer is not None
        return answer

    def ask_stream(
        self,
        question: str,
        history: Sequence[MessageLike] | None = None,
        *,
        mode: Mode | None = None,
        k: int | None = None,
        filters: Filters | dict[str, Any] | None = None,
    ) -> Iterator[str | Progress | Answer]:
        """Pieces of answer text as they are generated, :class:`~rag.types.Progress` between them on long work (an LLM
        reading many papers in batches), then the checked :class:`Answer`.

        Every argument is validated before any work (see :mod:`rag.read.inputs`).
        """
        text, messages, n, scope, started, name = self._checked(question, history, mode, k, filters)
        return self._answer(self._request(text, messages, n, scope, started, llm=name == "llm"), name)

    def _checked(
        self, question: str, history: Sequence[MessageLike] | None, mode: Mode | None, k: int | None,
        filters: Filters | dict[str, Any] | None,
    ) -> tuple[str, list[Message], int | None, Filters, float, str]:  # fmt: skip
        """The validated arguments of a question (the cleaned text, the history, the list's size, the scope), when
        it was asked, and the answerer's name."""
        started = time.perf_counter()
        text = clean_question(question)
        chosen = inputs.mode_value(mode, self.settings.mode)
        messages = inputs.history(history)
        n = inputs.k_value(k, inputs.MAX_K)  # (None: ASKPAPERS_MAX_LIST)
        scope = inputs.filters_value(filters)
        configured = self.settings.llm.configured
        if chosen == "llm" and not configured:
            raise QuestionError(
                "mode 'llm' needs an LLM endpoint, and none is configured: set OPENAI_API_KEY "
                "(and OPENAI_BASE_URL for a local server), or use mode 'extractive'"
            )
        name = "llm" if chosen == "llm" or (chosen == "auto" and configured) else "extractive"
        return text, messages, n, scope, started, name

    def _request(
        self, text: str, messages: list[Message], k: int | None, filters: Filters, started: float, llm: bool
    ) -> Request:
        """The request for an answerer, with a follow-up's scope worked out once."""
        q = self.read(text)
        request = Request(text, q, messages, filters, k, started=started)
        earlier = previous_questions(messages)
        request.previous_question = earlier[-1] if earlier else ""
        previous: list[str] | None = None
        if q.followup or (llm and previous_questions(messages)):
            previous = self.parts.followups.previous_papers(messages, filters, self.index.revision)
            request.previous = previous or []
        if q.followup and previous is None:
            request.notices.append(
                "This looks like a follow-up, but there is no earlier question; searching the whole corpus."
            )
        elif q.followup and previous is not None:
            request.within = previous  # the whole previous set, not only the papers it showed
            request.context = context_of(self.read, earlier, q.facets)
            if not previous:
                request.notices.append("The previous answer cited no papers, so there was nothing to narrow down.")
        return request

    def _answer(self, request: Request, name: str) -> Iterator[str | Progress | Answer]:
        parts = self.parts
        missing = missing_ids(request.question, parts.index)
        if missing:
            answer = abstain(request.plan, f"No paper with the id {', '.join(missing)} is in the corpus.", [])
            answer.latency_s = time.perf_counter() - request.started
            yield answer.text
            yield answer
            return
        yield from parts.answerers[name].stream(request)


_preopens: list[threading.Thread] = []


def _preopen(index: PaperIndex) -> None:
    """Load, in a background thread, what the first question needs and this thread's opening does not: the word
    frequencies of general English the planner reads (about 1.5 s at 50k papers, on a busy machine) and the chunks
    collection (an embedded Chroma store reads a collection's index from disk on its first use: 2-3 s at 50k
    papers). Chroma loads the papers collection meanwhile (the paper count this thread asks for) without holding
    the interpreter, so the loads overlap instead of adding up; nothing is computed that a question would not."""

    def run() -> None:
        try:
            zipf("model")
            index.store.chunks.count()
        except Exception as e:  # (an optimisation: the first question loads what is missing itself)
            log.warning("askpapers: loading the store ahead of the first question failed: %s", e)

    thread = threading.Thread(target=run, name="askpapers-preopen", daemon=True)
    _preopens[:] = [t for t in _preopens if t.is_alive()] + [thread]
    thread.start()


@atexit.register
def _join_preopens() -> None:
    """Wait for the loads still running (a daemon thread left inside Chroma's native code while the interpreter
    shuts down can crash the process)."""
    for thread in list(_preopens):
        thread.join(30.0)


_apps: OrderedDict[str, AskPapers] = OrderedDict()
_apps_lock = threading.Lock()
APPS = 4  # facades kept for the module functions, one per distinct settings


def default_app(settings: Settings | None = None, *, warm: bool = True) -> AskPapers:
    """The facade the module functions use: one per distinct settings (by value), the newest few kept. A one-shot
    command (one question, then exit) passes ``warm=False``: it has no use for a warm-up of the whole store."""
    s = settings or get_settings()
    key = s.model_dump_json() + ("" if warm else " (no warm-up)")
    with _apps_lock:
        app = _apps.get(key)
        if app is None:
            app = _apps[key] = AskPapers(s, warm=warm)
            while len(_apps) > APPS:
                _apps.popitem(last=False)
        _apps.move_to_end(key)
        return app


def ask(
    question: str,
    history: Sequence[MessageLike] | None = None,
    *,
    mode: Mode | None = None,
    k: int | None = None,
    filters: Filters | dict[str, Any] | None = None,
    settings: Settings | None = None,
) -> Answer:
    """Answer a question about the papers, with numbered citations (see :class:`rag.types.Answer`)."""
    return default_app(settings).ask(question, history, mode=mode, k=k, filters=filters)


def ask_stream(
    question: str,
    history: Sequence[MessageLike] | None = None,
    *,
    mode: Mode | None = None,
    k: int | None = None,
    filters: Filters | dict[str, Any] | None = None,
    settings: Settings | None = None,
) -> Iterator[str | Progress | Answer]:
    """Yield answer text pieces as they arrive, then the final, checked :class:`Answer`."""
    return default_app(settings).ask_stream(question, history, mode=mode, k=k, filters=filters)


def search(
    query: str,
    k: int | None = None,
    *,
    filters: Filters | dict[str, Any] | None = None,
    settings: Settings | None = None,
) -> list[Hit]:
    """The ``k`` papers that best match ``query`` (hybrid dense + BM25, one entry per paper)."""
    return default_app(settings).search(query, k, filters=filters)


def papers(settings: Settings | None = None) -> list[Paper]:
    """Every paper in the store, by title."""
    return default_app(settings).papers()


def stop_ingests(timeout: float = 120.0) -> bool:
    """Stop this process's ingests at their next batch boundary (for SIGTERM); True when none is left running."""
    return _stop_ingests(timeout)


def add_files(
    paths: Sequence[str | Path],
    *,
    skip_bad: bool = False,
    progress: bool | None = None,
    settings: Settings | None = None,
) -> IngestReport:
    """Ingest corpus files or folders (.txt, .jsonl, .json, .csv) into the store."""
    return default_app(settings).add_files(paths, skip_bad=skip_bad, progress=progress)


def corpus_map(settings: Settings | None = None) -> list[MapPoint]:
    """The papers of the map's sample (every paper of a corpus up to ``ASKPAPERS_MAP_POINTS``) as 2-D points,
    with their topics."""
    return default_app(settings).corpus_map()
