"""Reading a question, however it is phrased, into a :class:`QueryPlan`.

A plan says what the researcher wants (a set of papers, a count, an overview, or a fact about a named method),
which facets every paper must meet (AND), the alternatives of each (OR), what to leave out (NOT), filters stated
in words ("from 2024", "at ICML", "with code"), whether it narrows the previous answer, and which misspelt words
were searched as what.

Topic words are told from request words by the corpus, not by a grammar of phrasings. The question is cut into
tokens; a short list of request words ("papers", "show", "please", "use", …) and stop-words are set aside unless
the corpus binds them to their neighbours ("tool use" is a term, "use diffusion models" is not); the remaining
runs of words are the topic's units. Units joined by "for", "in", "with", "of", … are separate facets unless
the corpus states the joined phrase as one term ("mixture of experts", "theory of mind"); units joined by "or",
"and", commas or slashes are alternatives of one facet; "not", "without" and "excluding" start an exclusion,
except in a negated statement about a topic ("X does not affect Y" is about X and Y). A
unit the corpus never states is cut into the phrases it does state. Each alternative then carries its
spellings: an acronym the question defines, the form without a generic head ("jailbreak attacks" ~
"jailbreak"), and the corpus's words of the same family ("differential privacy" ~ "differentially private").

The reading runs in three stages: :mod:`.parse` (the tokens into units, boundaries and groups, no store access),
:mod:`.resolve` (which units are terms and topics, as one lexicon reads them) and :mod:`.expand` (the spellings of
each facet). :func:`plan` runs them; :mod:`.reader` puts them behind one interface, ``QueryReader``.
"""

from __future__ import annotations

from askpapers.rag.read.cues import (
    NOT_WORDS,
    RELATIONAL,
    REQUEST_WORDS,
    TOKEN,
    arrangements,
    asked_verbs,
    correct,
    framed,
    given,
    intent_of,
    is_name,
    loose_adverbs,
    phrase_slips,
    protect_acronyms,
    purposes,
    stated_filters,
    thanking,
    tokens,
)
from askpapers.rag.read.expand import build, same_phrase
from askpapers.rag.read.lexicon import Lexicon
from askpapers.rag.read.parse import (
    MAX_ALTERNATIVES,
    MAX_FACETS,
    answer_named,
    bounded,
    context_clauses,
    corrected,
    grouped,
    points_back,
    segments,
    slot_at,
    topic_slot,
)
from askpapers.rag.read.resolve import glued, join_terms, resolve, unhyphenated
from askpapers.rag.read.topicality import TOPICAL
from askpapers.rag.types import Facet, Intent, QueryPlan
from askpapers.vectorstore.text import one_line, stems

__all__ = ["REQUEST_WORDS", "Facet", "QueryPlan", "plan", "question_terms", "same_phrase"]

COINED_PAPERS = 5  # a name in at most this many papers is a coined one a factoid question may ask about


def named(word: str) -> str:
    """What a word names: a word that relates a name ("GAN-based", "LLM-guided": `RELATIONAL`) names what it
    relates ("GAN"), which is what a coined name is told by ("what's out there on LLM-based agents" had been read as
    a question of fact about a coined name, "LLM-based", which no paper uses as a word of its own)."""
    head, _, tail = word.rpartition("-")
    return head if head and tail.lower() in RELATIONAL else word


def plan(question: str, lexicon: Lexicon, weigh: bool = True) -> QueryPlan:
    """The plan of one question (already validated and printable). Each facet is weighed by how topical it is
    (:mod:`rag.read.topicality`); one that is not only ranks. ``weigh=False`` keeps every facet as read (to train that
    model)."""
    text = one_line(question)
    # a question all in capitals is read as typed in lower case: its capitals mark no acronym, nor a name, and its
    # words are corrected as any are ("WHICH PAPERS ARE ON COMMUNICATION" had cited nothing)
    shouted = not any(c.islower() for c in text)
    typed = text.lower() if shouted else text
    toks = tokens(typed)
    # the words typed alone are corrected first, so that a hyphenated word is read beside the words it follows as
    # typed right ("large *langauge* models-based reasoning" had kept "models-based" whole, beside "langauge"), then
    # the parts of the hyphenated words split apart
    corrections = correct(toks, lexicon)
    if framed(toks):  # (a statement is all content: its rare hyphenated words are its terms, "beta-band coherence")
        toks = unhyphenated(toks, lexicon)
        corrections += correct(toks, lexicon)
        corrections += phrase_slips(toks, lexicon)
    lowered = text.lower()
    corrections.sort(key=lambda c: lowered.find(c[0].lower()))  # (in the order typed, as corrected reads them)
    searched = corrected(typed, corrections)
    acronyms = protect_acronyms(toks)
    lows = [t.low for t in toks]
    names = [t.text for t in toks if t.word and is_name(t.text)]
    filters, used = stated_filters(toks, lexicon)
    # a fact is asked about a coined method or paper, which few papers name ("WaterSIC"), not about "GANs", nor about
    # an acronym the question spells out ("parameter-efficient fine-tuning (PEFT)" names a topic, not one paper)
    spelled = {i + 1 for i in acronyms} | {i for i, t in enumerate(toks) if t.protected >= 0}
    coined = [t.text for i, t in enumerate(toks) if t.word and is_name(named(t.text)) and i not in spelled
              and lexicon.df(named(t.text).lower()) <= COINED_PAPERS]  # fmt: skip
    followup = points_back(toks)

    def glue(word: str, neighbour: list[str], before: bool, last: bool) -> bool:
        return glued(word, neighbour, before, lexicon, last)

    is_framed = framed(toks) or followup  # (a question about the previous answer asks: "Filter them by X")
    # in a request, what a demonstrative points at ("in this batch") is given, not asked for, and the verb it asks
    # with ("Could you identify …") is no topic
    framing = (given(toks) | asked_verbs(toks) | loose_adverbs(toks) | purposes(toks) | arrangements(toks)
               | answer_named(toks) | thanking(toks) if is_framed else set())  # fmt: skip

    def read(context: set[int]) -> tuple[Intent, str, list[Facet], list[Facet]]:
        seen = ["" if i in context else w for i, w in enumerate(lows)]
        intent, overview, cue = intent_of(seen, [w for t, w in zip(toks, seen, strict=True) if t.word and w], coined)
        skip = used | cue | framing | context
        items = join_terms(bounded(segments(toks, skip, acronyms, glue, is_framed)), lexicon)
        groups, excluded_groups = grouped(items)
        groups = [g[:MAX_ALTERNATIVES] for g in groups[:MAX_FACETS]]
        excluded_groups = [g[:MAX_ALTERNATIVES] for g in excluded_groups[:MAX_FACETS]]
        slot = topic_slot(toks, skip) if is_framed else ""
        facets = resolve(groups, lexicon, shouted=shouted, weigh=weigh, request=is_framed, slot=slot)
        excluded = [build(g, lexicon) for g in excluded_groups]
        return intent, overview, ([] if intent == "factoid" else facets), excluded

    # a clause that tells what the asker does is set aside, unless the rest then holds no topic: no topical facet and
    # no object of the request ("work on *adam*", which the corpus weighs as common English)
    set_aside = used | framing
    context = context_clauses(toks, set_aside) if is_framed else set()
    intent, overview, facets, excluded = read(context)
    if context and not any(f.weight >= TOPICAL for f in facets) and slot_at(toks, set_aside) < 0:
        intent, overview, facets, excluded = read(set())
    return QueryPlan(text=text, searched=searched, intent=intent, followup=followup, facets=facets,
                     excluded=excluded, filters=filters, corrections=corrections, overview=overview,
                     names=names, framed=is_framed)  # fmt: skip


def question_terms(plan_: QueryPlan) -> list[str]:
    """Stems of the searched question's words (for factoid answers)."""
    return stems(plan_.searched)


def core_text(plan_: QueryPlan) -> str:
    """The searched question without what wraps its topic: from the first to the last word of its facets, as
    typed ("Which papers use X, please?" → "X"; a claim keeps its verbs). The words in between stay, as they
    carry meaning for the embedder; when an exclusion sits among them, the facets' words alone are used. In a
    question that wraps its topic in a request, a facet that is not topical is left out at either end ("Has anyone
    *worked* on X?"); a statement or a bare topic keeps all of it (a claim's every unit is its content: "*32%* of
    liver transplantation programs required patients to discontinue *methadone treatment*")."""
    topical = [f for f in plan_.facets if f.weight >= TOPICAL] if plan_.framed else []
    facets = topical or plan_.facets
    topic = {w for f in facets for a in f.alternatives for w in _words(a)}
    spans = [(m.start(), m.end(), m.group(0).lower()) for m in TOKEN.finditer(plan_.searched)]
    inside = [i for i, (_, _, w) in enumerate(spans) if w in topic]
    if not inside:
        return " ".join(a for f in facets for a in f.alternatives)
    first, last = inside[0], inside[-1]
    excluded = {w for f in plan_.excluded for a in f.alternatives for w in _words(a)} - topic
    if any(spans[i][2] in excluded or spans[i][2] in NOT_WORDS for i in range(first, last + 1)):
        return " ".join(a for f in facets for a in f.alternatives)
    return plan_.searched[spans[first][0] : spans[last][1]]


def _words(text: str) -> list[str]:
    return [m.group(0).lower() for m in TOKEN.finditer(text)]
