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
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence, Set
from dataclasses import dataclass, replace

from askpapers.rag.read.cues import (
    ANAPHORA,
    AUXILIARIES,
    BOTH_CUES,
    GENERIC_HEADS,
    LINK_VERBS,
    LINKS,
    MODEL_HEADS,
    NAME_HEADS,
    NOT_WORDS,
    OR_WORDS,
    RELATIONAL_VERBS,
    RELATIVES,
    REQUEST_WORDS,
    TOKEN,
    WORK_HEADS,
    Tok,
    correct,
    framed,
    intent_of,
    is_acronym,
    is_name,
    protect_acronyms,
    stated_filters,
    tokens,
)
from askpapers.rag.read.lexicon import Lexicon, english_words
from askpapers.rag.read.topicality import TOPICAL, topicality
from askpapers.rag.types import Facet, QueryPlan
from askpapers.vectorstore.text import STOPWORDS, one_line, same_term, stems

__all__ = ["REQUEST_WORDS", "Facet", "QueryPlan", "plan", "question_terms", "same_phrase"]

GLUE = 0.2  # a request word belongs to a topic when this share of its neighbour's papers state the pair
TERM = 0.35  # units joined by a link are one term when this share of the rarer unit's papers state the whole
MIN_TERM_PAPERS = 3  # … and at least this many papers state it
COMMON = 0.15  # a word in at least this share of papers carries no topic on its own ("learning", "model")
GENERIC_SHARE = 0.25  # a one-word facet in at least this share of papers only ranks them
MAX_SPELLINGS = 12  # spellings tried per alternative
MAX_PHRASE_WORDS = 6  # longest phrase whose statement in the corpus is checked (a longer unit is cut)
MAX_FACETS = 6  # facets a plan keeps (a longer question is not a topic any more): the first ones
MAX_ALTERNATIVES = 8  # alternatives a facet keeps
COINED_PAPERS = 5  # a name in at most this many papers is a coined one a factoid question may ask about


# -- units and facets -------------------------------------------------------------------------------------------------


def _generic(facet: Facet, lexicon: Lexicon) -> bool:
    """A facet that is one word found in at least a quarter of the papers."""
    words = [a.lower().split() for a in facet.alternatives]
    size = max(lexicon.size, 1)
    return all(len(w) == 1 and lexicon.df(w[0]) >= GENERIC_SHARE * size for w in words)


def _common(unit: list[str], lexicon: Lexicon) -> bool:
    """A unit made only of words too frequent to carry a topic ("learning", "model", "data")."""
    size = max(lexicon.size, 1)
    return all(lexicon.df(w) >= COMMON * size for w in unit if w not in STOPWORDS)


def _assoc(whole: str, left: str, right: str, lexicon: Lexicon) -> float:
    n = lexicon.phrase_df(whole)
    if n == 0:
        return 0.0
    return n / max(1, min(lexicon.phrase_df(left), lexicon.phrase_df(right)))


def _is_term(whole: list[str], left: list[str], right: list[str], lexicon: Lexicon) -> bool:
    """Whether "left link right" is one term in this corpus (see the module text)."""
    n = lexicon.phrase_df(" ".join(whole))
    if n < MIN_TERM_PAPERS:
        return False
    if _common(left, lexicon) or _common(right, lexicon):
        return True
    return _assoc(" ".join(whole), " ".join(left), " ".join(right), lexicon) >= TERM


def _glued(word: str, neighbour: list[str], before: bool, lexicon: Lexicon) -> bool:
    """Whether a request word belongs to the topic next to it ("tool use", "user study")."""
    if word in STOPWORDS and word not in ("use", "study", "work", "works"):
        return False
    pair = [word, *neighbour[:1]] if before else [*neighbour[-1:], word]
    if lexicon.phrase_df(" ".join(pair)) < 2:
        return False
    return _assoc(" ".join(pair), pair[0], pair[1], lexicon) >= GLUE


@dataclass
class _Unit:
    words: list[str]
    shown: list[str]
    alias: str = ""  # an acronym the question defines for it …
    long: int = 0  # … for its first ``long`` words (the rest, such as "models", follow the acronym)


Item = _Unit | str  # a unit, or a boundary: "or", "and", "not", "gap" (dropped words), "link:WORD"


def _boundary(t: Tok, both: bool) -> str:
    """The boundary a punctuation mark or a joining word makes ("or", "and", "not", "gap"), or "" for a word."""
    if not t.word:
        return "or" if t.text in ",/;" else "and" if t.text in "?!.:" else "gap"
    if t.low in OR_WORDS or t.low == "and":
        return "and" if t.low == "and" and both else "or"
    if t.low in NOT_WORDS:
        return "not"
    return "gap" if t.low in ANAPHORA else ""


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


CLAUSE_STARTS = frozenset({"to", "for", "as", "before", "so"})  # ", to get up to speed", ", for my thesis"
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


def _segments(toks: list[Tok], skip: set[int], acronyms: dict[int, str], lexicon: Lexicon) -> list[Item]:
    """Units and the boundaries between them, in question order."""
    out: list[Item] = []
    both = bool(BOTH_CUES & {t.low for t in toks})
    cur: _Unit | None = None

    def close() -> None:
        nonlocal cur
        if cur is not None:
            out.append(cur)
            cur = None

    i = 0
    while i < len(toks):
        t, low = toks[i], toks[i].low
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if i in skip:
            close()
        elif t.protected >= 0:  # a long form the question defines: one unit, with its acronym
            close()
            j = i
            while j < len(toks) and toks[j].protected == t.protected:
                j += 1
            cur = _Unit([x.low for x in toks[i:j]], [x.text for x in toks[i:j]], acronyms[t.protected], j - i)
            i = j + 3 if j + 2 < len(toks) and toks[j].text == "(" and toks[j + 2].text == ")" else j
            continue  # (words right after the acronym, such as "models", still join this unit)
        elif t.text == "(" and i + 2 < len(toks) and toks[i + 2].text == ")" and is_name(toks[i + 1].text):
            target = cur if cur is not None else next((u for u in reversed(out) if isinstance(u, _Unit)), None)
            if target is not None and not target.alias:
                target.alias = toks[i + 1].text
            i += 3
            continue
        elif t.text in "()[]":  # brackets around words that are not an acronym set nothing apart
            pass
        elif (ex := _examples_cue(toks, i)) and (cur is not None or any(isinstance(x, _Unit) for x in out[-2:])):
            close()  # "efficient fine-tuning like LoRA": the examples are alternatives of the topic before them
            if out and out[-1] != "or":
                out.append("or")
            i += ex
            continue
        elif low in NOT_WORDS and _negates_predicate(toks, i):
            close()
            out.append("gap")
        elif boundary := _boundary(t, both):
            close()
            # a comma before a new clause ("Hi team, which papers …", "…, I'd love …") joins no alternatives
            clause = t.text == "," and nxt is not None and nxt.word and (
                nxt.low in REQUEST_WORDS or nxt.low in CLAUSE_STARTS or "'" in nxt.low
            )  # fmt: skip
            out.append("gap" if boundary == "or" and clause else boundary)
        elif (cur is not None and (low in LINKS or low in LINK_VERBS or low in RELATIONAL_VERBS)
              and not _glued(low, cur.words, False, lexicon)):  # fmt: skip
            close()
            out.append(f"link:{low}")
        elif cur is None and low in LINKS and out and str(out[-1])[5:] in RELATIONAL_VERBS:  # "guided by"
            out.append(f"link:{low}")
        elif low in REQUEST_WORDS or low in STOPWORDS or low in BOTH_CUES:
            if cur is not None and _glued(low, cur.words, False, lexicon):
                cur.words.append(low)
                cur.shown.append(t.text)
            elif (cur is None and nxt is not None and nxt.word and nxt.low not in REQUEST_WORDS
                  and nxt.low not in STOPWORDS and _glued(low, [nxt.low], True, lexicon)):  # fmt: skip
                cur = _Unit([low], [t.text])
            else:
                close()
                article = low in ("the", "a", "an") and bool(out) and str(out[-1]).startswith("link:")
                out.append(f"link:{low}" if article else "gap")
        else:
            if cur is None:
                cur = _Unit([], [])
            cur.words.append(low)
            cur.shown.append(t.text)
        i += 1
    close()
    return out


def _bounded(items: list[Item]) -> list[Item]:
    """Units of at most :data:`MAX_PHRASE_WORDS` words (a longer run of words is no one topic), and no more than
    a few dozen items in all: every later step then does a bounded amount of work."""
    out: list[Item] = []
    for item in items:
        if isinstance(item, _Unit) and len(item.words) > MAX_PHRASE_WORDS:
            for i in range(0, len(item.words), MAX_PHRASE_WORDS):
                if i:
                    out.append("and")
                out.append(_Unit(item.words[i : i + MAX_PHRASE_WORDS], item.shown[i : i + MAX_PHRASE_WORDS]))
        else:
            out.append(item)
    return out[: 4 * MAX_FACETS * MAX_ALTERNATIVES]


def _join_terms(items: list[Item], lexicon: Lexicon) -> list[Item]:
    """Units joined by a link that the corpus states as one term become one unit ("mixture of experts"); other
    links, and words dropped between units, become "and"."""
    out: list[Item] = []
    for at, item in enumerate(items):
        if isinstance(item, str) and item.startswith("link:"):
            out.append(item)
            continue
        links: list[str] = []
        while out and isinstance(out[-1], str) and out[-1].startswith("link:"):
            links.insert(0, str(out.pop())[5:])
        if isinstance(item, _Unit) and links and links[0] in RELATIONAL_VERBS and out and isinstance(out[-1], _Unit):
            left, verb = out[-1], links[0]
            if len(links) == 1:  # "language guided navigation" is "language-guided navigation"
                out[-1] = _Unit([*left.words[:-1], f"{left.words[-1]}-{verb}", *item.words],
                                [*left.shown[:-1], f"{left.shown[-1]}-{verb}", *item.shown])  # fmt: skip
                continue
            if len(item.words) == 1 and not item.alias:  # "navigation guided by language": the same
                out[-1] = _Unit([f"{item.words[0]}-{verb}", *left.words], [f"{item.shown[0]}-{verb}", *left.shown])
                continue
        if isinstance(item, _Unit) and links and out and isinstance(out[-1], _Unit):
            left = out[-1]
            whole = [*left.words, *links, *item.words]
            if not left.alias and not item.alias and _is_term(whole, left.words, item.words, lexicon):
                out[-1] = _Unit(whole, [*left.shown, *links, *item.shown])
                continue
            alone = (len(out) < 2 or out[-2] != "or") and (at + 1 >= len(items) or items[at + 1] != "or")
            if (alone and len(left.words) == len(item.words) == 1 and not left.alias and not item.alias
                    and links[-1] in LINKS
                    and lexicon.phrase_df(f"{item.words[0]} {left.words[0]}") >= MIN_TERM_PAPERS):  # fmt: skip
                # "policies for robots" is "robot policies" (not in "safety or alignment of LLMs": the link joins all)
                out[-1] = _Unit([*item.words, *left.words], [*item.shown, *left.shown])
                continue
        if links and out and isinstance(out[-1], _Unit):
            out.append("and")
        if item == "gap":
            item = "and" if out and isinstance(out[-1], _Unit) else ""
        if item:
            out.append(item)
    return [x for x in out if not (isinstance(x, str) and x.startswith("link:"))]


def _facets(items: list[_Unit | str]) -> tuple[list[list[_Unit]], list[list[_Unit]]]:
    """Group units into facets (alternatives joined by "or") and exclusions (after "not")."""
    facets: list[list[_Unit]] = []
    excluded: list[list[_Unit]] = []
    target = facets
    current: list[_Unit] = []
    for item in [*items, "and"]:
        if isinstance(item, _Unit):
            current.append(item)
        elif item == "or":
            continue
        else:
            if current:
                target.append(current)
                current = []
                target = facets
            if item == "not":
                target = excluded
    return facets, excluded


# -- spellings ----------------------------------------------------------------------------------------------------


def _share_heads(group: list[_Unit], lexicon: Lexicon) -> list[_Unit]:
    """ "backdoor attacks or defenses" → "backdoor defenses", when the corpus states it."""
    if len(group) < 2:
        return group
    first = group[0]
    out = [first]
    for u in group[1:]:
        if len(u.words) == 1 and len(first.words) >= 2 and not is_name(u.shown[0]):  # (not "LoRA" of "like LoRA")
            shared = [*first.words[:-1], *u.words]
            if u.words[0] in WORK_HEADS or lexicon.phrase_df(" ".join(shared)) >= 1:
                u = _Unit(shared, [*first.shown[:-1], *u.shown], u.alias)
        out.append(u)
    return out


def _distribute(group: list[_Unit], lexicon: Lexicon) -> list[list[_Unit]]:
    """Alternatives that share a word of the last one, as the corpus reads them: its head ("large language or
    vision-language models" is "large language models" or "vision-language models", when the corpus mostly
    writes "large language" before "models"), or its object ("explain or interpret graph neural networks" is
    "explain or interpret" and "graph neural networks", when the corpus never states the verb with its object
    but states the object as a term)."""
    if len(group) < 2 or any(u.alias for u in group):
        return [group]
    last = group[-1]
    if len(last.words) < 2:
        return [group]
    out = []
    for u in group[:-1]:
        with_head = [*u.words, last.words[-1]]
        n = lexicon.phrase_df(" ".join(with_head))
        if u.words[-1] != last.words[-1] and n > 0 and 2 * n >= lexicon.phrase_df(" ".join(u.words)):
            u = _Unit(with_head, [*u.shown, last.shown[-1]])
        out.append(u)
    obj = last.words[1:]
    if (all(len(u.words) == 1 for u in out) and lexicon.phrase_df(" ".join(last.words)) == 0
            and lexicon.phrase_df(" ".join(obj)) >= MIN_TERM_PAPERS):  # fmt: skip
        return [[*out, _Unit(last.words[:1], last.shown[:1])], [_Unit(obj, last.shown[1:])]]
    return [[*out, last]]


def _split_unattested(unit: _Unit, lexicon: Lexicon) -> list[_Unit]:
    """A unit the corpus never states (in any of its spellings), cut into the longest phrases it does state."""
    words = unit.words
    if len(words) < 2 or unit.alias or lexicon.phrase_df(" ".join(words)) > 0:
        return [unit]
    if any(lexicon.phrase_df(form) > 0 for form in _head_forms(words, lexicon)):
        return [unit]
    # the longest stated phrases read from the left, and from the right (English phrases end in their head:
    # "distill | large language models", not "distill large | language models"): the cut with fewer parts, then
    # the one whose least stated part is stated most
    cuts = []
    for from_right in (False, True):
        spans: list[tuple[int, int]] = []
        i, j_end = 0, len(words)
        while (j_end > 0) if from_right else (i < len(words)):
            for n in range(min(MAX_PHRASE_WORDS, (j_end if from_right else len(words) - i)), 0, -1):
                a, b = (j_end - n, j_end) if from_right else (i, i + n)
                if n == 1 or lexicon.phrase_df(" ".join(words[a:b])) > 0:
                    spans.append((a, b))
                    i, j_end = b, a
                    break
        spans.sort()
        cuts.append((len(spans), -min(lexicon.phrase_df(" ".join(words[a:b])) for a, b in spans), spans))
    _, _, best = min(cuts)
    return [_Unit(words[a:b], unit.shown[a:b]) for a, b in best]


def _acronym_word(word: str, shouted: bool, lexicon: Lexicon) -> bool:
    """An acronym: two capitals or more (unless the whole question is in capitals), or, typed in lower case, a
    short word the corpus uses that is no English word ("llm", "vit")."""
    if any(c.isupper() for c in word):
        return not shouted and is_acronym(word)
    low = word.lower()
    core = low[:-1] if low.endswith("s") else low
    return low.isalpha() and 2 <= len(core) <= 5 and core not in english_words() and lexicon.df(low) > 0


def _led_by_term(group: list[_Unit], lexicon: Lexicon, shouted: bool) -> list[list[_Unit]] | None:
    """ "LLM reasoning" is reasoning in LLMs, and "language model safety" the safety of language models: two
    facets, when the phrase is led by an acronym or by a term of several words the corpus uses (3 papers or
    more) and the corpus uses the whole far less than either part (it is no term of its own); the group's other
    alternatives must be single words or led by the same term ("LLM safety or alignment" is LLMs, and safety or
    alignment)."""
    first = group[0]
    if first.alias or len(first.words) < 2:
        return None
    if _acronym_word(first.shown[0], shouted, lexicon):
        n = 1
    else:
        n = next((n for n in range(len(first.words) - 1, 1, -1)
                  if lexicon.phrase_df(" ".join(first.words[:n])) >= MIN_TERM_PAPERS), 0)  # fmt: skip
    if not n:
        return None
    lead, rest = first.words[:n], first.words[n:]
    if len(rest) == 1 and rest[0] in GENERIC_HEADS | NAME_HEADS:  # "MoE models" is MoE
        return None
    if any(len(u.words) > 1 and u.words[:n] != lead for u in group[1:]):
        return None
    whole = " ".join(first.words)
    if lexicon.phrase_df(whole) >= MIN_TERM_PAPERS and _assoc(whole, " ".join(lead), " ".join(rest), lexicon) >= TERM:
        return None
    others = [_Unit(u.words[n:], u.shown[n:]) if len(u.words) > n else u for u in group[1:]]
    return [[_Unit(lead, first.shown[:n])], [_Unit(rest, first.shown[n:]), *others]]


def _head_forms(words: list[str], lexicon: Lexicon) -> list[str]:
    """The alternative without a generic head ("jailbreak attacks" → "jailbreak") when that is a term of its own."""
    if len(words) < 2 or words[-1] not in GENERIC_HEADS | MODEL_HEADS:
        return []
    rest = words[:-1]
    short = " ".join(rest)
    coined = any("-" in w or is_name(w) for w in rest)
    if words[-1] in MODEL_HEADS:
        return [short] if coined else []
    full, alone = lexicon.phrase_df(" ".join(words)), lexicon.phrase_df(short)
    standalone = alone >= 1 and alone >= 2 * full
    adjective = rest[-1].endswith(("al", "ive", "ous", "ic", "ar", "ed"))
    return [short] if coined or (standalone and not adjective) else []


def _family_forms(words: list[str], lexicon: Lexicon) -> list[str]:
    """The phrase with its words swapped for corpus words of the same family (the corpus's commonest forms
    first), where the corpus states it: "differential privacy" → "differentially private"."""
    options = [(lexicon.family(w) or [w])[:4] if len(w) > 3 and w.isalpha() else [w] for w in words]
    out = []
    for combo in itertools.islice(itertools.product(*options), 24):
        phrase = " ".join(combo)
        if combo != tuple(words) and lexicon.phrase_df(phrase) > 0:
            out.append(phrase)
    return out[:MAX_SPELLINGS]


def _spellings(unit: _Unit, lexicon: Lexicon) -> tuple[str, tuple[str, ...]]:
    shown = " ".join(unit.shown)
    spellings = [shown]
    if unit.alias:
        tail = unit.shown[unit.long :] if unit.long else []
        spellings.append(" ".join([unit.alias, *tail]))
        if tail and tail[-1].lower() in GENERIC_HEADS | MODEL_HEADS:  # "MoE models" is also "MoE"
            spellings += [" ".join(unit.shown[: unit.long]), unit.alias]
    for form in [*_head_forms(unit.words, lexicon), *_family_forms(unit.words, lexicon)]:
        if not any(stems(form) == stems(s) for s in spellings):  # (the phrase search compares stems already)
            spellings.append(form)
    return (f"{shown} ({unit.alias})" if unit.alias else shown), tuple(dict.fromkeys(spellings))


def same_phrase(a: str, b: str) -> bool:
    wa, wb = a.lower().split(), b.lower().split()
    return len(wa) == len(wb) and all(same_term(x, y) for x, y in zip(wa, wb, strict=True))


def _build(group: list[_Unit], lexicon: Lexicon, optional: bool = False) -> Facet:
    pairs = [_spellings(u, lexicon) for u in _share_heads(group, lexicon)]
    return Facet(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs), optional)


def _parts(parts: list[_Unit], lexicon: Lexicon) -> list[Facet]:
    """Facets of the phrases cut from one unit the corpus never states: the words it never uses, its rarest
    phrase and every phrase of several words that is a term of its own must hold ("quantum computing" needs
    "quantum"; "differentially private federated learning" needs both); the other single words only rank."""
    dfs = [lexicon.phrase_df(" ".join(p.words)) for p in parts]
    attested = [i for i, df in enumerate(dfs) if df > 0]
    rarest = min(attested, key=lambda i: dfs[i]) if attested else None
    term = [len(p.words) > 1 and dfs[i] >= MIN_TERM_PAPERS for i, p in enumerate(parts)]
    return [_build([p], lexicon, optional=not (dfs[i] == 0 or i == rarest or term[i])) for i, p in enumerate(parts)]


def _corrected(text: str, corrections: list[tuple[str, str]]) -> str:
    """``text`` with each misspelt word replaced, in order: each correction from where the last one ended (one
    pass over the text, however many words were corrected)."""
    pieces, pos = [], 0
    for wrong, right in corrections:
        if m := re.compile(rf"\b{re.escape(wrong)}\b").search(text, pos):
            pieces += [text[pos : m.start()], right]
            pos = m.end()
    return "".join([*pieces, text[pos:]])


def plan(question: str, lexicon: Lexicon, weigh: bool = True) -> QueryPlan:
    """The plan of one question (already validated and printable). Each facet is weighed by how topical it is
    (:mod:`rag.read.topicality`); one that is not only ranks. ``weigh=False`` keeps every facet as read (to train that
    model)."""
    text = one_line(question)
    toks = tokens(text)
    corrections = correct(toks, lexicon)
    searched = _corrected(text, corrections)
    acronyms = protect_acronyms(toks)
    lows = [t.low for t in toks]
    names = [t.text for t in toks if t.word and is_name(t.text)]
    filters, used = stated_filters(toks, lexicon)
    # a fact is asked about a coined method or paper, which few papers name ("WaterSIC"), not about "GANs"
    coined = [n for n in names if lexicon.df(n.lower()) <= COINED_PAPERS]
    intent, overview, cue = intent_of(lows, [t.low for t in toks if t.word], coined)
    followup = bool(ANAPHORA & set(lows)) or (lows[:1] == ["only"] and len(lows) < 8)
    items = _join_terms(_bounded(_segments(toks, used | cue, acronyms, lexicon)), lexicon)
    groups, excluded_groups = _facets(items)
    groups = [g[:MAX_ALTERNATIVES] for g in groups[:MAX_FACETS]]
    excluded_groups = [g[:MAX_ALTERNATIVES] for g in excluded_groups[:MAX_FACETS]]
    facets: list[Facet] = []
    cut_from: list[set[int]] = []  # the facets cut from each phrase typed as a whole
    for group in [d for g in groups for d in _distribute(g, lexicon)]:
        if named := _led_by_term(group, lexicon, shouted=not any(c.islower() for c in text)):
            facets += [_build(g, lexicon) for g in named]
            continue
        split = [_split_unattested(u, lexicon) for u in group]
        if len(group) == 1 and len(split[0]) > 1:  # one unit, cut into the phrases the corpus states
            parts = _parts(split[0], lexicon)
            cut_from.append(set(range(len(facets), len(facets) + len(parts))))
            facets += parts
        else:
            facets.append(_build(group, lexicon))
    # a leftover single word found in most papers ("learning", "model") narrows nothing: it only ranks
    facets = [replace(f, optional=True) if _generic(f, lexicon) and len(facets) > 1 else f for f in facets]
    if facets and all(f.optional for f in facets):  # one facet must hold: the rarest
        rarest = min(range(len(facets)), key=lambda i: lexicon.phrase_df(facets[i].alternatives[0]))
        facets[rarest] = replace(facets[rarest], optional=False)
    if weigh:
        facets = _weigh(facets, lexicon, cut_from)
    excluded = [_build(g, lexicon) for g in excluded_groups]
    if intent == "factoid":
        facets = []
    return QueryPlan(text=text, searched=searched, intent=intent, followup=followup, facets=facets,
                     excluded=excluded, filters=filters, corrections=corrections, overview=overview,
                     names=names, framed=framed(toks))  # fmt: skip


def _weigh(facets: list[Facet], lexicon: Lexicon, cut_from: Sequence[Set[int]] = ()) -> list[Facet]:
    """Each facet with its topicality; a facet that is not topical only ranks (the most topical one always gates,
    an optional one stays optional, and the parts of one phrase typed as a whole (``cut_from``) stay as read when
    one of them is topical: "weather" of "weather forecasting" is a topic word, however common in English, while
    both parts of "much appreciated" only rank). A unit of its own that no paper states only ranks too."""
    if not facets:
        return facets
    weights = _facet_weights(facets, lexicon)
    kept = {i for group in cut_from if any(weights[j] >= TOPICAL for j in group) for i in group}
    best = max(range(len(facets)), key=lambda i: (not facets[i].optional, weights[i]))
    out = []
    for i, (f, w) in enumerate(zip(facets, weights, strict=True)):
        # a unit of its own that no paper states narrows nothing the corpus holds ("ty", "thesis"): it only ranks
        unstated = i not in kept and all(lexicon.phrase_df(s) == 0 for s in f.all_spellings())
        demote = (w < TOPICAL or unstated) and i != best and i not in kept and not _goes_with(f, facets[best], lexicon)
        out.append(replace(f, weight=w, optional=f.optional or demote))
    return out


def _facet_weights(facets: list[Facet], lexicon: Lexicon) -> list[float]:
    """Each facet's topicality: that of its most topical alternative, each read in the question in place of the
    first ("the safety or alignment of language models": "alignment" is a topic of this corpus, so the facet is,
    however common "safety" is in English). The user offered every alternative as the topic."""
    firsts = [f.alternatives[0] for f in facets]
    weights = topicality(firsts, lexicon)
    for i, f in enumerate(facets):
        for alt in f.alternatives[1:]:
            weights[i] = max(weights[i], topicality([*firsts[:i], alt, *firsts[i + 1 :]], lexicon)[i])
    return weights


GOES_WITH = 3.0  # a unit stated with the question's main topic this many times more often than chance is a topic
GOES_WITH_PAPERS = 3  # … in at least this many papers


def _goes_with(facet: Facet, main: Facet, lexicon: Lexicon) -> bool:
    """Whether the corpus states any alternative of the unit together with the question's main topic far more
    often than chance ("planning" with "autonomous driving", "safety" with "language models"): topics asked
    together co-occur in papers, while a word of the request ("worked", "state-of-the-art") is about as common
    beside the topic as anywhere. Every count comes from the same phrase search."""
    b = main.alternatives[0]
    nb = lexicon.both_df(b, b)
    for a in facet.alternatives:
        both = lexicon.both_df(a, b)
        if both >= GOES_WITH_PAPERS and both * max(lexicon.size, 1) >= GOES_WITH * lexicon.both_df(a, a) * nb:
            return True
    return False


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
