"""The baseline: the plain LangChain "chat with your docs" recipe over askpapers' own embedder.

``langchain_chroma.Chroma.from_documents(docs, embedding=E)`` with E a LangChain ``Embeddings`` over askpapers' ONNX
embedder, one Document per paper (the text askpapers ingests), then ``.as_retriever(search_kwargs={"k": 4})``; its
top 4 is its answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.harness import write_jsonl

if TYPE_CHECKING:
    from langchain_chroma import Chroma
    from langchain_core.embeddings import Embeddings

    from askpapers.rag.types import Answer
    from askpapers.vectorstore.embed import Embedder
    from askpapers.vectorstore.types import Paper

RECIPE_K = 4

# The recipe's cold start: a new Python process that opens the persisted Chroma store and runs its retriever.
RECIPE_COLD = """
import sys
from langchain_chroma import Chroma
from langchain_core.embeddings import Embeddings
from askpapers.vectorstore.embed import get_embedder

class E(Embeddings):
    def __init__(self):
        self.e = get_embedder()
    def embed_documents(self, texts):
        return self.e.embed(texts).tolist()
    def embed_query(self, text):
        return self.e.embed_query(text).tolist()

db = Chroma(embedding_function=E(), persist_directory=sys.argv[1])
for d in db.as_retriever(search_kwargs={"k": 4}).invoke(sys.argv[2]):
    print(d.metadata["id"])
"""


def recipe_embeddings(embedder: Embedder) -> Embeddings:
    """A LangChain ``Embeddings`` over askpapers' ONNX embedder (L2-normalised rows)."""
    from langchain_core.embeddings import Embeddings

    class AskpapersEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            rows: list[list[float]] = embedder.embed(texts).tolist()
            return rows

        def embed_query(self, text: str) -> list[float]:
            row: list[float] = embedder.embed_query(text).tolist()
            return row

    return AskpapersEmbeddings()


def page_content(p: Paper) -> str:
    """The text askpapers embeds for a whole paper: its real title (if any), '. ', then the abstract."""
    return (f"{p.title}. " if not p.title_derived else "") + p.abstract


def ingested_papers(records: list[dict[str, Any]], tmp: Path, name: str) -> list[Paper]:
    """The papers askpapers makes of ``records`` (same parser, same merging of identical abstracts)."""
    from askpapers.vectorstore.parse import parse_paths

    path = write_jsonl(tmp / f"{name}.jsonl", records)
    papers = parse_paths([path]).papers
    path.unlink()
    return papers


def recipe_store(papers: list[Paper], directory: Path, embedder: Embedder) -> Chroma:
    from langchain_chroma import Chroma
    from langchain_core.documents import Document

    docs = [Document(page_content=page_content(p), metadata={"id": p.paper_id}) for p in papers]
    return Chroma.from_documents(docs, embedding=recipe_embeddings(embedder), persist_directory=str(directory))


def doc_ids(docs: Sequence[Any]) -> list[str]:
    return [str(d.metadata["id"]) for d in docs]


def recipe_answer(question: str, docs: Sequence[Any], papers: dict[str, Paper]) -> Answer:
    """The recipe's top 4 as an Answer, so rag.evaluation.metrics.score_dev can score it like askpapers'.

    Its text is the retrieved context (what an LLM would be given), so a factoid counts as right when the relevant
    paper comes first and the expected figure is anywhere in the four documents: lenient to the recipe.
    """
    from askpapers.rag.types import Answer, Citation

    cites = []
    for n, pid in enumerate(doc_ids(docs), 1):
        p = papers[pid]
        cites.append(Citation(n, p.paper_id, p.title, evidence=p.abstract, abstract=p.abstract, score=0.0))
    text = "\n\n".join(str(d.page_content) for d in docs)
    return Answer(question=question, text=text, citations=cites, mode="extractive", found=bool(cites))


def plain_rrf(app: Any) -> Callable[[str, int], list[str]]:
    """The simplest strong baseline, on askpapers' own store: reciprocal-rank fusion of stemmed BM25 and MiniLM
    cosine (nearest chunks), on the text as typed: no query plan, no phrases, no learned reranker."""
    from askpapers.rag.retrieve.retrieval import Query, hybrid
    from askpapers.rag.settings import RetrievalSettings

    fusion = hybrid(app.index, RetrievalSettings(ranker="rrf"), names=("dense", "lexical"))
    return lambda text, k: [c.paper_id for c in fusion.retrieve(Query(text))[:k]]
