"""Answers without an LLM, for every intent of a plan: a list, a count, an overview in groups, a factoid quote, or
a plain "nothing matches".

Lists, counts and overviews come from the matcher (:mod:`rag.decide.match`): every paper that meets the plan, each with
verbatim evidence. The answer says how the question was read ("Found 60 papers matching “reinforcement learning”
**and** “robotic manipulation”") and what was searched instead of a misspelt word. A factoid question is answered
by quoting the best sentence of the best-ranked paper, preferring papers that name the method the question names.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

import numpy as np

from askpapers.rag.answerers.base import Answerer, Request
from askpapers.rag.answerers.groups import cluster, group_count, names
from askpapers.rag.decide.evidence import best_sentence
from askpapers.rag.decide.match import FacetMatcher, Match, MatchList, passes
from askpapers.rag.decide.membership import shipped as shipped_membership
from askpapers.rag.read.lexicon import Lexicon
from askpapers.rag.read.resolve import ranking_only
from askpapers.rag.retrieve.index import Index
from askpapers.rag.retrieve.retrieval import Candidate, FusionRetriever, Query
from askpapers.rag.settings import AnswerSettings
from askpapers.rag.types import Answer, Citation, Facet, Hit, QueryPlan
from askpapers.vectorstore.text import content_stems, stems, tokens
from askpapers.vectorstore.types import Filters, Paper

_NAME = re.compile(r"\b(?:[A-Z][a-z]+[A-Z][\w-]*|[A-Z]{2,}[\w-]*|[A-Za-z]+-[A-Z0-9][\w-]*)\b")
_NUMERIC_Q = re.compile(r"^\s*(?:what|how\s+(?:much|many|large|big|fast|long|well)|by\s+how\s+much)\b", re.IGNORECASE)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>])")
LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
FACTOID_READ = 20  # ranked papers read for a factoid question (named methods are looked for among them)
FACTOID_POOL = 5  # of those, the best-ranked ones a quote may come from when the question names no method
NEAREST = 3  # papers shown for orientation when nothing matches
NAMED_BONUS = 0.5  # preference for a paper that names the method the question names
SIMILARITY_WEIGHT = 0.5  # weight of the best chunk's similarity next to the sentence's coverage
SHARED = 0.6  # a word in this share of an overview's papers is what they share, not how they differ
NO_WORDS = "The question has no words to search for. Please rephrase it."
EMPTY_PREVIOUS = (
    "The previous answer found no papers, so there is nothing to narrow down. To search the whole corpus for "
    "{shown}, ask again without “of those”."
)
NOT_LATIN = (
    "The offline answerer reads English, and this question has no words in Latin script to search for. Ask in "
    "English, or set up an LLM endpoint (OPENAI_API_KEY or OPENAI_BASE_URL), which reads questions in any language."
)
NO_TOPIC = "I could not tell what topic to look for. Try naming it, e.g. *Which papers use information bottleneck?*"


def md(text: str) -> str:
    """Escape Markdown and HTML so abstract text renders as text."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def abstain(plan: QueryPlan, message: str, nearest: list[Hit]) -> Answer:
    text = preface(plan) + message
    if nearest:
        listed = "; ".join(f"*{md(h.title)}*" for h in nearest)
        text += f"\n\nNearest papers (these do **not** match, shown for orientation only): {listed}."
    return Answer(question=plan.text, text=text, citations=[], found=False, kind=plan.kind, nearest=nearest,
                  plan=plan.to_dict())  # fmt: skip


def preface(plan: QueryPlan) -> str:
    """ "Showing results for …" when a misspelt word was searched as another."""
    return f"Showing results for *{md(plan.searched)}*.\n\n" if plan.corrections else ""


def reading(plan: QueryPlan, filters: Filters) -> str:
    """How the question was read: “A or B” **and** “C”, excluding “D” (ICML 2024, 2024, with code)."""
    text = _named([f for f in plan.facets if not f.optional])
    optional = [a for f in plan.facets if f.optional for a in f.alternatives]
    if optional:
        text += " (those also on “" + md(" ".join(optional)) + "” first)"
    if plan.excluded:
        text += ", excluding “" + md(" or ".join(a for f in plan.excluded for a in f.alternatives)) + "”"
    year = str(filters.year) if filters.year else ""
    scope = [s for s in (filters.venue, year, "with code" if filters.has_code else "") if s]
    return text + (f" ({md(', '.join(scope))})" if scope else "")


def showing(cited: int, total: int) -> str:
    """ " Showing 2 of 7 papers" when an answer lists fewer papers than match (the best-ranked first)."""
    return f" Showing {cited} of {total} papers" if cited < total else ""


def _named(facets: Sequence[Facet]) -> str:
    """Facets as the answer names them: “A or B” **and** “C”."""
    return " **and** ".join(f"“{md(' or '.join(f.alternatives))}”" for f in facets)


def _followed_by(found: MatchList, beyond: MatchList) -> MatchList:
    """A follow-up's papers among the previous answer's, then those beyond it (:meth:`ExtractiveAnswerer._beyond`)."""
    if not beyond:
        return found
    return MatchList([*found, *beyond], [*found.unread, *beyond.unread], beyond.beyond)


def _items(cites: list[Citation]) -> list[str]:
    return [f"{c.n}. **{md(c.title)}** [{c.n}]: " + " … ".join(f"“{md(s)}”" for s in c.quotes()) for c in cites]


class ExtractiveAnswerer(Answerer):
    """Lists, counts, overviews, factoid quotes and abstentions built only from the abstracts' own sentences."""

    name = "extractive"

    def __init__(
        self, index: Index, retriever: FusionRetriever, rule: AnswerSettings, lexicon: Lexicon | None = None
    ) -> None:  # fmt: skip
        self.index = index
        self.retriever = retriever
        self.rule = rule
        self.lexicon = lexicon  # (to read a follow-up with the question it narrows as one question would be read)
        self.matcher = FacetMatcher(index, rule, retriever, shipped_membership())

    def stream(self, request: Request) -> Iterator[str | Answer]:
        answer = self.answer(request)
        yield answer.text
        yield answer

    def answer(self, request: Request) -> Answer:
        with self.index.pinned():  # one freshness check for every lookup of this answer
            return self._answer(request)

    def _answer(self, request: Request) -> Answer:
        plan = request.plan
        filters = plan.filters.merged(request.filters)
        words = [t for t in content_stems(plan.searched) if not t.isdigit()]
        topic = " ".join(plan.alternatives) if plan.facets else plan.searched
        if not words and request.within is None:  # nothing, or only numbers ("1 OR 1=1")
            answer = abstain(plan, NO_WORDS, [])
        elif not LATIN.search(topic):  # 信息瓶颈, عنق الزجاجة: the embedder and the index read English
            answer = abstain(plan, NOT_LATIN, [])
        elif plan.intent == "factoid":
            answer = self.answer_factoid(plan, filters, request.within)
        else:
            answer = self.answer_list(request, filters)
        answer.notices = [*request.notices, *answer.notices]
        answer.latency_s = time.perf_counter() - request.started if request.started else 0.0
        return answer

    # -- lists, counts and overviews ------------------------------------------------------------------------------
    def matches(self, request: Request, filters: Filters, near: list[Match] | None = None) -> MatchList:
        """Every paper that meets the request's plan (and with ``near``, the near misses: see FacetMatcher)."""
        plan, within = request.plan, request.within
        if any(not f.optional for f in plan.facets):
            if within is not None and request.context:
                # read with what the previous papers were found for; kept when some paper meets it all (a relaxed
                # reading could drop the new facet and keep the whole previous set)
                tried: list[Match] | None = [] if near is not None else None
                together = replace(plan, facets=[*self._beside(request.context, plan.facets), *plan.facets])
                found = self.matcher.match(together, filters, within, tried, page=request.k or 0)
                beyond = self._beyond(replace(plan, facets=[*request.context, *plan.facets]), filters, within,
                                      request.k or 0)  # fmt: skip
                if found and found[0].strict:
                    if near is not None and tried:
                        near += tried
                    return _followed_by(found, beyond)
                if beyond:  # none of the previous papers, but papers it did not list meet both read together
                    return beyond
            # (a large set's page is filled from the papers read: as many as it lists, at least PAGE_READ)
            return self.matcher.match(plan, filters, within, near, page=request.k or 0)
        if within is None:
            return MatchList()
        # a follow-up that only filters or excludes ("only those with code", "not the robotics ones")
        papers = [p for p in self.index.papers(within).values() if passes(p, filters)]
        kept = self.matcher.without_excluded(plan, papers, filters)
        terms = content_stems(request.previous_question)
        return MatchList([Match(p, 0.0, s, False, 0.0, [s]) for p in kept for s in [best_sentence(p.abstract, terms)]])

    def _beside(self, context: list[Facet], asked: list[Facet]) -> list[Facet]:
        """The facets the previous answer was found for, as they read beside a follow-up's own (``asked``, which stay
        as asked): one that is a word found in most papers only ranks, as in one question ("Which papers use
        learning?", then "Which of those are about non-convex optimization?" finds what "learning for non-convex
        optimization" finds: the papers that state non-convex optimization)."""
        if self.lexicon is None or not context:
            return context
        return ranking_only([*context, *asked], self.lexicon)[: len(context)]

    def _beyond(self, together: QueryPlan, filters: Filters, within: list[str], page: int) -> MatchList:
        """The papers outside the previous answer that meet a follow-up read together with what that answer was
        found for, as the one question would find them ("Which papers use diffusion models?", then "Which of those
        are about robots?": beside "robots", "diffusion policies" meets "diffusion models", as it does in "diffusion
        models for robots", though alone it did not). Only a strict reading counts: every facet met. None when a
        facet, read as one question would read it, only ranks (a word found in most papers beside another facet): a
        paper beyond the previous answer must meet what it was found for, and the follow-up's own facet must narrow
        ("Which papers use non-convex optimization?", then "Which of those are about learning?", finds no more)."""
        required = [f for f in together.facets if not f.optional]
        if self.lexicon is not None and any(f.optional for f in ranking_only(required, self.lexicon)):
            return MatchList()
        wider = self.matcher.match(together, filters, None, page=page)
        if not wider or not wider[0].strict:
            return MatchList()
        previous = set(within)
        kept = [m for m in wider if m.paper.paper_id not in previous]
        unread = [pid for pid in wider.unread if pid not in previous]
        return MatchList(kept, unread, beyond=[*(m.paper.paper_id for m in kept), *unread])

    def answer_list(self, request: Request, filters: Filters) -> Answer:
        plan, within = request.plan, request.within
        if not plan.facets and within is None:
            return abstain(plan, NO_TOPIC, [])
        matches = self.matches(request, filters)
        shown = reading(plan, filters) if plan.facets else "your question"
        if not matches:
            if within is not None:
                if not within:  # nothing to narrow: say so, and how to search everything
                    return abstain(plan, EMPTY_PREVIOUS.format(shown=shown), [])
                return abstain(plan, f"None of the {len(within)} papers in the previous answer matches {shown}.", [])
            return abstain(plan, f"No paper in the corpus matches {shown}.", self.nearest(plan, filters))
        cut = matches[: request.k or self.rule.max_list]
        terms = content_stems(" ".join(plan.alternatives) or plan.searched)  # what a long quote is trimmed around
        groups = self.groups(cut) if plan.intent == "overview" else [cut]
        ordered = [m for g in groups for m in g]  # numbered in reading order, group by group
        cites = [
            Citation.from_paper(i, m.paper, m.sentences or [m.evidence], m.score, terms)
            for i, m in enumerate(ordered, 1)
        ]
        if plan.intent == "overview":
            text = self.overview(plan, cites, [len(g) for g in groups], matches.total, shown)
        else:
            relaxed = not any(m.strict for m in matches)
            head = self.head(plan, matches.total, len(cut), shown, within, relaxed, matches.outside, request.context)
            text = "\n".join([head, "", *_items(cites)])
        return Answer(question=plan.text, text=preface(plan) + text, citations=cites, found=True, kind="list",
                      total=matches.total, plan=plan.to_dict(), matched_ids=matches.ids)  # fmt: skip

    def head(
        self, plan: QueryPlan, total: int, cited: int, shown: str, within: list[str] | None, relaxed: bool = False,
        outside: int = 0, context: Sequence[Facet] = (),
    ) -> str:  # fmt: skip
        """The answer's first line: what was found, and "Showing 2 of 7 papers" when it lists fewer. ``relaxed``:
        no paper meets every part of the question as read, and these are the ones that come closest. ``outside``: of
        a follow-up's papers, those the previous answer did not list, that meet it read together with ``context``
        (the facets that answer was found for); they are listed last."""
        noun = "paper" if total == 1 else "papers"
        verb = "matches" if total == 1 else "match"
        if within is not None and outside and not relaxed:
            inside = total - outside
            head = f"Of the {len(within)} papers in the previous answer, " + (
                f"{inside} {'matches' if inside == 1 else 'match'} {shown}" if inside else f"none matches {shown}"
            )
            also = "one paper it did not list matches" if outside == 1 else f"{outside} papers it did not list match"
            head += f"; read together with {_named(context)}, {also}" + (" too (listed last)" if inside else "")
            return head + (f".{showing(cited, total)}:" if cited < total else ":")
        if relaxed and plan.facets:
            head = f"No paper meets all of {shown}; {'this one comes' if total == 1 else f'these {total} come'} closest"
            if within is not None:
                head = f"Of the {len(within)} papers in the previous answer, none meets all of {shown}; " + (
                    "this one comes closest" if total == 1 else f"these {total} come closest"
                )
        elif within is not None:
            head = f"Of the {len(within)} papers in the previous answer, {total} {verb}"
            head += f" {shown}" if plan.facets else ""
        elif plan.intent == "count":
            head = f"**{total} {noun}** {verb} {shown}"
        else:
            head = f"Found {total} {noun} matching {shown}"
        return head + (f".{showing(cited, total)}:" if cited < total else ":")

    def groups(self, matches: list[Match]) -> list[list[Match]]:
        """The matches in groups by approach (k-means of their embeddings), the largest group first."""
        k = group_count(len(matches))
        if k == 1:
            return [matches]
        vectors = self.index.vectors([m.paper.paper_id for m in matches])
        labels = cluster(np.array([vectors[m.paper.paper_id] for m in matches], dtype=np.float32), k)
        order = sorted(set(labels.tolist()), key=lambda g: (-int((labels == g).sum()), g))
        return [[m for m, lab in zip(matches, labels, strict=True) if lab == g] for g in order]

    def overview(self, plan: QueryPlan, cites: list[Citation], sizes: list[int], total: int, shown: str) -> str:
        """The matching papers in groups by approach, each group named by its distinctive terms."""
        if len(cites) == 1:
            head = f"Only one paper matches {shown}, so there is nothing to compare:"
            return "\n".join([head, "", *_items(cites)])
        if len(sizes) == 1:
            head = f"**{total} papers** match {shown}; too few to group by approach."
            head = head + showing(len(cites), total) + ":" if len(cites) < total else head[:-1] + ":"
            return "\n".join([head, "", *_items(cites)])
        groups, start = [], 0
        for n in sizes:
            groups.append(cites[start : start + n])
            start += n
        shared = _shared_words(c.abstract for c in cites)
        titles = names([[c.abstract for c in grp] for grp in groups], exclude=[*plan.alternatives, *shared])
        lines = [f"**{total} papers** match {shown}, in {len(groups)} groups by approach:"]
        if len(cites) < total:
            lines[0] = (
                f"**{total} papers** match {shown}.{showing(len(cites), total)}, in {len(groups)} groups by approach:"
            )
        for title, grp in zip(titles, groups, strict=True):
            noun = "paper" if len(grp) == 1 else "papers"
            lines += ["", f"**{md(title)}** ({len(grp)} {noun})", "", *_items(grp)]
        return "\n".join(lines)

    # -- factoids ---------------------------------------------------------------------------------------------
    def answer_factoid(self, plan: QueryPlan, filters: Filters | None, within: list[str] | None = None) -> Answer:
        question = plan.searched
        terms = content_stems(question)
        cands: list[Candidate] = self.retriever.retrieve(Query(question), filters)
        if within is not None:
            keep = set(within)
            cands = [c for c in cands if c.paper_id in keep]
        papers = self.index.papers([c.paper_id for c in cands[:FACTOID_READ]])
        names_ = [n for n in _NAME.findall(question) if len(n) > 2]
        named = [
            c
            for c in cands[:FACTOID_READ]
            if c.paper_id in papers and any(n in papers[c.paper_id].abstract for n in names_)
        ]
        named_ids = {c.paper_id for c in named}
        titled = any(c.paper_id in papers and _title_hit(papers[c.paper_id], names_) for c in cands)
        if names_ and not named and not titled:
            nearest = [_hit(papers[c.paper_id], c) for c in cands[:NEAREST] if c.paper_id in papers]
            return abstain(plan, f"No paper in the corpus mentions {', '.join(names_)}.", nearest)
        pool = named or [c for c in cands[:FACTOID_POOL] if c.paper_id in papers]
        numeric = bool(_NUMERIC_Q.match(question))
        scored: list[tuple[float, Paper, str, Candidate]] = []
        for c in pool:
            p = papers[c.paper_id]
            sent = best_sentence(p.abstract, terms, prefer_numbers=numeric, within=c.snippet)
            cov = len(set(terms) & set(stems(sent))) / len(terms)
            bonus = NAMED_BONUS if c.paper_id in named_ids else 0.0
            scored.append((cov + SIMILARITY_WEIGHT * c.similarity + bonus, p, sent, c))
        scored.sort(key=lambda x: -x[0])
        if not scored:
            return abstain(plan, "No paper in the corpus answers this question.", [])
        _, p, sent, c = scored[0]
        cov = len(set(terms) & set(stems(sent))) / len(terms)
        if cov < self.rule.factoid_min_coverage and not named:
            nearest = [_hit(papers[x.paper_id], x) for x in cands[:NEAREST] if x.paper_id in papers]
            return abstain(plan, "No paper in the corpus answers this question.", nearest)
        cites = [Citation.from_paper(1, p, sent, c.score, terms)]
        text = preface(plan) + f"According to **{md(p.title)}** [1]: “{md(cites[0].quotes()[0])}”"
        return Answer(question=plan.text, text=text, citations=cites, found=True, kind="factoid", total=1,
                      plan=plan.to_dict())  # fmt: skip

    def nearest(self, plan: QueryPlan, filters: Filters | None) -> list[Hit]:
        topic = " ".join(plan.alternatives) or plan.searched
        cands = self.retriever.retrieve(Query(topic), filters)[:NEAREST]
        papers = self.index.papers([c.paper_id for c in cands])
        return [_hit(papers[c.paper_id], c) for c in cands if c.paper_id in papers]


def _shared_words(texts: Iterable[str], share: float = SHARED) -> list[str]:
    """Words in at least ``share`` of the texts: what the whole set has in common names no group."""
    docs = [set(tokens(t)) for t in texts]
    counts = Counter(w for d in docs for w in d)
    return [w for w, n in counts.items() if n >= share * len(docs)]


def _title_hit(p: Paper, names_: list[str]) -> bool:
    return any(n in p.title for n in names_)


def _hit(p: Paper, c: Candidate) -> Hit:
    return Hit.from_paper(p, c.score, c.snippet, c.similarity)
