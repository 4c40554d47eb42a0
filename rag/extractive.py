"""Answers without an LLM: which-papers lists, factoid sentences, or a plain "nothing matches".

A paper matches a topic when its abstract (or real title) states the topic phrase, or when its
best chunk is close enough in embedding space and covers the topic's words. Evidence is always a
whole sentence of the abstract, chosen for the topic words it contains.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vectorstore.text import acronym_definitions, contains_phrase, content_stems, phrase_forms, sentence_spans, stems
from vectorstore.types import Filters, Paper

from .query import Question
from .retrieve import Candidate, Retriever, to_hit
from .types import Answer, Citation, Hit

# Decision rule for a paper that does not state the topic phrase (cosine similarity of its best
# chunk to the topic, and the share of the topic's words found in one sentence of it).
DENSE_ALONE = 0.62
DENSE_WITH_TERMS = 0.45
FACTOID_MIN_COVERAGE = 0.34
DENSE_SPELLINGS = 3  # spellings of a topic searched densely (the rest only lexically)
DENSE_TOPIC_CHUNKS = 100  # nearest chunks fetched per spelling
_COMPOUND = re.compile(r"\w[-\u2010\u2011]\w")
_NAME = re.compile(r"\b(?:[A-Z][a-z]+[A-Z][\w-]*|[A-Z]{2,}[\w-]*|[A-Za-z]+-[A-Z0-9][\w-]*)\b")
_NUMERIC_Q = re.compile(r"^\s*(?:what|how\s+(?:much|many|large|big|fast|long|well)|by\s+how\s+much)\b", re.IGNORECASE)


@dataclass
class Match:
    paper: Paper
    score: float
    evidence: str
    phrase: bool
    similarity: float


def best_sentence(abstract: str, terms: list[str], prefer_numbers: bool = False, within: str = "") -> str:
    """The sentence of ``abstract`` that covers the most of ``terms`` (verbatim).

    Ties go to the sentence inside ``within`` (the best-matching chunk), then to the earliest.
    """
    spans = sentence_spans(abstract)
    if not spans:
        return abstract
    want = set(terms)
    best, best_key = spans[0], (-1.0, 0, 0, 0)
    for i, (s, e) in enumerate(spans):
        sent = abstract[s:e]
        got = want & set(stems(sent))
        key = (
            len(got) / max(len(want), 1),
            int(prefer_numbers and bool(re.search(r"\d", sent))),
            int(bool(within) and sent in within),
            -i,
        )
        if key > best_key:
            best, best_key = (s, e), key
    return abstract[best[0] : best[1]]


def topic_units(topic: str) -> list[str]:
    """The parts of a topic a sentence must state: content words, and hyphenated compounds kept whole."""
    units: list[str] = []
    for word in topic.split():
        if _COMPOUND.search(word):
            if content_stems(word):
                units.append(word.strip(".,;:!?\"'()"))
        else:
            units.extend(content_stems(word))
    return list(dict.fromkeys(units))


def coverage(units: list[str], text: str) -> float:
    """Largest share of a topic's units (see :func:`topic_units`) found together in one sentence of ``text``.

    A compound such as "vision-language" counts only where the sentence states it as a phrase, so
    "language and vision tasks" does not cover it.
    """
    if not units:
        return 0.0
    best = 0.0
    for s, e in sentence_spans(text):
        sentence = text[s:e]
        words = set(stems(sentence))
        forms: set[str] | None = None
        found = 0
        for u in units:
            if _COMPOUND.search(u):
                forms = forms if forms is not None else phrase_forms(sentence)
                found += contains_phrase(forms, u)
            else:
                found += u in words
        best = max(best, found / len(units))
    return best


def _forms(p: Paper) -> set[str]:
    return phrase_forms(p.abstract if p.title_derived else f"{p.title}. {p.abstract}")


def match_topic(
    retriever: Retriever,
    alternatives: list[str],
    filters: Filters | None = None,
    within: list[str] | None = None,
) -> list[Match]:
    """Every paper that matches any of the alternative phrasings of a topic, best first."""
    r = retriever.settings.retrieval
    sims: dict[str, tuple[float, str]] = {}
    scope = filters
    for alt in alternatives[:DENSE_SPELLINGS]:
        if within is not None:
            dense = best_of(retriever, alt, within)
        else:
            dense = retriever.dense(alt, scope, n=DENSE_TOPIC_CHUNKS)
        for pid, (sim, chunk) in dense.items():
            if pid not in sims or sim > sims[pid][0]:
                sims[pid] = (sim, chunk)
    # Only two kinds of paper can pass the rule below: those that state a spelling of the topic (found by
    # an FTS5 phrase query) and those whose best chunk is close enough; nothing else needs to be read.
    if within is not None:
        ids = list(within)
    else:
        ids = [pid for pid, _ in retriever.phrase_search(alternatives, 5 * r.max_list, scope)]
        ids += [pid for pid, (sim, _) in sims.items() if sim >= DENSE_WITH_TERMS and pid not in set(ids)]
    papers = retriever.papers(ids)
    variants = spellings(alternatives, [p.abstract for p in papers.values()])
    matches: list[Match] = []
    for pid, p in papers.items():
        forms = _forms(p)
        sim, chunk = sims.get(pid, (0.0, ""))
        best: Match | None = None
        for alt in alternatives:
            terms = content_stems(alt)
            phrase = any(contains_phrase(forms, v) for v in variants[alt])
            cov = coverage(topic_units(alt), p.abstract)
            ok = phrase or (sim >= DENSE_ALONE and cov >= 0.5) or (cov >= 1.0 and sim >= DENSE_WITH_TERMS)
            if not ok:
                continue
            score = (1.0 if phrase else 0.0) + cov * 0.5 + sim
            if best is None or score > best.score:
                best = Match(p, score, best_sentence(p.abstract, terms, within=chunk), phrase, sim)
        if best is not None:
            matches.append(best)
    matches.sort(key=lambda m: (-m.score, m.paper.title))
    return matches[: r.max_list]


def spellings(alternatives: list[str], texts: list[str]) -> dict[str, list[str]]:
    """Each alternative with the acronym or long form the texts define for it ("GNNs" ↔ "graph neural networks")."""
    defs: dict[str, set[str]] = {}
    for text in texts:
        for long, acro in acronym_definitions(text):
            key_long, key_acro = " ".join(stems(long)), " ".join(stems(acro))
            defs.setdefault(key_long, set()).add(acro)
            defs.setdefault(key_acro, set()).add(long)
    out: dict[str, list[str]] = {}
    for alt in alternatives:
        extra = sorted(defs.get(" ".join(stems(alt)), set()))
        out[alt] = [alt, *(e for e in extra if len(e) > 2 or len(stems(alt)) == 1)]
    return out


def best_of(retriever: Retriever, text: str, paper_ids: list[str]) -> dict[str, tuple[float, str]]:
    """Best chunk similarity for each of the given papers."""
    if not paper_ids:
        return {}
    vec = retriever.embed(text)
    hits = retriever.store.query_chunks(vec, 50 * len(paper_ids), {"paper_id": {"$in": list(paper_ids)}})
    out: dict[str, tuple[float, str]] = {}
    for pid, chunk, sim, _ in hits:
        if pid not in out or sim > out[pid][0]:
            out[pid] = (sim, chunk)
    return out


def _citation(n: int, p: Paper, evidence: str, score: float) -> Citation:
    assert evidence and evidence in p.abstract, "evidence must be a verbatim sentence of the abstract"
    return Citation(
        n=n,
        paper_id=p.paper_id,
        title=p.title,
        evidence=evidence,
        abstract=p.abstract,
        score=round(score, 4),
        venue=p.venue,
        url=p.url,
        code_urls=list(p.code_urls),
        year=p.year,
    )


def answer_list(retriever: Retriever, q: Question, filters: Filters | None, within: list[str] | None = None) -> Answer:
    if not q.alternatives or not any(content_stems(a) for a in q.alternatives):
        return Answer(
            question=q.text,
            text="I could not tell what topic to look for. "
            "Try naming it, e.g. *Which papers use information bottleneck?*",
            citations=[],
            kind="list",
        )
    matches = match_topic(retriever, q.alternatives, filters, within)
    topic = " or ".join(q.alternatives)
    if not matches:
        nearest = [] if within is not None else nearest_hits(retriever, topic, filters)
        if within is not None:
            return abstain(q, f"None of the {len(within)} papers in the previous answer matches “{topic}”.", [])
        return abstain(q, f"No paper in the corpus matches “{topic}”.", nearest)
    cites = [_citation(i, m.paper, m.evidence, m.score) for i, m in enumerate(matches, start=1)]
    noun = "paper" if len(cites) == 1 else "papers"
    if within is not None:
        verb = "matches" if len(cites) == 1 else "match"
        head = f"Of the {len(within)} papers in the previous answer, {len(cites)} {verb}"
        lines = [f"{head} “{topic}”:", ""]
    else:
        lines = [f"Found {len(cites)} {noun} matching “{topic}”:", ""]
    for c in cites:
        lines.append(f"{c.n}. **{_md(c.title)}** [{c.n}]: “{_md(c.evidence)}”")
    return Answer(question=q.text, text="\n".join(lines), citations=cites, found=True, kind="list")


def answer_factoid(
    retriever: Retriever, q: Question, filters: Filters | None, within: list[str] | None = None
) -> Answer:
    terms = content_stems(q.text)
    if not any(not t.isdigit() for t in terms):  # nothing, or only numbers ("1 OR 1=1")
        return abstain(q, "The question has no words to search for. Please rephrase it.", [])
    cands: list[Candidate] = retriever.candidates(q.text, filters)
    if within is not None:
        keep = set(within)
        cands = [c for c in cands if c.paper_id in keep]
    papers = retriever.papers([c.paper_id for c in cands[:20]])
    names = [n for n in _NAME.findall(q.text) if len(n) > 2]
    named = [c for c in cands[:20] if c.paper_id in papers and any(n in papers[c.paper_id].abstract for n in names)]
    if names and not named and not any(c.paper_id in papers and _title_hit(papers[c.paper_id], names) for c in cands):
        nearest = [to_hit(papers[c.paper_id], c) for c in cands[:3] if c.paper_id in papers]
        return abstain(q, f"No paper in the corpus mentions {', '.join(names)}.", nearest)
    pool = named or [c for c in cands[:5] if c.paper_id in papers]
    numeric = bool(_NUMERIC_Q.match(q.text))
    scored: list[tuple[float, Paper, str, Candidate]] = []
    for c in pool:
        p = papers[c.paper_id]
        sent = best_sentence(p.abstract, terms, prefer_numbers=numeric, within=c.snippet)
        cov = len(set(terms) & set(stems(sent))) / len(terms)
        scored.append((cov + 0.5 * c.similarity + (0.5 if c in named else 0.0), p, sent, c))
    scored.sort(key=lambda x: -x[0])
    if not scored:
        return abstain(q, "No paper in the corpus answers this question.", [])
    _, p, sent, c = scored[0]
    cov = len(set(terms) & set(stems(sent))) / len(terms)
    if cov < FACTOID_MIN_COVERAGE and not named:
        nearest = [to_hit(papers[x.paper_id], x) for x in cands[:3] if x.paper_id in papers]
        return abstain(q, "No paper in the corpus answers this question.", nearest)
    cites = [_citation(1, p, sent, c.score)]
    text = f"According to **{_md(p.title)}** [1]: “{_md(sent)}”"
    return Answer(question=q.text, text=text, citations=cites, found=True, kind="factoid")


def _title_hit(p: Paper, names: list[str]) -> bool:
    return any(n in p.title for n in names)


def nearest_hits(retriever: Retriever, topic: str, filters: Filters | None, k: int = 3) -> list[Hit]:
    cands = retriever.candidates(topic, filters)[:k]
    papers = retriever.papers([c.paper_id for c in cands])
    return [to_hit(papers[c.paper_id], c) for c in cands if c.paper_id in papers]


def abstain(q: Question, message: str, nearest: list[Hit]) -> Answer:
    text = message
    if nearest:
        listed = "; ".join(f"*{_md(h.title)}*" for h in nearest)
        text += f"\n\nNearest papers (these do **not** match, shown for orientation only): {listed}."
    return Answer(question=q.text, text=text, citations=[], found=False, kind=q.kind, nearest=nearest)


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>])")


def _md(text: str) -> str:
    """Escape Markdown/HTML so abstract text renders as text."""
    return _MD_SPECIAL.sub(r"\\\1", text)
