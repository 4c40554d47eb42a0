"""The matcher: every paper that meets every facet of a plan, each with verbatim evidence, one sentence a facet.

A paper meets a facet when its abstract (or real title) states one of the facet's spellings (the question's
phrase, an acronym the corpus defines for it, other forms of its words; compared on surface forms, so words that
only share a stem do not count), or, failing that, when its best chunk is close enough in embedding space and
one sentence covers the facet's words (:func:`rag.decide.evidence.decide`). It meets the plan when it meets every
facet and no excluded one. The matcher reads papers only through :class:`~rag.retrieve.index.Index`; the papers that
may meet a facet (its pool) are found by :class:`rag.decide.pools.FacetPools`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from askpapers.rag.decide.acronyms import spellings
from askpapers.rag.decide.evidence import (
    as_one_word,
    best_sentence,
    decide,
    given_sentence_stems,
    given_word_stems,
    holds_words,
    holds_words_together,
    one_words,
    phrase_coverage,
    sentence_words,
    states,
    topic_units,
)
from askpapers.rag.decide.membership import (
    FEATURES,
    RANKED,
    CandidateEvidence,
    FacetEvidence,
    Membership,
    Ranked,
    eligible,
    features,
)
from askpapers.rag.decide.pools import FacetPools, Pool
from askpapers.rag.read.query import core_text
from askpapers.rag.retrieve import workers
from askpapers.rag.retrieve.index import Index
from askpapers.rag.retrieve.retrieval import FusionRetriever, Query
from askpapers.rag.settings import AnswerSettings
from askpapers.rag.types import Facet, QueryPlan
from askpapers.vectorstore.errors import StoreError
from askpapers.vectorstore.text import content_stems
from askpapers.vectorstore.types import ChunkHit, Filters, Paper

_STRICT = FEATURES.index("strict")


@dataclass
class _Place:
    rank: int
    gap: float
    similarity: float
    snippet: str


@dataclass
class _Reading:
    """What reading the candidates of one question needs besides the papers (see :meth:`FacetMatcher.candidates`)."""

    plan: QueryPlan
    facets: list[Facet]
    optional: list[Facet]
    pools: list[Pool]
    cores: list[list[str]]
    loose: bool
    pooled: set[str]
    ranked: dict[str, _Place]
    filters: Filters | None
    within: list[str] | None


log = logging.getLogger("askpapers")
LOOSE_SCORE = 0.5  # a facet met only by its words somewhere in the abstract (in a question with several facets)
# Above this many candidates, the papers the index shows to state every facet in a form the matcher accepts (its
# surface postings: FacetPools.stated) are counted without being read one by one; the papers read are the top of the
# ranked search, those that may meet a facet by embedding alone, and PAGE_READ more of the stating ones, best by
# BM25, so that a page of answers has its evidence. (At 50k papers, reading and checking one candidate costs about
# 0.3 ms: 0.86 s for the 2,790 papers using reinforcement learning, 20 s for the 75k a million papers would hold.)
LARGE_SET = 2000
PAGE_READ = 150


@dataclass
class Match:
    paper: Paper
    score: float
    evidence: str  # the first evidence sentence
    phrase: bool  # every facet met by a stated phrase
    similarity: float
    sentences: list[str] = field(default_factory=list)  # one verbatim sentence per facet (fewer if shared)
    probability: float = 1.0  # that the paper answers the question (rag.decide.membership)
    strict: bool = True  # meets every required facet by the matcher's rule


class MatchList(list[Match]):
    """The papers in a plan's answer set, best first, as read and checked one by one; with ``unread``, the ids of
    more papers in the set that the index showed to state every facet, counted but not read (a large set:
    :data:`LARGE_SET`). They rank below the papers read. A follow-up's set may hold papers the previous answer did
    not list (``beyond``: their ids; see :meth:`~rag.answerers.extractive.ExtractiveAnswerer.matches`)."""

    def __init__(
        self, matches: Sequence[Match] = (), unread: Sequence[str] = (), beyond: Iterable[str] = ()
    ) -> None:  # fmt: skip
        super().__init__(matches)
        self.unread = list(unread)
        self.beyond = frozenset(beyond)

    @property
    def outside(self) -> int:
        """How many papers of the set the previous answer did not list (0 but for a follow-up)."""
        return sum(pid in self.beyond for pid in self.ids)

    @property
    def total(self) -> int:
        """How many papers are in the set: those read and those counted."""
        return len(self) + len(self.unread)

    @property
    def ids(self) -> list[str]:
        """Every paper id in the set, best first (the unread ones last)."""
        return [*(m.paper.paper_id for m in self), *self.unread]


def _one_words(facet: Facet, variants: dict[str, list[str]]) -> frozenset[str]:
    """The facet's forms that are one word (:func:`~rag.decide.evidence.one_words`), of its spellings' variants."""
    return one_words([v for s in facet.all_spellings() for v in variants.get(s, [s])])


def _text_of(p: Paper) -> str:
    return p.abstract if p.title_derived else f"{p.title}. {p.abstract}"


@dataclass
class _FacetHit:
    """How one paper meets one facet."""

    score: float
    phrase: bool
    similarity: float
    evidence: str
    loose: bool = False  # met only by its words somewhere, or a shorter form


class FacetMatcher:
    """Every paper that meets every facet of a plan and none of its exclusions, each with verbatim evidence."""

    def __init__(
        self, index: Index, rule: AnswerSettings, retriever: FusionRetriever | None = None,
        membership: Membership | None = None,
    ) -> None:  # fmt: skip
        self.index = index
        self.rule = rule
        self.retriever = retriever
        self.membership = membership
        self.facet_pools = FacetPools(index, rule)  # the papers that may meet each facet

    def meets(
        self, p: Paper, facet: Facet, variants: dict[str, list[str]], dense: dict[str, ChunkHit], loose: bool = False,
        cores: Sequence[str] | None = None, one: frozenset[str] | None = None,
    ) -> _FacetHit | None:  # fmt: skip
        """How the paper meets the facet through its best alternative (None when it does not).

        With ``loose`` (a facet of a question with several), a paper with a sentence that holds every word of a
        spelling also meets it, at a lower score: the other facets already say what the paper is about; so does one
        that holds them anywhere if it is close to the facet in embedding space (``dense_with_terms``), but words
        spread over an abstract that is not are no evidence (most papers on LLMs use "code" and "generation"); so
        does one that states a shorter form of it (``cores``: the facet's :meth:`FacetPools.cores`, looked up here if
        not given; a caller matching many papers passes them, since each lookup counts phrases in the index). A
        facet alone is met, at that lower score, by a shorter form that is jargon (``cores``: its
        :meth:`FacetPools.jargon`; "unlearning" of "machine unlearning"), by nothing looser. ``one``: the facet's
        forms that are one word (:func:`_one_words`), worked out here if not given (a caller matching many papers
        passes them).
        """
        text = _text_of(p)
        hit = dense.get(p.paper_id)
        sim, chunk = (hit.similarity, hit.text) if hit else (0.0, "")
        best: _FacetHit | None = None
        one = _one_words(facet, variants) if one is None else one
        for group in facet.groups():
            # (the forms the papers define, not the spelling asked: an acronym among them only as written)
            phrase = any(states(text, v, v != s, as_one_word(v, one)) for s in group for v in variants.get(s, [s]))
            cov = max(phrase_coverage(s, p.abstract, as_one_word(s, one), text) for s in group)
            if not decide(phrase, sim, cov, self.rule):
                continue
            score = (1.0 if phrase else 0.0) + cov * 0.5 + sim
            if best is None or score > best.score:
                terms = content_stems(group[0])
                best = _FacetHit(score, phrase, sim, best_sentence(p.abstract, terms, within=chunk))
        if best is None and (loose or cores):  # (one facet: only a shorter form that is jargon, its cores)
            if loose and cores is None:
                cores = self.facet_pools.cores(facet)
            for group in facet.groups():
                forms = [v for s in group for v in variants.get(s, [s])]
                # (words spread over the abstract count when the paper is close to the facet in embedding space)
                holds = holds_words if sim >= self.rule.dense_with_terms else holds_words_together
                held = [v for v in forms if holds(text, v, as_one_word(v, one))] if loose else []
                if not held and cores:  # a shorter form that still names it
                    held = [c for c in cores if states(text, c, whole=as_one_word(c, one))]
                if held:
                    terms = content_stems(held[0])
                    evidence = best_sentence(p.abstract, terms, within=chunk)
                    return _FacetHit(LOOSE_SCORE + sim, False, sim, evidence, loose=True)
        return best

    def candidates(
        self, plan: QueryPlan, filters: Filters | None, within: list[str] | None = None,
        unread: list[str] | None = None, page: int = 0, settled: bool = False,
    ) -> tuple[list[CandidateEvidence], dict[str, Paper]]:  # fmt: skip
        """Every candidate for the plan's answer set, with its evidence per facet (see :mod:`rag.decide.membership`):
        the papers in every required facet's pool (all that state a spelling, so counts are complete), the near
        misses, and the top of the reranked search for the question. Given ``unread``, a large set's papers that
        the index shows to meet every facet are added to it instead of being read, but for ``page`` of them (at least
        :data:`PAGE_READ`; see :data:`LARGE_SET`). With ``settled``, the papers only the ranking found are left
        unread when a pooled paper meets every facet: the answer is then those papers (:meth:`match`), and nothing
        of theirs can change it (nor can the acronyms their texts define: a text that defines one for a spelling
        states the spelling, so it is pooled)."""
        facets = [self.facet_pools.defined(f, filters) for f in plan.facets if not f.optional]
        optional = [f for f in plan.facets if f.optional]
        if not facets:
            return [], {}
        loose = len(facets) > 1
        # (the same for every paper: looked up once)
        cores = [self.facet_pools.cores(f) if loose else self.facet_pools.jargon(f) for f in facets]
        # each facet's dense searches (embeddings and Chroma's queries) run on a worker beside its phrase lookups
        searches = [workers.beside(self.index, self.facet_pools.dense, f, filters, within) for f in facets]
        pools = [
            self.facet_pools.pool(f, filters, within, s, loose, c)
            for f, c, s in zip(facets, cores, searches, strict=True)
        ]
        ids = [pid for pid in (within if within is not None else sorted(pools[0][0])) if pid in pools[0][0]]
        for found, _ in pools[1:]:
            ids = [pid for pid in ids if pid in found]
        if len(facets) > 1 and within is None:  # in every pool but one: may meet that one by similarity alone
            ids += self.facet_pools.near(facets, pools, ids)
        ranked = self._ranked(plan, facets, filters, within)
        pooled = set(ids)
        if unread is not None and within is None and not plan.excluded and len(ids) > LARGE_SET:
            ids = self._large(facets, cores, pools, filters, loose, ids, set(ranked), unread, max(page, PAGE_READ))
        ids += [pid for pid in ranked if pid not in pooled]
        read = _Reading(plan, facets, optional, pools, cores, loose, pooled, ranked, filters, within)
        if settled:  # the pooled papers alone first: if one meets every facet, they are the answer
            first = self._read(read, [pid for pid in ids if pid in pooled])
            if any(all(f.met for f in c.facets) for c in first[0]):
                return first
        return self._read(read, ids)

    def _read(self, r: _Reading, ids: list[str]) -> tuple[list[CandidateEvidence], dict[str, Paper]]:
        """The evidence of each of these candidates (the acronyms their texts define count for all of them)."""
        papers = self.index.papers(ids)
        if r.filters is not None and r.within is not None:
            papers = {pid: p for pid, p in papers.items() if passes(p, r.filters)}
        ranker = self.retriever.ranker if self.retriever is not None else None
        if ranker is not None:  # (the stems of each sentence, derived at ingest, for the papers it has read)
            for pid, p in papers.items():
                if (dt := ranker.built(pid)) is not None:
                    given_sentence_stems(p.abstract, dt.sent_stems)
                    given_word_stems(_text_of(p), dt.word_stems)
        facets, pools, cores, ranked = r.facets, r.pools, r.cores, r.ranked
        if r.loose:  # (one facet: its dense pool has the similarities that matter)
            self.facet_pools.similarities(facets, pools, list(papers))
        texts = [p.abstract for p in papers.values()]
        variants_of = [self._variants(f, texts) for f in [*facets, *r.optional]]
        ones = [_one_words(f, v) for f, v in zip([*facets, *r.optional], variants_of, strict=True)]
        kept = {p.paper_id for p in self.without_excluded(r.plan, list(papers.values()), r.filters)}
        topic = content_stems(" ".join(f.alternatives[0] for f in facets))
        out: list[CandidateEvidence] = []
        for pid, p in papers.items():
            if pid not in kept:
                continue
            evs = []
            score = 0.0
            for f, (_, dense), v, c, one in zip(facets, pools, variants_of, cores, ones, strict=False):
                hit = self.meets(p, f, v, dense, r.loose, c, one)
                sim = dense[pid].similarity if pid in dense else 0.0
                cov = max(
                    phrase_coverage(s, p.abstract, as_one_word(s, one), _text_of(p)) for g in f.groups() for s in g[:1]
                )
                if hit is not None:
                    score += hit.score
                    evs.append(FacetEvidence(True, hit.phrase, hit.loose, cov, sim, f.weight, hit.evidence))
                else:
                    evs.append(FacetEvidence(False, False, False, cov, sim, f.weight))
            opt = []
            for f, v, one in zip(r.optional, variants_of[len(facets) :], ones[len(facets) :], strict=True):
                hit = self.meets(p, f, v, {}, one=one)
                opt.append(FacetEvidence(hit is not None, bool(hit and hit.phrase), False, 0.0, 0.0, f.weight,
                                         hit.evidence if hit else ""))  # fmt: skip
                score += 0.5 * hit.score if hit else 0.0
            sentences = _in_order(p.abstract, [e.evidence for e in [*evs, *opt] if e.evidence])
            if not sentences:
                hit_ = ranked.get(pid)
                sentences = [best_sentence(p.abstract, topic, within=hit_.snippet if hit_ else "")]
            place = ranked.get(pid)
            at = Ranked(place.rank, place.gap, place.similarity) if place else Ranked()
            out.append(CandidateEvidence(pid, evs, opt, at, score, sentences, pid in r.pooled))
        return out, papers

    def _variants(self, facet: Facet, texts: list[str]) -> dict[str, list[str]]:
        """Each spelling's forms that state it: those :func:`~rag.decide.acronyms.spellings` reads in the texts, and
        the ways the corpus writes it with a word apart or two words as one (:meth:`FacetPools.written`)."""
        out = spellings(facet.all_spellings(), texts)
        for s, forms in [*self.facet_pools.written(facet.all_spellings()).items(),
                         *self.facet_pools.short_forms(facet).items()]:  # fmt: skip
            out[s] = list(dict.fromkeys([*out.get(s, [s]), *forms]))
        return out

    def _large(
        self, facets: list[Facet], cores: list[list[str]], pools: list[Pool], filters: Filters | None, loose: bool,
        ids: list[str], ranked: set[str], unread: list[str], page: int,
    ) -> list[str]:  # fmt: skip
        """The candidates of a large set to read (see :data:`LARGE_SET`): the ranked search's top and ``page``
        of the stating papers, best by BM25 for the first facet; the others that meet every facet go to
        ``unread``. A candidate the index does not show to state every facet is read only if it may meet one by
        embedding (its similarity reaches ``dense_with_terms``) or, with ``loose``, holds the words of each facet it
        does not state (met if one sentence holds them): a paper that states none of a facet's forms meets it no
        other way."""
        sure, held = set(ids), set(ids)
        for f, c in zip(facets, cores, strict=True):
            # (with several facets, a paper holding a facet's words may meet it: if one sentence holds them all,
            # which only reading it tells)
            found = self.facet_pools.stated(f, filters, loose, c)
            if found is None:  # (the index cannot say: every candidate is read)
                return ids
            sure &= found[0]
            held &= found[1]
        close = self.rule.dense_with_terms
        read = [
            pid for pid in ids
            if pid in ranked or (pid not in sure and (pid in held or any(d[pid].similarity >= close
                                                                         for _, d in pools if pid in d)))
        ]  # fmt: skip
        seen = set(read)
        # (the best by BM25 for the first facet, then any: a page is never left empty while the set is not)
        best = [pid for pid, _ in self.index.phrase_search(facets[0].all_spellings(), page * 2, filters)]
        read += [pid for pid in dict.fromkeys([*best, *sorted(sure)]) if pid in sure and pid not in seen][:page]
        seen.update(read)
        unread.extend(pid for pid in ids if pid in sure and pid not in seen)
        return read

    def _ranked(
        self, plan: QueryPlan, facets: list[Facet], filters: Filters | None, within: list[str] | None
    ) -> dict[str, _Place]:
        """The top of the fused, reranked search for the question's topic (the search a user runs)."""
        if self.retriever is None:
            return {}
        query = Query(core_text(plan), tuple(plan.alternatives), tuple(tuple(f.all_spellings()) for f in facets))
        try:
            cands = self.retriever.retrieve(query, filters)
        except StoreError as e:  # (Chroma mid-write: the facets' own searches still find every stating paper)
            log.warning("askpapers: the ranked search failed, answering from the facets' searches: %s", e)
            return {}
        if within is not None:
            keep = set(within)
            cands = [c for c in cands if c.paper_id in keep]
        cands = cands[:RANKED]
        top = cands[0].score if cands else 0.0
        return {c.paper_id: _Place(i, top - c.score, c.similarity, c.snippet) for i, c in enumerate(cands, 1)}

    def match(
        self, plan: QueryPlan, filters: Filters | None, within: list[str] | None = None,
        near: list[Match] | None = None, page: int = 0,
    ) -> MatchList:  # fmt: skip
        """The papers in the plan's answer set, best first: all of them (the caller shows as many as it wants).

        Membership is the learned decision of :mod:`rag.decide.membership` over :meth:`candidates` (without a model,
        meeting every required facet). Optional facets need not hold; a paper that meets one ranks higher, and its
        sentence for it joins the evidence. Given a ``near`` list, the closest candidates left out are added to
        it, most probable first, for a judge to look at. A large set's papers that the index shows to meet every
        facet are counted, not read (:class:`MatchList`), but for :data:`PAGE_READ` of them, or ``page`` if more.
        """
        unread: list[str] = []
        cands, papers = self.candidates(plan, filters, within, unread, page, settled=near is None)
        if not cands:
            return MatchList(unread=unread)
        n_strict = sum(all(f.met for f in c.facets) for c in cands)
        model = self.membership
        rows = [features(c, n_strict) for c in cands]
        probs = model.probabilities(rows).tolist() if model is not None else [float(r[_STRICT]) for r in rows]
        cut = model.cut if model is not None else 0.5
        every: list[Match] = []
        # papers that miss exactly one facet and that the model finds borderline: their probability
        one_off: dict[str, float] = {}
        for c, prob, row in zip(cands, probs, rows, strict=True):
            if sum(not f.met for f in c.facets) == 1 and prob >= cut / 2:
                one_off[c.paper_id] = prob
            met = [f for f in c.facets if f.met]
            # (a paper only the ranking found, close to a facet it does not state, is a relaxed answer at most)
            strict = len(met) == len(c.facets) and c.pooled
            every.append(Match(papers[c.paper_id], c.score, c.sentences[0], all(f.phrase for f in c.facets),
                               max((f.similarity for f in met), default=c.ranked.similarity), c.sentences,
                               round(1.0 if strict else prob if eligible(row) else 0.0, 4), strict))  # fmt: skip
        # every paper that meets every facet, however many (a count is a true total); when none does, the papers
        # that meet all facets but one and come close to it, if the model finds them probable: a relaxed answer,
        # which says so (Match.strict)
        matches = [m for m in every if m.strict] or [m for m in every if m.probability >= cut]
        matches = matches or self._closest(plan, cands, every)
        matches.sort(key=lambda m: (-m.probability, -m.score, m.paper.title))
        if near is not None:  # for a judge: the papers left out that miss one facet only, most probable first
            kept = {m.paper.paper_id for m in matches}
            left = [m for m in every if m.paper.paper_id not in kept and m.paper.paper_id in one_off]
            near += sorted(left, key=lambda m: (-one_off[m.paper.paper_id], m.paper.title))
        # (the unread ones state every facet: a strict answer, so they join only one)
        return MatchList(matches, unread if matches and matches[0].strict else [])

    def _closest(self, plan: QueryPlan, cands: list[CandidateEvidence], every: list[Match]) -> list[Match]:
        """When no paper meets every facet, nor comes close enough for the model: the candidates that meet every
        facet but the least topical one, if some paper states that one (a relaxed answer, which says so). A
        question whose parts the corpus has, but never together ("prior art on federated learning"), is then not
        answered "no paper matches" while papers on the rest are there; one about a topic no paper states
        ("weather forecasting") still is, unless some sentence holds its words. With one facet of several words that
        no paper states ("efficient transformers"), the candidates with a sentence that holds all its words as the
        same terms ("Efficient Hybrid Long Sequence Modeling with State Space Augmented Transformers"), that sentence
        their evidence."""
        facets = [f for f in plan.facets if not f.optional]
        if len(facets) == 1 and cands:
            return self._words_together(facets[0], every)
        if not cands or len(facets) < 2 or len(cands[0].facets) != len(facets):
            return []
        drop = min(range(len(facets)), key=lambda i: (cands[0].facets[i].weight, -i))
        if not any(self.index.phrase_count(s) > 0 for s in facets[drop].all_spellings()):
            return []
        return [m for c, m in zip(cands, every, strict=True) if all(f.met for i, f in enumerate(c.facets) if i != drop)]

    @staticmethod
    def _words_together(facet: Facet, every: list[Match]) -> list[Match]:
        """The candidates with a sentence of the abstract that holds every content word of a spelling of the facet
        (compared as the same term: "transformation" is not "transformers"), as relaxed matches with it as their
        evidence; nothing for a facet of one word."""
        spells = [s for s in facet.all_spellings() if len(topic_units(s)) > 1]
        out = []
        for m in every:
            sentence = next((t for t, _ in sentence_words(m.paper.abstract) if any(holds_words(t, s) for s in spells)),
                            None)  # fmt: skip
            if sentence is not None:
                out.append(replace(m, evidence=sentence, sentences=[sentence], strict=False))
        return out

    def without_excluded(self, plan: QueryPlan, papers: list[Paper], filters: Filters | None) -> list[Paper]:
        """The papers that meet no excluded facet (judged by the same rule as an included one)."""
        if not plan.excluded or not papers:
            return papers
        texts = [p.abstract for p in papers]
        out = set()
        for facet in plan.excluded:
            dense = self.facet_pools.dense(facet, filters, [p.paper_id for p in papers])
            variants = spellings(facet.all_spellings(), texts)
            out |= {p.paper_id for p in papers if self.meets(p, facet, variants, dense) is not None}
        return [p for p in papers if p.paper_id not in out]


def passes(p: Paper, filters: Filters) -> bool:
    """Whether a paper passes the filters (for papers taken from a previous answer)."""
    return (
        (filters.venue is None or p.venue == filters.venue)
        and (filters.year is None or p.year == filters.year)
        and (not filters.has_code or p.has_code)
    )


def _in_order(abstract: str, sentences: list[str]) -> list[str]:
    """The distinct evidence sentences, in the order the abstract has them."""
    return sorted(dict.fromkeys(sentences), key=abstract.find)
