"""The fused search runs its first retriever (dense) on a worker thread while the others (BM25, phrases) run on the
caller's: the candidates and their fusion are those of running them one after another, and a retriever's failure
reaches the caller as before."""

from __future__ import annotations

import threading

import pytest

from askpapers.rag.api import AskPapers
from askpapers.rag.retrieve.retrieval import Candidate, FusionRetriever, Query, Retriever
from askpapers.vectorstore.errors import StoreError
from askpapers.vectorstore.types import Filters

QUERIES = ["information bottleneck", "graph neural networks for molecules", "Which papers study diffusion models?"]


class OnThread(Retriever):
    """A retriever that notes the thread it ran on (a subclass per name: :func:`spy`)."""

    def __init__(self, inner: Retriever, seen: list[tuple[str, str]]) -> None:
        super().__init__(inner.index, inner.settings)
        self.inner, self.seen = inner, seen

    def retrieve(self, query: Query, filters: Filters | None = None) -> list[Candidate]:
        self.seen.append((self.name, threading.current_thread().name))
        return self.inner.retrieve(query, filters)


def spy(inner: Retriever, seen: list[tuple[str, str]]) -> Retriever:
    cls = type(f"Spied{inner.name.title()}", (OnThread,), {"name": inner.name})
    return cls(inner, seen)  # type: ignore[no-any-return]


def test_dense_runs_beside_the_others_with_the_same_results(app: AskPapers) -> None:
    fused: FusionRetriever = app.parts.retriever
    seen: list[tuple[str, str]] = []
    spied = FusionRetriever([spy(r, seen) for r in fused.retrievers], fused.index, fused.k)
    here = threading.current_thread().name
    for text in QUERIES:
        query = app.search_query(text)
        results, ranked = spied.fuse(query)
        one_by_one = {r.name: r.retrieve(query) for r in fused.retrievers}
        assert list(results) == [r.name for r in fused.retrievers]  # (fused in the retrievers' order)
        assert {n: [(c.paper_id, c.score) for c in cs] for n, cs in results.items()} == {
            n: [(c.paper_id, c.score) for c in cs] for n, cs in one_by_one.items()
        }
        assert ranked and [c.paper_id for c in ranked] == [c.paper_id for c in fused.fuse(query)[1]]
    threads = dict(seen[:3])
    assert threads["dense"].startswith("askpapers-retrieve") and threads["dense"] != here
    assert threads["lexical"] == here and threads["phrase"] == here


def test_a_failing_retriever_on_the_worker_fails_the_search(app: AskPapers) -> None:
    fused: FusionRetriever = app.parts.retriever

    class Broken(Retriever):
        name = "dense"

        def retrieve(self, query: Query, filters: Filters | None = None) -> list[Candidate]:
            raise StoreError("the store went away")

    first = fused.retrievers[0]
    broken = FusionRetriever([Broken(first.index, first.settings), *fused.retrievers[1:]], fused.index, fused.k)
    with pytest.raises(StoreError, match="went away"):
        broken.fuse(app.search_query("information bottleneck"))


def test_a_forked_child_gets_worker_threads_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child forked after a search would inherit the pool without its threads: work submitted there would wait
    forever. The pool belongs to the process that made it."""
    import os

    from askpapers.rag.retrieve import workers

    parent = workers.pool()
    assert workers.pool() is parent
    pid = os.getpid()
    monkeypatch.setattr(workers, "_process", lambda: pid + 1)  # (as in a forked child)
    child = workers.pool()
    assert child is not parent
    assert child.submit(lambda: 42).result() == 42
    monkeypatch.setattr(workers, "_process", lambda: pid)
    assert workers.pool() is not parent  # (the child's pool is kept until the pid changes again)
    child.shutdown()


def test_many_questions_at_once_while_the_pool_is_busy(app: AskPapers, monkeypatch: pytest.MonkeyPatch) -> None:
    """More concurrent searches than worker threads: the extra dense retrievals queue, nothing waits on them but
    their own search, and every search gets the results it gets alone."""
    from concurrent.futures import ThreadPoolExecutor

    from askpapers.rag.retrieve import workers

    monkeypatch.setattr(workers, "_workers", None)
    monkeypatch.setattr(workers, "WORKERS", 1)
    alone = {q: [h.paper_id for h in app.search(q)] for q in QUERIES}
    with ThreadPoolExecutor(max_workers=6) as callers:
        got = list(callers.map(lambda q: (q, [h.paper_id for h in app.search(q)]), QUERIES * 4))
    assert got == [(q, alone[q]) for q in QUERIES * 4]


def test_a_facets_dense_searches_run_beside_its_phrase_lookups(app: AskPapers, monkeypatch: pytest.MonkeyPatch) -> None:
    """The matcher starts each facet's dense searches on a worker, then looks up the papers stating it here: the
    answer is the one of running them one after the other."""
    from concurrent.futures import Future

    from askpapers.rag.retrieve import workers

    pools = app.parts.answerers["extractive"].matcher.facet_pools  # type: ignore[attr-defined]
    seen: list[str] = []
    real = pools.dense

    def dense(*args: object) -> object:
        seen.append(threading.current_thread().name)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(pools, "dense", dense)
    question = "Which papers use graph neural networks for molecules?"
    side_by_side = app.ask(question, mode="extractive")
    assert seen and all(name.startswith("askpapers-retrieve") for name in seen)

    def inline(index: object, fn: object, *args: object) -> Future[object]:
        done: Future[object] = Future()
        done.set_result(fn(*args))  # type: ignore[operator]
        return done

    seen.clear()
    monkeypatch.setattr(workers, "beside", inline)
    one_after_another = app.ask(question, mode="extractive")
    assert seen and all(name == threading.current_thread().name for name in seen)
    assert side_by_side.total == one_after_another.total > 0
    assert [c.paper_id for c in side_by_side.citations] == [c.paper_id for c in one_after_another.citations]
