"""A learned reranker over the fused candidates: LightGBM lambdarank on signals retrieval already has.

The fused ranking (dense chunks + BM25 + phrase BM25, by reciprocal rank) is widened by one more list, dense
pseudo-relevance feedback (Rocchio: the query vector plus the mean vector of the fused top 3 papers), and the top
:data:`POOL` papers of that pool are described by :data:`~rag.retrieve.rank_features.FEATURES` and reordered by the
shipped model (``rag/ranker/reranker.txt``, trained by ``python -m bench.ltr train``). Its cost is bounded by the
pool: one more Chroma query, one FTS5 scan restricted to the pool's rows, the pool's chunk vectors (cached per store
revision) and a 100-tree model, evaluated with numpy (:class:`~rag.retrieve.forest.Forest`; LightGBM itself is
needed only to train it). Papers
outside the pool keep their fused order after it. ``ASKPAPERS_RANKER=rrf`` turns it off.

What a paper's text features need (its stems, sentences, phrase forms and acronyms: :class:`DocText`) is derived
once, when the paper enters the BM25 index (:mod:`vectorstore.features`), and read from there: the query path
never tokenises or stems a paper. Its record and vectors are read from Chroma once per store revision: when the
app opens the store, a background warm-up (:meth:`LearnedRanker.warm`) reads them for up to :data:`WARM` papers in
one go, and questions that come meanwhile wait for it. A larger store is not warmed (it would cover a fraction of
it, and compete with the first questions): its papers are read lazily by the first question that needs them.
"""

from __future__ import annotations

import atexit
import logging
import math
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from askpapers.rag.retrieve.forest import Forest
from askpapers.rag.retrieve.fusion import rrf
from askpapers.rag.retrieve.index import Index
from askpapers.rag.retrieve.rank_features import EMPTY_DOC, FEATURES, N_TEXT, QueryText, text_features
from askpapers.vectorstore.features import DocText
from askpapers.vectorstore.text import STOPWORDS
from askpapers.vectorstore.text import tokens as word_tokens
from askpapers.vectorstore.types import Filters

log = logging.getLogger("askpapers")
POOL = 200  # papers the model orders (the rest keep their fused order after them)
PRF_TOP, PRF_BETA = 3, 1.0  # Rocchio: query + 1.0 x mean of the fused top 3 paper vectors
DOC_CACHE = 20_000  # per-paper text features kept between questions (cleared when the store changes)
# papers whose data a warm-up builds ahead of the questions (text data about 21 KB a paper on ICML 2024's abstracts,
# so about 105 MB at most, plus their records and vectors); a larger store's other papers are built lazily
WARM = 5_000
WARM_BATCH = 250  # papers a warm-up builds between checks that the store is unchanged
WARM_WAIT = 30.0  # the longest a question waits for a warm-up (about a second per 2,600 papers on 2 cores)


def model_path() -> Path:
    """The shipped model file (package data)."""
    return Path(str(resources.files("askpapers.rag") / "ranker" / "reranker.txt"))


def _rank_of(v: np.ndarray) -> np.ndarray:
    order = np.argsort(-v, kind="stable")
    r = np.empty(len(v))
    r[order] = np.arange(1, len(v) + 1)
    return r


def _rel(x: np.ndarray) -> np.ndarray:
    m = x.max() if len(x) else 0.0
    return x / m if m > 0 else np.zeros_like(x)


def _ranks(ids: Sequence[str]) -> dict[str, int]:
    return {p: i for i, p in enumerate(ids, 1)}


class Pool:
    """The candidates the model orders and their feature matrix (rows in pool order)."""

    def __init__(self, ids: list[str], features: np.ndarray, similarity: dict[str, float]) -> None:
        self.ids = ids
        self.features = features
        self.similarity = similarity  # best-chunk cosine of each pool paper


_exiting = threading.Event()  # set at exit: warm-ups stop at their next batch
_warmers: list[threading.Thread] = []
_warmers_lock = threading.Lock()


@atexit.register
def _stop_warming() -> None:
    """Stop the warm-ups still running and wait for them (each ends its batch: well under a second). A daemon
    thread left inside Chroma's native code while the interpreter shuts down can crash the process."""
    _exiting.set()
    with _warmers_lock:
        running = list(_warmers)
    for thread in running:
        thread.join(WARM_WAIT)


class LearnedRanker:
    """Features for the fused candidates of a query, and the model that orders them."""

    def __init__(self, index: Index, model: Path | None = None, pool: int = POOL) -> None:
        self.index = index
        self.pool_size = pool
        self._path = model or model_path()
        self._forest: Forest | None = None
        self._docs: dict[str, DocText] = {}
        self._docs_key = ""
        self._df: dict[str, int] = {}  # document frequencies of query words (cleared with the documents)
        self._lock = threading.Lock()
        self._warming: threading.Event | None = None  # set when the warm-up questions wait for has ended

    @property
    def forest(self) -> Forest:
        if self._forest is None:
            with self._lock:
                if self._forest is None:
                    self._forest = Forest.load(self._path)
        return self._forest

    def score(self, features: np.ndarray) -> np.ndarray:
        return self.forest.predict(features)

    # -- features ----------------------------------------------------------------------------------------
    def built(self, paper_id: str) -> DocText | None:
        """The paper's text data, if it is built for the store revision this process last saw; None otherwise
        (nothing is built here)."""
        if self._docs_key != self.index.seen_revision:
            return None
        return self._docs.get(paper_id)

    def sentence_stems(self, paper_id: str) -> list[frozenset[str]] | None:
        """The stems of each sentence of the paper's abstract, in order (then its title's), if its text data is
        built (:meth:`built`)."""
        dt = self.built(paper_id)
        return dt.sent_stems if dt is not None else None

    def _doc_texts(self, ids: Sequence[str]) -> dict[str, DocText]:
        """The text data of these papers (those in the store): read from the BM25 index, where it was derived when
        the papers were indexed (nothing is tokenised or stemmed here), and kept for the store's revision."""
        key = self.index.seen_revision
        with self._lock:
            if key != self._docs_key or len(self._docs) > DOC_CACHE:
                self._docs.clear()
                self._df.clear()
                self._docs_key = key
        out = {pid: dt for pid in ids if (dt := self._docs.get(pid)) is not None}
        missing = [pid for pid in ids if pid not in out]
        if missing:
            read = self.index.doc_texts(missing)
            out.update(read)
            with self._lock:
                if self._docs_key == key:
                    self._docs.update(read)
        return out

    def warm(self, most: int = WARM, stop: threading.Event | None = None) -> int:
        """Read the per-paper data of up to ``most`` papers of the store in one go, so that questions find it
        cached: their records and vectors (:meth:`Index.preload`) and their text data (from the BM25 index,
        as the lazy path reads it: the same features). Returns how many papers' text data it read; nothing is
        kept when the store changed meanwhile, and ``stop`` ends it early."""
        self.index.refresh()
        key = self.index.seen_revision
        papers = self.index.preload(min(most, DOC_CACHE), stop)
        docs: dict[str, DocText] = {}
        for start in range(0, len(papers), WARM_BATCH):
            if (stop is not None and stop.is_set()) or self.index.seen_revision != key:
                return 0  # stopped, or the store changed: the next question starts over
            docs.update(self.index.doc_texts([p.paper_id for p in papers[start : start + WARM_BATCH]]))
        with self._lock:
            if self.index.seen_revision != key:
                return 0
            if self._docs_key != key:
                self._docs.clear()
                self._df.clear()
                self._docs_key = key
            if len(self._docs) + len(docs) > DOC_CACHE:
                self._docs.clear()
            self._docs.update(docs)
        return len(docs)

    def warm_in_background(self, *, wait: bool) -> threading.Thread | None:
        """Run :meth:`warm` in a background thread. With ``wait``, questions that come while it runs wait for it
        (at most :data:`WARM_WAIT` seconds) rather than build their papers' data alongside it, which would only
        slow both down; without, they build what they need themselves.

        A store larger than the warm-up covers is not warmed (None): most of a first-time question's papers are
        outside it (at 50k papers, 90 %; at 1M, 99.5 %), so it would save a question little, while it took the
        cores the first questions need (at 50k, 39 first-time searches: p50 90-119 ms with it running, 73 ms
        without). Such questions read their papers' data themselves."""
        if self.index.size() > WARM:
            return None
        done = threading.Event()
        if wait:
            self._warming = done

        def run() -> None:
            try:
                self.warm(stop=_exiting)
            except Exception as e:  # (an optimisation: questions still build their data lazily)
                log.warning("askpapers: warming the reranker's caches failed: %s", e)
            finally:
                done.set()

        thread = threading.Thread(target=run, name="askpapers-warm", daemon=True)
        with _warmers_lock:
            _warmers[:] = [t for t in _warmers if t.is_alive()] + [thread]
        thread.start()
        return thread

    def _idf(self, text: str) -> dict[str, float]:
        """BM25's idf of each content word of the query, from the corpus's document frequencies."""
        words = [w for w in dict.fromkeys(word_tokens(text)) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]
        if not self._df:  # (emptied when the store changes)
            self._df[""] = max(self.index.size(), 1)  # the paper count, kept under the empty word
        n = self._df[""]
        missing = [w for w in words if w not in self._df]
        if missing:
            self._df.update(dict.fromkeys(missing, 0) | self.index.word_df(missing))
        df = self._df
        return {w: max(math.log((n - df.get(w, 0) + 0.5) / (df.get(w, 0) + 0.5)), 1e-6) for w in words}

    def pool(
        self,
        text: str,
        phrases: Sequence[str],
        rankings: dict[str, list[tuple[str, float]]],
        fused: list[str],
        rrf_scores: dict[str, float],
        rrf_k: int,
        dense_chunks: int,
        filters: Filters | None = None,
    ) -> Pool:
        """The pool for one query: fused rankings plus dense pseudo-relevance feedback, and its features.

        ``rankings`` maps each retriever's name (dense, lexical, phrase) to its (paper_id, score) list, best first.
        """
        if self._warming is not None:  # a warm-up of the store's data is running: its data is on its way
            self._warming.wait(WARM_WAIT)
        qv = self.index.embed(text)
        top = self.index.vectors(fused[:PRF_TOP])
        v = qv + PRF_BETA * np.mean(list(top.values()), axis=0) if top else qv
        v = (v / (np.linalg.norm(v) or 1.0)).astype(np.float32)
        prf = self.index.nearest_paper_ids(v, dense_chunks, filters)
        lists = [[p for p, _ in r] for r in rankings.values() if r] + [prf]
        ps = rrf(lists, rrf_k)
        dense = dict(rankings.get("dense", []))
        pool = sorted(ps, key=lambda p: (-ps[p], -dense.get(p, 0.0)))[: self.pool_size]
        n = len(pool)
        if not n:
            return Pool([], np.zeros((0, len(FEATURES)), dtype=np.float32), {})
        # dense features: every chunk of every pool paper against the query, in one product
        pv = self.index.vectors(pool)
        cv = self.index.chunk_vectors(pool)
        zero = np.zeros(len(qv), dtype=np.float32)
        paper = np.stack([pv.get(p, zero) for p in pool])
        chunks = [cv[p] if p in cv and len(cv[p]) else paper[i][None, :] for i, p in enumerate(pool)]
        n_chunks = np.array([len(cv.get(p, ())) for p in pool], dtype=np.float64)
        sims = np.concatenate(chunks) @ qv
        starts = np.concatenate([[0], np.cumsum([len(c) for c in chunks])[:-1]]).astype(np.int64)
        cos_best = np.maximum.reduceat(sims, starts).astype(np.float64)
        cos_mean = np.add.reduceat(sims, starts) / np.array([len(c) for c in chunks], dtype=np.float64)
        cos_paper = (paper @ qv).astype(np.float64)
        cos_prf = (paper @ v).astype(np.float64)
        # lexical features: the query's BM25 in each pool paper, over both fields and each alone
        fields = self.index.field_scores(text, pool)
        b3 = np.array([fields.get(p, (0.0, 0.0, 0.0)) for p in pool], dtype=np.float64).reshape(n, 3)
        bm, bm_t, bm_a = b3[:, 0], b3[:, 1], b3[:, 2]
        # text features
        docs = self._doc_texts(pool)
        qt = QueryText(text, phrases, self._idf(text))
        empty = EMPTY_DOC
        tf = np.array([text_features(qt, docs.get(p, empty)) for p in pool], dtype=np.float64).reshape(n, N_TEXT)
        lex_n = len(rankings.get("lexical", [])) + 1
        dense_n = len(rankings.get("dense", [])) + 1
        lex_r = _ranks([p for p, _ in rankings.get("lexical", [])])
        phr_r = _ranks([p for p, _ in rankings.get("phrase", [])])
        d_r, p_r, f_r = _ranks(list(dense)), _ranks(prf), _ranks(fused)
        phr_score = dict(rankings.get("phrase", []))
        log = np.log
        cols = [
            bm, bm_t, bm_a, _rel(bm), _rel(bm_a), _rel(bm_t),
            log([lex_r.get(p, lex_n) for p in pool]), log(_rank_of(bm_t)), log(_rank_of(bm_a)),
            np.array([phr_score.get(p, 0.0) for p in pool]), log([phr_r.get(p, lex_n) for p in pool]),
            cos_best, cos_mean, cos_paper, n_chunks, cos_best - cos_best.max(),
            log([d_r.get(p, dense_n) for p in pool]), log(_rank_of(cos_best)), log(_rank_of(cos_mean)),
            cos_prf, cos_prf - cos_prf.max(), log([p_r.get(p, dense_n) for p in pool]),
            np.array([rrf_scores.get(p, 0.0) for p in pool]), log([f_r.get(p, 10_000) for p in pool]),
            log(np.arange(1, n + 1)),
        ]  # fmt: skip
        query = [len(qt.terms), qt.idf_sum, bm.max(), cos_best.max(), float(bool(phrases))]
        X = np.column_stack([*cols, *(tf[:, j] for j in range(N_TEXT)), *(np.full(n, q) for q in query)])
        return Pool(pool, X.astype(np.float32), dict(zip(pool, cos_best.tolist(), strict=True)))
