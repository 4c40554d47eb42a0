"""Answers without an LLM: which-papers lists, factoid sentences, or a plain "nothing matches".

Lists come from the matcher (:mod:`rag.match`): every paper that meets the topic, each with a verbatim evidence
sentence. A factoid question is answered by quoting the best sentence of the best-ranked paper, preferring papers
that name the method the question names.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

from vectorstore.text import content_stems, stems
from vectorstore.types import Filters, Paper

from ..index import PaperIndex
from ..match import best_sentence, match_topic
from ..query import Question
from ..retrieval import Candidate, FusionRetriever, Query
from ..settings import AnswerSettings
from ..types import Answer, Citation, Hit
from .base import Answerer, Request

_NAME = re.compile(r"\b(?:[A-Z][a-z]+[A-Z][\w-]*|[A-Z]{2,}[\w-]*|[A-Za-z]+-[A-Z0-9][\w-]*)\b")
_NUMERIC_Q = re.compile(r"^\s*(?:what|how\s+(?:much|many|large|big|fast|long|well)|by\s+how\s+much)\b", re.IGNORECASE)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>])")
FACTOID_READ = 20  # ranked papers read for a factoid question (named methods are looked for among them)
FACTOID_POOL = 5  # of those, the best-ranked ones a quote may come from when the question names no method
NEAREST = 3  # papers shown for orientation when nothing matches
NAMED_BONUS = 0.5  # preference for a paper that names the method the question names
SIMILARITY_WEIGHT = 0.5  # weight of the best chunk's similarity next to the sentence's coverage


def md(text: str) -> str:
    """Escape Markdown and HTML so abstract text renders as text."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def abstain(q: Question, message: str, nearest: list[Hit]) -> Answer:
    text = message
    if nearest:
        listed = "; ".join(f"*{md(h.title)}*" for h in nearest)
        text += f"\n\nNearest papers (these do **not** match, shown for orientation only): {listed}."
    return Answer(question=q.text, text=text, citations=[], found=False, kind=q.kind, nearest=nearest)


class ExtractiveAnswerer(Answerer):
    """Lists, factoid quotes and abstentions built only from the abstracts' own sentences."""

    name = "extractive"

    def __init__(self, index: PaperIndex, retriever: FusionRetriever, rule: AnswerSettings) -> None:
        self.index = index
        self.retriever = retriever
        self.rule = rule

    def stream(self, request: Request) -> Iterator[str | Answer]:
        answer = self.answer(request)
        yield answer.text
        yield answer

    def answer(self, request: Request) -> Answer:
        q = request.query
        if q.kind == "list":
            answer = self.answer_list(q, request.filters, request.within)
            if request.k is not None:
                answer.citations = answer.citations[: request.k]
        else:
            answer = self.answer_factoid(q, request.filters, request.within)
        answer.notices = [*request.notices, *answer.notices]
        answer.latency_s = time.perf_counter() - request.started if request.started else 0.0
        return answer

    def answer_list(self, q: Question, filters: Filters | None, within: list[str] | None = None) -> Answer:
        if not q.alternatives or not any(content_stems(a) for a in q.alternatives):
            return Answer(
                question=q.text,
                text="I could not tell what topic to look for. "
                "Try naming it, e.g. *Which papers use information bottleneck?*",
                citations=[],
                kind="list",
            )
        matches = match_topic(self.index, q.alternatives, self.rule, filters, within)
        topic = " or ".join(q.alternatives)
        if not matches:
            if within is not None:
                return abstain(q, f"None of the {len(within)} papers in the previous answer matches “{topic}”.", [])
            return abstain(q, f"No paper in the corpus matches “{topic}”.", self.nearest(topic, filters))
        cites = [Citation.from_paper(i, m.paper, m.evidence, m.score) for i, m in enumerate(matches, start=1)]
        noun = "paper" if len(cites) == 1 else "papers"
        if within is not None:
            verb = "matches" if len(cites) == 1 else "match"
            head = f"Of the {len(within)} papers in the previous answer, {len(cites)} {verb}"
            lines = [f"{head} “{topic}”:", ""]
        else:
            lines = [f"Found {len(cites)} {noun} matching “{topic}”:", ""]
        for c in cites:
            lines.append(f"{c.n}. **{md(c.title)}** [{c.n}]: “{md(c.evidence)}”")
        return Answer(question=q.text, text="\n".join(lines), citations=cites, found=True, kind="list")

    def answer_factoid(self, q: Question, filters: Filters | None, within: list[str] | None = None) -> Answer:
        terms = content_stems(q.text)
        if not any(not t.isdigit() for t in terms):  # nothing, or only numbers ("1 OR 1=1")
            return abstain(q, "The question has no words to search for. Please rephrase it.", [])
        cands: list[Candidate] = self.retriever.retrieve(Query(q.text), filters)
        if within is not None:
            keep = set(within)
            cands = [c for c in cands if c.paper_id in keep]
        papers = self.index.papers([c.paper_id for c in cands[:FACTOID_READ]])
        names = [n for n in _NAME.findall(q.text) if len(n) > 2]
        named = [
            c
            for c in cands[:FACTOID_READ]
            if c.paper_id in papers and any(n in papers[c.paper_id].abstract for n in names)
        ]
        named_ids = {c.paper_id for c in named}
        titled = any(c.paper_id in papers and _title_hit(papers[c.paper_id], names) for c in cands)
        if names and not named and not titled:
            nearest = [_hit(papers[c.paper_id], c) for c in cands[:NEAREST] if c.paper_id in papers]
            return abstain(q, f"No paper in the corpus mentions {', '.join(names)}.", nearest)
        pool = named or [c for c in cands[:FACTOID_POOL] if c.paper_id in papers]
        numeric = bool(_NUMERIC_Q.match(q.text))
        scored: list[tuple[float, Paper, str, Candidate]] = []
        for c in pool:
            p = papers[c.paper_id]
            sent = best_sentence(p.abstract, terms, prefer_numbers=numeric, within=c.snippet)
            cov = len(set(terms) & set(stems(sent))) / len(terms)
            bonus = NAMED_BONUS if c.paper_id in named_ids else 0.0
            scored.append((cov + SIMILARITY_WEIGHT * c.similarity + bonus, p, sent, c))
        scored.sort(key=lambda x: -x[0])
        if not scored:
            return abstain(q, "No paper in the corpus answers this question.", [])
        _, p, sent, c = scored[0]
        cov = len(set(terms) & set(stems(sent))) / len(terms)
        if cov < self.rule.factoid_min_coverage and not named:
            nearest = [_hit(papers[x.paper_id], x) for x in cands[:NEAREST] if x.paper_id in papers]
            return abstain(q, "No paper in the corpus answers this question.", nearest)
        cites = [Citation.from_paper(1, p, sent, c.score)]
        text = f"According to **{md(p.title)}** [1]: “{md(sent)}”"
        return Answer(question=q.text, text=text, citations=cites, found=True, kind="factoid")

    def nearest(self, topic: str, filters: Filters | None) -> list[Hit]:
        cands = self.retriever.retrieve(Query(topic), filters)[:NEAREST]
        papers = self.index.papers([c.paper_id for c in cands])
        return [_hit(papers[c.paper_id], c) for c in cands if c.paper_id in papers]


def _title_hit(p: Paper, names: list[str]) -> bool:
    return any(n in p.title for n in names)


def _hit(p: Paper, c: Candidate) -> Hit:
    return Hit.from_paper(p, c.score, c.snippet, c.similarity)
