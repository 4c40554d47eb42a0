"""Parse: the question's tokens cut into units and the boundaries between them, with no store access.

The first of the reader's three stages (parse → :mod:`.resolve` → :mod:`.expand`, run by :func:`rag.read.query.plan`).
It reads only the tokens and the cue words of :mod:`.cues`: which runs of words are units, which joining words and
punctuation separate them ("or", "and", "not", links such as "for" and "of"), where examples ("like", "such as")
start, where a negation negates a statement rather than excludes, and how the units group into facets and
exclusions. One decision inside the walk is the corpus's, not the tokens': whether a request word is glued to the
topic beside it ("tool use"). The walk asks it through the ``glued`` predicate it is given (:func:`.resolve.glued`
over a lexicon), since what it decides changes the rest of the walk; this module imports no lexicon.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from askpapers.rag.read.cues import (
    ADVERBIAL_PHRASES,
    ANAPHORA,
    ANSWER_POINTERS,
    ASKERS,
    AUXILIARIES,
    BEFORE_VERB,
    BOTH_CUES,
    DIRECTIVES,
    GIVEN_ADVERBS,
    LINK_VERBS,
    LINKS,
    NOT_WORDS,
    OBJECTS,
    OPENERS,
    OR_WORDS,
    POINTED_NOUNS,
    POINTING_BACK,
    PREPOSITION_NOUNS,
    QUESTION_STARTS,
    RELATIONAL,
    RELATIONAL_VERBS,
    RELATIVES,
    REQUEST_NOUNS,
    REQUEST_WORDS,
    SUBORDINATORS,
    WANTS,
    WISHES,
    Tok,
    adjective,
    adverb,
    answer_object,
    bare_verb,
    is_name,
    noun_form,
    participle,
    said_as_noun,
    said_as_verb,
    starts_clause,
    topic_word,
    verb_form,
    verb_lemmas,
)
from askpapers.vectorstore.text import STOPWORDS

MAX_PHRASE_WORDS = 6  # longest phrase whose statement in the corpus is checked (a longer unit is cut)
# words of the role a topic plays between "as a" and "of", "to" or "for" in a request ("as a key building block for"):
# a longer run is a topic of its own
ROLE_WORDS = 3
# after "how", words of degree: "how many papers use X" asks for a count, and opens no clause with a verb
HOW_DEGREE = frozenset({"many", "much", "often", "far", "well", "long", "few"})
MAX_FACETS = 6  # facets a plan keeps (a longer question is not a topic any more): the first ones
MAX_ALTERNATIVES = 8  # alternatives a facet keeps

# whether a request word belongs to the topic beside it: (word, the neighbouring unit's words, word comes before,
# word ends the run of words: what follows it is no topic word)
Glue = Callable[[str, list[str], bool, bool], bool]


@dataclass
class Unit:
    words: list[str]
    shown: list[str]
    alias: str = ""  # an acronym the question defines for it …
    long: int = 0  # … for its first ``long`` words (the rest, such as "models", follow the acronym)
    verb: bool = False  # its first word is the verb of the clause whose subject is the papers asked for (_clause_verb)
    relation: bool = False  # a link "of" or "to" joins it to the unit after it, as no term ("applications *of* X")
    linked: bool = False  # a link joins it to the unit after it ("transformers *in* time series forecasting")
    # one word that may name what is asked for rather than what it is about (_names_request): "Which *contributions*
    # concern X?", "the *key* papers on X"
    requested: bool = False
    # a noun that may relate two topics, as no term (resolve weighs it by where its papers are): "the *impact* of X
    # on Y" (a relation whose object a link joins to a third unit), "X's *impact* on Y" (after a possessive, with a
    # link after it), "X with *applications* in Y" (between two links), "X with Y at its *core*" (after "its")
    spans: bool = False


Item = Unit | str  # a unit, or a boundary: "or", "and", "not", "gap" (dropped words), "any" (see grouped), "link:WORD"


def _boundary(t: Tok, both: bool) -> str:
    """The boundary a punctuation mark or a joining word makes ("or", "and", "not", "gap"), or "" for a word."""
    if not t.word:  # ("X + Y": both; "X & Y" as "X and Y")
        if t.text == "&":
            return "and" if both else "or"
        return "or" if t.text in ",/;" else "and" if t.text in "?!.:+" else "gap"
    if t.low in OR_WORDS or t.low == "and":
        return "and" if t.low == "and" and both else "or"
    if t.low in NOT_WORDS:
        return "not"
    return "gap" if t.low in ANAPHORA or t.low in SUBORDINATORS else ""


def _negates_predicate(toks: list[Tok], i: int) -> bool:
    """Whether the negation at ``i`` negates what a topic does ("ART has no effect on infectiveness", "X does not
    affect Y"), not which papers are wanted ("papers that do not use X", "LLMs but not RL"): it follows an
    auxiliary verb whose subject is a topic word, not a request word, and a content word follows it."""
    if i < 2 or toks[i - 1].low not in AUXILIARIES or i + 1 >= len(toks) or not toks[i + 1].word:
        return False
    nxt = toks[i + 1].low
    if nxt in REQUEST_WORDS or nxt in STOPWORDS or nxt in NOT_WORDS:
        return False
    j = i - 2
    while j >= 0 and toks[j].low in RELATIVES:
        j -= 1
    return j >= 0 and toks[j].word and toks[j].low not in REQUEST_WORDS and toks[j].low not in STOPWORDS


# ", to get up to speed", ", for my thesis", "…, where do I start?" (and each of SUBORDINATORS: ", if any"), and a
# phrase a comma sets apart that starts with a preposition (", with evidence,", ", in particular for X")
CLAUSE_STARTS = frozenset(
    {"to", "for", "as", "before", "so", "where", "what", "whats", "how", "which", "who", "why", "when",
     "with", "in", "on", "by", "from", "at", "via", "using", "about", "within", "through", "towards"}
)  # fmt: skip
NOUN_LEADS = frozenset({"the", "a", "an", "all", "any", "some", "every", "each", "those", "these"})
EXAMPLE_CUES = (
    ("like",), ("such", "as"), ("including",), ("e", ".", "g"), ("eg",), ("i", ".", "e"), ("for", "example"),
    ("for", "instance"), ("especially",), ("particularly",),
)  # fmt: skip


def _examples_cue(toks: list[Tok], i: int) -> int:
    """The number of tokens of a cue that introduces examples of the topic before it ("like", "such as", "e.g."),
    or 0."""
    for cue in EXAMPLE_CUES:
        if all(i + j < len(toks) and toks[i + j].low == w for j, w in enumerate(cue)):
            n = len(cue)
            while i + n < len(toks) and toks[i + n].text in ".,:":  # "e.g.," "for example,"
                n += 1
            return n
    return 0


def _preposition(toks: list[Tok], i: int, request: bool = False) -> int:
    """The number of tokens of a preposition of several words that starts at ``i`` ("in the context of", "in terms
    of", "with respect to": a link, an article or none, a noun of :data:`PREPOSITION_NOUNS`, "of" or "to"), or 0. In
    a request, "as", an article, the role a topic plays (up to :data:`ROLE_WORDS` words, no stop-word or link among
    them) and "of", "to" or "for" are one too ("as a tool for", "as the backbone of", "as a key building block
    for"): what the role is called is open-ended, and the topics are on either side of it."""
    role = request and toks[i].low == "as"
    if toks[i].low not in LINKS and not role:
        return 0
    j = i + 1
    if j < len(toks) and toks[j].low in ("the", "a", "an"):
        j += 1
    elif role:
        return 0
    if role:
        end = j
        while end < len(toks) and end - j < ROLE_WORDS and _role_word(toks[end]):
            end += 1
        return end + 1 - i if j < end < len(toks) and toks[end].low in ("of", "to", "for") else 0
    if j + 1 >= len(toks) or toks[j + 1].low not in ("of", "to"):
        return 0
    return j + 2 - i if toks[j].low in PREPOSITION_NOUNS else 0


def _verb_between(low: str, nxt: Tok | None) -> bool:
    """Whether a word after a topic is the "-ing" form of a verb, not one the dictionary knows as a noun ("federated
    *learning* asap"), with a topic word or a preposition after it ("imitation learning *targeting* manipulation",
    "Y *benefiting* from X"): it relates the two topics as "for" does, unless the corpus says it heads the topic
    before it, as it says for the last word of a topic ("prompt *tuning* methods": see ``glued``)."""
    return (low.endswith("ing") and verb_form(low) and not noun_form(low) and nxt is not None
            and nxt.low not in LINK_VERBS and nxt.low not in RELATIONAL_VERBS
            and not ("-" not in nxt.low and participle(nxt.low, irregular=True))
            and (nxt.low in LINKS or topic_word(nxt)))  # fmt: skip


def _subject_verb(toks: list[Tok], i: int) -> bool:
    """Whether the word at ``i`` is the verb of a clause whose subject is the one word after the question's "which"
    or "what" ("Which contributions *revolve* around X?"): a present-tense form of a word the dictionary knows only as
    a verb, with a link after it ("Which GANs generate faces?" is left as typed: the object may be a topic)."""
    low = toks[i].low
    return (i >= 2 and toks[i - 2].low in ("which", "what") and toks[i - 1].word and _finite_verb(low)
            and not noun_form(low) and i + 1 < len(toks) and toks[i + 1].low in LINKS)  # fmt: skip


def _object_next(toks: list[Tok], i: int) -> bool:
    """Whether a topic word follows the verb at ``i``, right after it or after a link ("X that *improves* Y", "Y that
    *benefits* from X")."""
    j = i + 1 if i + 1 < len(toks) and toks[i + 1].low in LINKS else i
    return j + 1 < len(toks) and topic_word(toks[j + 1]) and toks[j + 1].low not in LINKS


def _framing_noun(toks: list[Tok], i: int, cur: Unit | None) -> bool:
    """Whether the word at ``i``, a noun of :data:`PREPOSITION_NOUNS` that ends a topic's words, frames the topic
    as "in the context of X" does, typed after it: a link, and "the" or no article, come right before the topic
    ("planning in the autonomous driving *domain*", "X in the Y *setting*", "domain adaptation in vision
    *settings*"). It is then no part of the topic unless the corpus glues it to the word before, as it does a word of
    the request ("in the target domain")."""
    start = i - len(cur.words) if cur is not None else i
    if cur is None or start < 1:
        return False
    return _at_link(toks[start - 1]) or (start >= 2 and toks[start - 1].low == "the" and _at_link(toks[start - 2]))


def _owned_part(toks: list[Tok], i: int) -> bool:
    """Whether the word at ``i`` follows a link (or "at") and "its" or "their": a part or a property of what is
    named before ("X with Y *at its core*", "Which submissions put X *at their core*?"), which relates it as "the
    impact of X on Y" does when the corpus spreads it over every topic, and is a topic when its papers cluster
    ("evaluate LLMs on their *reasoning*")."""
    return i >= 2 and toks[i - 1].low in ("its", "their") and (toks[i - 2].low in LINKS or toks[i - 2].low == "at")


# words that open a clause whose subject comes before its verb ("where X plays a role")
SUBORDINATE = frozenset({"where", "whereby", "when", "whether", "how"})


def _verb_before_article(toks: list[Tok], i: int) -> bool:
    """Whether the word at ``i`` is the present-tense verb of a clause that "where", "when", "whether" or "how" opens
    after its subject: a form in "-s" that general English says as a verb (:func:`_verb_said`: "plays", "leads",
    "matters"; not "models", "networks"), with an article after it ("where X *plays* a role"). ("Which papers learn
    features a model uses?" is left as typed: "which" opens the question.)"""
    low, nxt = toks[i].low, _at(toks, i + 1)
    if nxt is None or nxt.low not in ("a", "an", "the") or not low.endswith("s") or not _verb_said(low):
        return False
    j = i - 1
    while j >= 0 and toks[j].word and toks[j].low not in SUBORDINATE:
        j -= 1
    return j >= 0 and toks[j].low in SUBORDINATE and j + 1 < i and toks[j + 1].low not in HOW_DEGREE


def _link_goes_on(item: str) -> bool:
    """Whether a preposition after the item ``item`` (of :func:`segments`) goes on with its link rather than making
    a gap: after a relating participle ("guided *by*") or any participle that links ("tailored *to*", "powered
    *by*", "based *on*"), so that the words the link joins are read as they are joined by "for" ("navigation powered
    by language" as "language navigation", which the corpus states)."""
    return item.startswith("link:") and (item[5:] in RELATIONAL_VERBS or participle(item[5:], irregular=True))


def _participle_phrase(toks: list[Tok], i: int) -> bool:
    """Whether a link verb or a participle with a preposition after it starts at ``i`` ("*applied to*", "*based
    on*", "*tailored for*", "*driven by*")."""
    t, after = _at(toks, i), _at(toks, i + 1)
    return (t is not None and after is not None and participle(t.low, irregular=True)
            and (after.low in LINKS or after.low == "by")) or (t is not None and t.low in LINK_VERBS)  # fmt: skip


def _at_link(t: Tok | None) -> bool:
    """Whether a token is a link (one of :data:`~.cues.LINKS`)."""
    return t is not None and t.low in LINKS


def _infinitive(low: str) -> bool:
    """Whether a word after "to" is the base form of a verb there: one the dictionary knows only as a verb
    (:func:`~.cues.bare_verb`: "improve"), or one general English says as a verb and never after an article
    (:func:`~.cues.said_as_verb`, :func:`~.cues.said_as_noun`: "compress"; not "graph", "model", "image", which "to"
    may lead as nouns)."""
    return bare_verb(low) or (low in verb_lemmas(low) and said_as_verb(low) and not said_as_noun(low))


def _role_word(t: Tok) -> bool:
    """Whether a token may be a word of the role a topic plays ("as the *backbone* of"): a word, no stop-word or
    link."""
    return t.word and t.low not in STOPWORDS and t.low not in LINKS


def _purpose_gerund(low: str) -> bool:
    """Whether a word is the "-ing" form of a verb that general English never says as a noun, after an article or a
    possessive (:func:`said_as_noun`): "solving", "improving", "addressing"; not "planning", "learning", "sampling"."""
    return low.endswith("ing") and verb_form(low) and not said_as_noun(low)


def _finite_verb(low: str) -> bool:
    """Whether a word is a verb form that may be a clause's present-tense verb: not an "-ing" or "-ed" form, nor a
    word of the request."""
    return not low.endswith(("ing", "ed")) and low not in REQUEST_WORDS and verb_form(low)


def _verb_said(low: str) -> bool:
    """Whether a word is a present-tense verb of a clause that general English says as a verb ("improves",
    "improve"): :func:`_finite_verb` and :func:`said_as_verb`."""
    return _finite_verb(low) and said_as_verb(low)


def _verb_of_how(toks: list[Tok], i: int) -> bool:
    """Whether the word at ``i`` is the verb of a clause opened by "how" after its subject: a verb form in "-s" that
    general English says as a verb ("how X *helps* Y"; not "networks" of "how recurrent networks help"), or the base
    form after "how" and an auxiliary ("how does X *help* Y")."""
    low = toks[i].low
    j = _how_at(toks, i)
    if j is None:
        return False
    if toks[j + 1].low in AUXILIARIES:
        return j + 2 < i and low in verb_lemmas(low)
    return low.endswith("s") and said_as_verb(low)


def _how_at(toks: list[Tok], i: int) -> int | None:
    """The position of the "how" that opens the clause whose subject runs up to the verb form at ``i`` (words only
    between them, at least one, the first no word of degree: :data:`HOW_DEGREE`), or None."""
    if not _finite_verb(toks[i].low):
        return None
    j = i - 1
    while j >= 0 and toks[j].word and toks[j].low != "how":
        j -= 1
    if j < 0 or toks[j].low != "how" or j + 1 >= i or toks[j + 1].low in HOW_DEGREE:
        return None  # ("*how many* papers use X": a count, no clause)
    return j


def _at(toks: list[Tok], i: int) -> Tok | None:
    return toks[i] if i < len(toks) else None


def _ends_topic(t: Tok | None) -> bool:
    """Whether a topic's run of words ends before ``t``: the end, punctuation, a request word, a stop-word, a link or a
    verb that links (``LINK_VERBS``: "architecture *search* meets neural networks" ends with its head, "search", as
    "Which papers use architecture search?" does)."""
    return not topic_word(t) or (t is not None and (t.low in LINKS or t.low in LINK_VERBS))


def _predicate(toks: list[Tok], i: int) -> bool:
    """Whether the word at ``i`` is the verb of the request's subject: right after a request noun or a relative
    ("papers *use* pre-training", "works that *study* X"). Such a verb never starts the topic, however often the
    corpus puts it before the topic's first word (the stems of "using pre-trained" are those of "use pre-training":
    "Which papers use pre-training?" had read as "use pre-training", 11 papers against 219)."""
    j = i - 1
    while j >= 0 and not toks[j].word:  # (only the marks right before it: linear over a question)
        j -= 1
    return j >= 0 and (toks[j].low in REQUEST_NOUNS or toks[j].low in RELATIVES)


def _clause_verb(toks: list[Tok], i: int) -> bool:
    """Whether the word at ``i`` is the verb of a clause whose subject is the papers asked for, and can be one (the
    dictionary knows it as a verb: :func:`~.cues.verb_form`): after a relative that follows a request noun
    ("papers that *harness* X"), or after "which" or "what" and a request noun or "ones" ("Which papers *exploit*
    X?", "which of the papers *incorporate* X", "which ones *deploy* X"). Whether it is part of the topic after it
    is the corpus's to tell (:func:`.resolve._lead_apart`)."""
    j = i - 1
    while j >= 0 and not toks[j].word:
        j -= 1
    if j < 1:
        return False
    if toks[j].low == "ones":  # ("which ones *exploit* X?": the papers, as the question puts them)
        subject = toks[j - 1].low in ("which", "what")
    elif not _predicate(toks, i):
        return False
    elif toks[j].low in RELATIVES:
        subject = toks[j - 1].low in REQUEST_NOUNS
    else:
        j -= 1
        while j >= 0 and toks[j].low in ("the", "of"):  # "which of the papers"
            j -= 1
        subject = j >= 0 and toks[j].low in ("which", "what")
    return subject and verb_form(toks[i].low)


def _names_request(toks: list[Tok], i: int, n: int) -> bool:
    """Whether the unit of one word just before ``i`` (a request word or stop-word, where it ends) may name what is
    asked for rather than a topic: it stands right after the question's "which" or "what" ("Which *contributions*
    concern X?", "What *entries* discuss X?") or right before a request noun ("the *key* papers on X", "*theory*
    papers on X"). Whether it does is the corpus's to tell: its papers are spread over every topic
    (:func:`.resolve._spread`), while "Which *GANs* are used for X?" and "*pruning* papers" name topics."""
    before = i - n - 1
    while before > 0 and toks[before].low in REQUEST_NOUNS:  # ("Which research *directions* involve X?")
        before -= 1
    return toks[i].low in REQUEST_NOUNS or (before >= 0 and toks[before].low in ("which", "what"))


def _opens_clause(toks: list[Tok], i: int) -> bool:
    """Whether the comma, semicolon or "and" at ``i`` opens a clause of its own, so joins nothing: before a request
    word or a clause's first word ("Hi team, which papers …", "…, I'd love …", "…, it's urgent", "…, if any"), an adverb
    of the request ("…, ideally with experiments"), or, after "and", a subject or a request verb ("I'm writing the
    related work section and need everything on X"). Two topics are joined by a comma or "and" only when a topic
    follows: "X, early stopping", "X and new benchmarks"."""
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    if nxt is None or not nxt.word or (toks[i].text not in (",", ";") and toks[i].low != "and"):
        return False
    after = toks[i + 2] if i + 2 < len(toks) else None
    ends = _ends_topic(after)
    if "'" in nxt.text or nxt.low in SUBORDINATORS or (adverb(nxt.low) and ends):
        return True
    if toks[i].text in (",", ";"):  # (a semicolon as a comma: "I'm working with GANs*; which* papers …")
        j = i + 1  # (", *the papers* on X", ", *all the works* about X")
        while j + 1 < len(toks) and toks[j].low in NOUN_LEADS:
            j += 1
        return nxt.low in REQUEST_WORDS or nxt.low in CLAUSE_STARTS or toks[j].low in REQUEST_WORDS
    return (
        nxt.low in ASKERS
        or nxt.low in QUESTION_STARTS
        or (nxt.low in REQUEST_WORDS and nxt.low not in REQUEST_NOUNS and ends)
    )


def segments(
    toks: list[Tok], skip: set[int], acronyms: dict[int, str], glued: Glue, request: bool = False
) -> list[Item]:
    """Units and the boundaries between them, in question order (``glued``: whether a request word belongs to the
    topic beside it, which the corpus decides)."""
    out: list[Item] = []
    both = bool(BOTH_CUES & {t.low for t in toks})
    cur: Unit | None = None

    def close() -> None:
        nonlocal cur
        if cur is not None:
            out.append(cur)
            cur = None

    owned = -1  # the token a possessive governs
    i = 0
    while i < len(toks):
        t, low = toks[i], toks[i].low
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        last = _ends_topic(nxt)
        between = request and _verb_between(low, nxt)  # ("X *targeting* Y")
        if i in skip:
            close()
        elif t.protected >= 0:  # a long form the question defines: one unit, with its acronym
            close()
            if out and isinstance(out[-1], Unit):  # a word right before it is no alternative of it ("researching X")
                out.append("and")
            j = i
            while j < len(toks) and toks[j].protected == t.protected:
                j += 1
            cur = Unit([x.low for x in toks[i:j]], [x.text for x in toks[i:j]], acronyms[t.protected], j - i)
            i = j + 3 if j + 2 < len(toks) and toks[j].text == "(" and toks[j + 2].text == ")" else j
            continue  # (words right after the acronym, such as "models", still join this unit)
        elif t.text == "(" and i + 2 < len(toks) and toks[i + 2].text == ")" and is_name(toks[i + 1].text):
            target = cur if cur is not None else next((u for u in reversed(out) if isinstance(u, Unit)), None)
            if target is not None and not target.alias:
                target.alias = toks[i + 1].text
            i += 3
            continue
        elif t.text in "()[]":  # brackets around words that are not an acronym set nothing apart
            pass
        elif (ex := _examples_cue(toks, i)) and (cur is not None or any(isinstance(x, Unit) for x in out[-2:])):
            close()  # "efficient fine-tuning like LoRA": the examples are alternatives of the topic before them
            if out and out[-1] != "or":
                out.append("or")
            i += ex
            continue
        elif (
            low in NOT_WORDS
            and low not in STOPWORDS
            and nxt is not None
            and topic_word(nxt)
            and glued(low, [nxt.low], True, False)
        ):
            # "non convex" typed without its hyphen: a word of the topic when the corpus binds it, no exclusion
            cur = cur if cur is not None else Unit([], [])
            cur.words.append(low)
            cur.shown.append(t.text)
        elif low in NOT_WORDS and _negates_predicate(toks, i):
            close()
            out.append("gap")
        elif request and t.text == "," and cur is not None and _participle_phrase(toks, i + 1):
            pass  # "X, *applied to* Y": a participle phrase set off by a comma links as it would without it
        elif boundary := _boundary(t, both or (nxt is not None and nxt.low in POINTING_BACK)):
            close()
            out.append("gap" if boundary == "or" and _opens_clause(toks, i) else boundary)
        elif (
            nxt is not None
            and (low, nxt.low) in ADVERBIAL_PHRASES
            and _ends_topic(toks[i + 2] if i + 2 < len(toks) else None)
        ):
            close()  # "discuss X *at length*": how, not what ("in depth estimation" is a topic)
            out.append("gap")
            i += 2
            continue
        elif (cur is not None and request and low in ("for", "by") and nxt is not None and _purpose_gerund(nxt.low)
              and (obj := _at(toks, i + 2)) is not None and topic_word(obj) and obj.low not in LINKS):  # fmt: skip
            # "X *for solving* Y", "X *by reducing* Y": a gerund English never puts after an article is the verb of a
            # purpose, which links X to Y as "X for Y" does ("solving" had been a unit of its own, and gated:
            # "imitation learning for solving manipulation" cited 1 paper); "X for planning Y" keeps its topic
            close()
            out.append(f"link:{low}")
            i += 2
            continue
        elif ((cur is not None or (request and out and str(out[-1]).startswith("link:")))
              and low == "to" and nxt is not None and _infinitive(nxt.low)
              and (obj := _at(toks, i + 2)) is not None and topic_word(obj) and obj.low not in LINKS):  # fmt: skip
            # "X *to improve* Y": a purpose, which links X to Y as "X for Y" does ("improve Y" had been a unit, and
            # gated: "imitation learning to improve manipulation" cited 12 papers); so after a link in a request, "X
            # used *to improve* Y"
            close()
            out.append("link:to")
            i += 2
            continue
        elif (cur is not None and request and nxt is not None and topic_word(nxt) and nxt.low not in LINKS
              and (_verb_of_how(toks, i)
                   or (_how_at(toks, i) is not None and not glued(low, cur.words, False, True)))):  # fmt: skip
            # "how X *helps* Y", "how does X *help* Y": the verb of a clause the question opens with "how" links its
            # subject and object ("helps vision" had been a unit, and "machine learning" only ranked); so does any
            # verb form the corpus does not glue to the subject as its head ("how LLMs *shape* reasoning", "how X
            # *shapes* Y", where "shapes" is said as a noun; "how recurrent *networks* help" keeps its subject)
            close()
            out.append(f"link:{low}")
        elif (request and cur is None and i >= 2 and toks[i - 1].low in RELATIVES and out[-2:-1]
              and out[-1] == "gap" and isinstance(out[-2], Unit) and _object_next(toks, i)
              and (_verb_said(low) or (_finite_verb(low) and (low.endswith("s") or _at_link(nxt))))):  # fmt: skip
            # "X that *improves* Y": the verb of a relative clause on the topic links it to its object, as "X for Y"
            # ("improves manipulation" had been one unit, and imitation learning only ranked)
            out[-1] = f"link:{low}"
        elif (request and t.text == "x" and cur is not None and nxt is not None and topic_word(nxt)
              and nxt.low not in LINKS):  # fmt: skip
            # "LLMs *x* robotics": chat's "crossed with", which links two topics as "with" does ("x manipulation" had
            # been read as a topic, and imitation learning alone answered; "language x navigation" is then "language
            # navigation", as "language with navigation" is)
            close()
            out.append("link:with")
        elif request and cur is not None and _verb_before_article(toks, i):
            # "where X *plays* a central role": the verb of a clause ends the topic ("time series forecasting plays"
            # had been one unit, which the corpus states: 1 paper cited)
            close()
            out.append("gap")
        elif (request and cur is not None and nxt is not None and participle(low, irregular=True)
              and adjective(nxt.low) and (by := _at(toks, i + 2)) is not None and by.low == "by"
              and topic_word(_at(toks, i + 3))):  # fmt: skip
            # "B *made possible by* A": a participle, the adjective it makes, and "by" link A and B as "enabled by"
            # does ("safety made possible" had been one unit, whose part "safety" only qualified it: 942 papers)
            close()
            out.append(f"link:{low}")
            i += 2
            continue
        elif n_prep := _preposition(toks, i, request):  # "X *in the context of* Y" links as "X in Y" does
            close()
            link = toks[i + n_prep - 1].low if low == "as" else low  # ("X *as a tool for* Y" as "X for Y")
            out.append(f"link:{link}" if out and isinstance(out[-1], Unit) else "gap")
            i += n_prep
            continue
        elif (cur is not None and (low in LINKS or low in LINK_VERBS or low in RELATIONAL_VERBS
                                   or (nxt is not None and participle(low, irregular=True)
                                       and (nxt.low == "by" or (request and (nxt.low in LINKS or nxt.low == "at"
                                                                             or nxt.low in LINK_VERBS))))
                                   or (t.relates and participle(low))
                                   or between)
              and (t.relates or not glued(low, cur.words, False, last or between))):  # fmt: skip
            # ("X *powered* by Y", "X *inspired* by Y": a participle and "by" link X to Y as a link verb does, and so
            # does one between a topic and a topic word in a request, hyphenated or not, "X-*enabled* Y", or before a
            # preposition there, "X *tailored* to Y", "X *repurposed* for Y", "X *grounded* in Y", irregular or not,
            # "X *put* to work on Y", "X *driven* by Y")
            close()
            out.append(f"link:{low}")
        elif cur is None and low in LINKS and out and _link_goes_on(str(out[-1])):  # "guided by", "tailored to"
            out.append(f"link:{low}")
        elif cur is None and low in LINK_VERBS and nxt is not None and nxt.low in LINKS:
            # a link verb after words of the request starts no unit: "X approaches *based on* Y" links X and Y as
            # "X based on Y" does ("based on Y" had been read as a term of its own, "based" being in most papers)
            out.append(f"link:{low}")
        elif (low in REQUEST_WORDS or low in STOPWORDS or low in BOTH_CUES
              or (request and last and low in PREPOSITION_NOUNS and _framing_noun(toks, i, cur))):  # fmt: skip
            if cur is not None and glued(low, cur.words, False, last):
                cur.words.append(low)
                cur.shown.append(t.text)
            elif (cur is None and nxt is not None and nxt.word and nxt.low not in REQUEST_WORDS
                  and nxt.low not in STOPWORDS and not _predicate(toks, i)
                  and not (request and _verb_between(nxt.low, _at(toks, i + 2)))
                  and glued(low, [nxt.low], True, False)):  # fmt: skip
                # (not before the "-ing" form of a verb with its object after it: "Any work *bridging* X and Y?" asks
                # for work, which bridges them; "work bridging" had been one unit that gated)
                cur = Unit([low], [t.text])
            else:
                if cur is not None and len(cur.words) == 1 and _names_request(toks, i, len(cur.shown)):
                    cur.requested = True
                close()
                article = low in ("the", "a", "an") and bool(out) and str(out[-1]).startswith("link:")
                # "benchmarks or *methods* for X": an alternative of any kind of work on X, so "benchmarks" narrows
                # nothing (an "any" boundary: the group before it is dropped, see grouped)
                anything = (low in REQUEST_WORDS and (low not in STOPWORDS or low in REQUEST_NOUNS)
                            and len(out) >= 2 and out[-1] == "or" and isinstance(out[-2], Unit)
                            and nxt is not None and nxt.low in LINKS)  # fmt: skip
                out.append(f"link:{low}" if article else "any" if anything else "gap")
        elif cur is None and low in LINKS:  # a preposition starts no unit ("the key *ideas* behind X")
            out.append("gap")
        else:
            if cur is not None and request and len(cur.words) == 1 and _subject_verb(toks, i):
                # "Which contributions *revolve* around X?": the word after "which" is the subject, which may name
                # what is asked for (see _names_request), and the verb of its clause starts a unit of its own
                cur.requested = _names_request(toks, i, len(cur.shown))
                close()
                out.append("gap")
                cur = Unit([], [], verb=True)
            if cur is None:
                # (the corpus tells whether it is of the topic; so for a gerund that opens a unit before a topic
                # word in a request, "exploiting X for Y")
                gerund = (
                    request
                    and i > 0
                    and toks[i - 1].word  # (after a word of the request or a link; "Researching X." opens a sentence)
                    and low.endswith("ing")
                    and verb_form(low)
                    and topic_word(nxt)
                    and nxt is not None
                    and nxt.low not in LINKS
                    and nxt.low not in LINK_VERBS  # (a noun before a relating word: "*clustering*-based X")
                    and nxt.low not in RELATIONAL
                )
                cur = Unit([], [], verb=_clause_verb(toks, i) or gerund)
            fresh = not cur.words
            cur.words.append(low)
            cur.shown.append(t.text)
            if i == owned and nxt is not None and nxt.low in LINKS:
                cur.spans = True
            elif request and fresh and last and _owned_part(toks, i):
                cur.spans = True  # ("X with Y *at its core*": weighed as a relation noun is)
        if (request and t.owner and cur is not None and cur.words and nxt is not None and topic_word(nxt)
                and nxt.low not in LINKS and (after := _at(toks, i + 2)) is not None
                and after.low in LINKS):  # fmt: skip
            # "X's *impact* on Y": the noun a possessive governs, with a link after it, is a unit of its own, which
            # relates X to Y as "the impact of X on Y" does ("imitation learning impact" had been one unit, whose cut
            # "impact" gated: 1 paper cited)
            close()
            out.append("gap")
            owned = i + 1
        i += 1
    close()
    return out


# the prepositions a request names its topic after ("papers *on* X", "interested *in* X", "deals *with* X")
TOPIC_PREPS = frozenset({"on", "about", "in", "into", "regarding", "concerning", "around", "with"})


def topic_slot(toks: list[Tok], skip: set[int]) -> str:
    """The first word of the request's object: the first topic word after a preposition of :data:`TOPIC_PREPS`
    (past an article) that follows a request word or a stop-word ("Papers *about* adam, to get up to speed",
    "interested *in* audio. Suggestions?"), or "" when the question has none. What the request is about comes
    there, whatever else the question says before or after."""
    at = slot_at(toks, skip)
    return toks[at].low if at >= 0 else ""


def slot_at(toks: list[Tok], skip: set[int]) -> int:
    """The position of :func:`topic_slot`'s word, or -1."""
    for i in range(2, len(toks)):
        t = toks[i]
        if i in skip or not topic_word(t):
            continue
        j = i - 1
        if toks[j].low in ("the", "a", "an"):
            j -= 1
        before = toks[j - 1] if j >= 1 else None
        if (toks[j].low in TOPIC_PREPS and before is not None and before.word
                and (before.low in REQUEST_WORDS or before.low in STOPWORDS)):  # fmt: skip
            return i
    return -1


# the asker as the subject of a clause ("*I* plan to benchmark models", "*We* are evaluating …", "*My* group is …")
FIRST_PERSON = frozenset({"i", "im", "ive", "id", "ill", "we", "weve", "my", "our"})
SENTENCE_ENDS = frozenset(".;:!?\u2013\u2014-")  # ("-" only as typed with a space on both sides: a token)


def answer_named(toks: list[Tok]) -> set[int]:
    """The positions of words that name the previous answer, which a follow-up narrows and asks nothing of: a word
    that points at a noun for it ("From *that list*, anything on X?", "In *your answer*, …": `ANSWER_POINTERS`,
    `POINTED_NOUNS`), and what the answer gave after the papers named ("Among the papers *you just listed*, …", "the
    ones *you found*": a request noun or "ones", "you", `GIVEN_ADVERBS`, a past participle)."""
    lows = [t.low for t in toks]
    out: set[int] = set()
    for i in range(len(toks) - 1):
        if lows[i] in ANSWER_POINTERS and lows[i + 1] in POINTED_NOUNS:
            out.update((i, i + 1))
        if (lows[i] in REQUEST_NOUNS or lows[i] == "ones") and lows[i + 1] == "you":
            k = i + 2
            while k < len(toks) and lows[k] in GIVEN_ADVERBS:
                k += 1
            if k < len(toks) and lows[k] not in AUXILIARIES and participle(lows[k], irregular=True):
                out.update(range(i + 1, k + 1))
    return out


def points_back(toks: list[Tok]) -> bool:
    """Whether the question is about the previous answer: it names it ("those", "the above", "the previous ones":
    `ANAPHORA`), a verb acts on it ("Narrow *it* down to X", "Can you cut *that* down to X?", "Reduce *it* to X":
    a `POINTERS` pronoun after a word that opens a clause and is no stop-word or request word, with a particle or a
    link after it; or a noun for the answer so, "Trim the list to X": `cues.answer_object`), words name it
    (:func:`answer_named`: "From *that list*, …", "Among the papers *you listed*, …"), or it asks for "only" some of
    them ("Only X", "Now only X")."""
    lows = [t.low for t in toks]
    if ANAPHORA & set(lows) or answer_named(toks):
        return True
    words = [t.low for t in toks if t.word]
    first = next((k for k, w in enumerate(words) if w not in OPENERS), len(words))
    if words[first : first + 1] == ["only"] and len(lows) < 8:
        return True
    return any(
        i > 0
        and toks[i - 1].word
        and toks[i - 1].low not in STOPWORDS
        and toks[i - 1].low not in REQUEST_WORDS
        and starts_clause(toks, i - 1)
        and answer_object(toks, i) > 0
        for i in range(len(toks))
    )


def clauses(toks: list[Tok]) -> list[range]:
    """The question's clauses: cut after a mark that ends a sentence, or a dash, at a comma that a first-person
    subject, a word of a question or "so" follows ("I plan to benchmark models*, so* what is there on X?", "Hi
    team*, I* …"), and before a conjunction that opens a clause of its own ("… on X *because* my PI asked")."""
    out: list[range] = []
    start = 0
    for i, t in enumerate(toks):
        nxt = toks[i + 1].low if i + 1 < len(toks) else ""
        if t.low in SUBORDINATORS and i > start:  # ("… on X *because* my PI asked": the word opens the next clause)
            out.append(range(start, i))
            start = i
            continue
        cut = t.text in SENTENCE_ENDS or (
            t.text == "," and (nxt in FIRST_PERSON or nxt in QUESTION_STARTS or nxt == "so")
        )
        if cut:
            if i > start:
                out.append(range(start, i))
            start = i + 1
    if start < len(toks):
        out.append(range(start, len(toks)))
    return out


def context_clauses(toks: list[Tok], skip: set[int]) -> set[int]:
    """The positions of the clauses that tell what the asker does, not what they ask for: in a request of several
    clauses, one whose subject is the asker ("*I* plan to benchmark models, so what is there on X?", "*We* are
    evaluating new optimizers - any work on X?", "*I'd* like to contrast the main algorithms. Which papers use X?"),
    whose verb is an activity (:func:`_activity`) and that names nothing it asks for (no request noun, "work",
    "reading", "what": "I want *papers* on X" asks), when another clause asks ("what", "which", "any", a request
    noun, …), holds a word that may be a topic and points back at nothing ("them", "it"). A clause holding the
    request's object (:func:`slot_at`: "I work *on* robotics, so …") is never set aside. The asker's situation
    may still rank the papers (the search reads the whole question), but it neither narrows the set nor sets the
    intent ("I want to *compare* baselines, so which papers evaluate X?" asks for a set, not a comparison)."""
    parts = clauses(toks)
    if len(parts) < 2:
        return set()
    slot = slot_at(toks, skip)
    asks = REQUEST_NOUNS | WANTS

    def words(c: range) -> list[Tok]:
        return [toks[i] for i in c if toks[i].word]

    def first(c: range) -> str:
        ws = words(c)
        k = _opened(ws)
        if k >= len(ws):
            return ""
        return "we" if ws[k].text.lower() == "we're" else ws[k].low  # ("we're" reads "were" once normalised)

    def asking(c: range) -> bool:
        lows = {t.low for t in words(c)}
        opener = first(c)
        opens = opener not in FIRST_PERSON and opener in QUESTION_STARTS | REQUEST_WORDS | AUXILIARIES
        return bool(lows & asks or opens) and any(topic_word(toks[i]) and i not in skip for i in c)

    def situation(c: range) -> bool:
        ws = words(c)
        return first(c) in FIRST_PERSON and not {t.low for t in ws} & asks and slot not in c and _activity(ws)

    def refers_back(c: range) -> bool:  # ("I'm working with GANs; which papers apply *them* to medical imaging?")
        return any(toks[i].low in ANAPHORA or toks[i].low in POINTING_BACK or toks[i].low == "it" for i in c)

    context = [c for c in parts if situation(c)]
    rest = [c for c in parts if c not in context]
    if not context or not any(asking(c) for c in rest) or any(refers_back(c) for c in rest):
        return set()
    return {i for c in context for i in c}


def _opened(words: list[Tok]) -> int:
    """The position of a clause's first word past the words it opens with ("*so* what …", "*because* my PI …")."""
    k = 0
    while k < len(words) and (words[k].low in OPENERS or words[k].low in SUBORDINATORS):
        k += 1
    return k


def _activity(words: list[Tok]) -> bool:
    """Whether the verb of a clause whose subject is the asker is one of what they do ("I want to *compare*
    baselines", "We are *designing* a new architecture", "I've been asked to *audit* some models"), not of what they
    study: past the subject ("my team"), auxiliaries, adverbs and a wish or a request with "to", a verb the
    dictionary knows none of whose lemmas is a request word ("I'm *researching* knowledge graphs", "I *work* on
    robots", "I *use* transformers" name the asker's topic; "I *need* strong baselines" may ask for them)."""
    k = _opened(words)
    k += 2 if k < len(words) and words[k].low in ("my", "our") else 1  # ("*My manager* wants …", "*I* plan …")
    while k < len(words):
        w = words[k].low
        wish = (w in WISHES or w in DIRECTIVES) and k + 1 < len(words) and words[k + 1].low in ("to", "me", "us")
        if w in AUXILIARIES or w in BEFORE_VERB or w == "to" or w in OBJECTS or adverb(w) or wish:
            k += 1
            continue
        lemmas = verb_lemmas(w)
        return bool(lemmas) and not any(x in REQUEST_WORDS or x in AUXILIARIES for x in (w, *lemmas))
    return False


def bounded(items: list[Item]) -> list[Item]:
    """Units of at most :data:`MAX_PHRASE_WORDS` words (a longer run of words is no one topic), and no more than
    a few dozen items in all: every later step then does a bounded amount of work."""
    out: list[Item] = []
    for item in items:
        if isinstance(item, Unit) and len(item.words) > MAX_PHRASE_WORDS:
            for i in range(0, len(item.words), MAX_PHRASE_WORDS):
                if i:
                    out.append("and")
                out.append(Unit(item.words[i : i + MAX_PHRASE_WORDS], item.shown[i : i + MAX_PHRASE_WORDS]))
        else:
            out.append(item)
    return out[: 4 * MAX_FACETS * MAX_ALTERNATIVES]


def grouped(items: list[Unit | str]) -> tuple[list[list[Unit]], list[list[Unit]]]:
    """Group units into facets (alternatives joined by "or") and exclusions (after "not"). A group with a request
    word for an alternative ("benchmarks or methods for X", the "any" boundary) narrows nothing and is left out,
    unless it is all the question asks about."""
    facets: list[list[Unit]] = []
    excluded: list[list[Unit]] = []
    open_: list[list[Unit]] = []
    target = facets
    current: list[Unit] = []
    for item in [*items, "and"]:
        if isinstance(item, Unit):
            current.append(item)
        elif item == "or":
            continue
        else:
            if current:
                (open_ if item == "any" and target is facets else target).append(current)
                current = []
                target = facets
            if item == "not":
                target = excluded
    return facets or open_, excluded


def corrected(text: str, corrections: list[tuple[str, str]]) -> str:
    """``text`` with each misspelt word replaced, in order: each correction from where the last one ended (one
    pass over the text, however many words were corrected)."""
    pieces, pos = [], 0
    for wrong, right in corrections:
        if m := re.compile(rf"\b{re.escape(wrong)}\b").search(text, pos):
            pieces += [text[pos : m.start()], right]
            pos = m.end()
    return "".join([*pieces, text[pos:]])
