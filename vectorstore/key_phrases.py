"""Key phrases of an abstract: noun-phrase-like spans scored by how often their words recur in it and how rare they
are in general English; noun groups and head words, which the topic map names its topics with. The second part
of a derived title (:mod:`vectorstore.titles`)."""

from __future__ import annotations

import itertools
import math
import re

from askpapers.vectorstore.english import VERB_BEFORE, English, common_in_papers, english_statistics
from askpapers.vectorstore.text import (
    STOPWORDS,
    acronym_definitions,
    sentence_spans,
    stem,
)

# --- key-phrase titles -----------------------------------------------------------------------------------------------
# A title built from noun-phrase-like spans of the abstract: runs of content words bounded by function words,
# punctuation and verbs, optionally joined to the next run by one preposition ("collapse of the expected
# information gain"). A span is scored by how often its words recur in the abstract and how rare they are in
# general English (symspellpy's word counts); verbs are told apart by the words general English puts before them
# ("to transform", "we admit") against those it puts before nouns ("the data").

_TOKEN_RX = re.compile(
    r"[^\W_](?:[\w'’.-]*[^\W_])?|[^\w\s]"
)  # a word (with inner hyphens, dots, apostrophes), or one mark
_NUMBER = re.compile(r"[\d.,]+")
FUNCTION_WORDS = STOPWORDS | frozenset(
    """
    across after again against along among amongst around because before behind below beside besides beyond despite
    during above amid already almost
    except however if although though unless until whereas whether while since thus therefore hence yet nor
    either neither every many much few several various often always never still even further furthermore moreover
    well rather towards toward through throughout per versus vs etc e.g i.e ie eg whereby wherein thereby one
    two three new novel existing instead but cannot recent prior previous current first second third key main simple
    achieve achieves achieved show shows shown showing propose proposes proposed present presents presented
    introduce introduces introduced demonstrate demonstrates demonstrated provide provides provided
    """.split()  # noqa: SIM905
)
# endings of adjectives, adverbs and participles, which do not end a title ("... with acceptable computational")
_MODIFIER_ENDINGS = ("ed", "able", "ible", "ive", "ous", "ful", "less", "al", "ic", "ly")
_CONNECTORS = frozenset({"of", "for", "in", "with", "via", "on", "under"})
_ARTICLES = frozenset({"the", "a", "an"})
_PROPOSING = frozenset(
    "propose proposes introduce introduces present presents develop develops design designs devise".split()  # noqa: SIM905
)
_EPITHETS = frozenset({"novel", "new", "simple", "first"})
_SUBJECTS = frozenset({"we", "they"})
_SCAN = 4000  # characters of an abstract read for key phrases (ICML abstracts are 600-2,500 long)
SHORT_PHRASE = 4  # words: a key phrase shorter than this is followed by the next one
MAX_WORDS = 10  # words of a key-phrase span
OBJECT_WEIGHT = 1.5  # a span the abstract proposes, introduces or presents weighs this much more
GENERIC_WEIGHT = 0.5  # a phrase none of whose words is more specific than this weighs less
_RARE = 16.0
_UNKNOWN = 12.0  # words of a key-phrase title


def _is_verb(word: str, prev: str, verbs: frozenset[str], compounds: frozenset[tuple[str, str]]) -> bool:
    """Whether ``word`` (lower case), after ``prev`` in a run of content words, reads as a verb."""
    if (prev, word) in compounds:
        return False
    if word in verbs:
        return True
    if word.endswith("s") and (word[:-1] in verbs or (word.endswith("es") and word[:-2] in verbs)):
        return True
    if word.endswith("ies") and word[:-3] + "y" in verbs:  # "varies", "implies"
        return True
    return bool(prev) and word.endswith("ed") and len(word) > 4


def _after_plural(word: str, prev: str, english: English) -> bool:
    """Whether ``word`` after ``prev`` reads as a plural subject's verb: ``prev`` is a plural noun, and ``word`` a
    bare form that general English uses as a verb, or never puts after an article ("networks oversmooth",
    "clusters coalesce")."""
    plural = len(prev) > 3 and prev.endswith("s") and not prev.endswith(("ss", "us", "is", "ics"))
    bare = not word.endswith(("s", "ing", "ed", "ion", "ity", "ness", "ment", "ance", "ence", "al", "ic", "ive"))
    return plural and bare and (word in english.verbal or word not in english.nominal)


def _runs(abstract: str) -> tuple[list[list[tuple[str, int]]], set[int]]:
    """Spans of the abstract as lists of (token, sentence index): runs of content words and the single
    connectors or articles between them, split at punctuation, function words and verbs; and the indices of the
    runs that are the object of a proposing verb ("we propose a novel *framework for ...*")."""
    english = english_statistics()
    verbs, compounds = english.verbs, english.compounds
    terms = {long.lower() for long, _ in acronym_definitions(abstract)}
    pair_counts: dict[tuple[str, str], int] = {}
    spans: list[list[tuple[str, int]]] = []
    for si, (s, e) in enumerate(sentence_spans(abstract) or [(0, len(abstract))]):
        toks = _TOKEN_RX.findall(abstract[s:e].replace("**", ""))
        lows = [t.lower() for t in toks]
        for a, b in itertools.pairwise(lows):
            pair_counts[(a, b)] = pair_counts.get((a, b), 0) + 1
        spans.append([(t, si) for t in toks])
    # words the abstract uses as verbs: after "we" or "they", or after "to" when English mostly uses them as verbs
    # ("to capture")
    said_after_we = {b for (a, b) in pair_counts if a in _SUBJECTS or (a == "to" and b in verbs)}
    out: list[list[tuple[str, int]]] = []
    objects: set[int] = set()
    for sent in spans:
        run: list[tuple[str, int]] = []
        prev = ""
        lead = ""  # the last word before this run, past articles and "novel", "new", "simple"
        before: list[str] = ["", ""]  # the two tokens before this one, as written
        in_tag = False  # inside an HTML tag: its name and attributes (<img src=x onerror=...>)
        for tok, si in sent:
            low = tok.lower()
            tag = before[-1] in ("<", "\\") or before == ["<", "/"]  # an HTML tag's or a TeX command's name
            in_tag = (in_tag or (tag and before[-1] == "<" and tok.isalpha())) and tok not in (">", "$")
            tag = tag or in_tag
            before = [before[-1], tok]
            word = tok[0].isalnum()
            content = word and low not in FUNCTION_WORDS and len(tok) > 1 and not _NUMBER.fullmatch(tok)
            if content and (tag or "_" in tok or "." in tok.strip(".")):
                content = False  # markup, code or a file name (script, window.__xss, train.py): not a title's
            if content and tok.islower() and (low.endswith("ly") and len(low) > 4):
                content = False  # an adverb
            if content and not run and low in said_after_we:
                content = False  # a span does not start on a word the abstract uses as a verb ("we train")
            if content and prev and low in english.participles and pair_counts.get((prev, low), 0) < 2:
                content = False  # "samples leveraging ...", "results demonstrating ..."
            if content and tok.islower() and _after_plural(low, prev, english):
                content = pair_counts.get((prev, low), 0) > 1  # "networks oversmooth", "methods lack"
            if content and tok.islower() and _is_verb(low, prev, verbs, compounds):
                joined = f"{prev} {low}"
                if not (pair_counts.get((prev, low), 0) > 1 or any(joined in t for t in terms)):
                    content = False
            if content:
                if not run and lead in _PROPOSING:
                    objects.add(len(out))
                run.append((tok, si))
                prev = low
                continue
            if low in _CONNECTORS | _ARTICLES and run and run[-1][0].lower() not in _CONNECTORS | _ARTICLES:
                run.append((tok, si))  # may join the next run; dropped below if none follows
                prev = ""
                continue
            if low in _ARTICLES and run and run[-1][0].lower() in _CONNECTORS:
                run.append((tok, si))
                prev = ""
                continue
            if run:
                out.append(run)
                lead = ""
            if low not in _ARTICLES | _EPITHETS:
                lead = low
            run, prev = [], ("" if not word else low)
            if low in VERB_BEFORE or low in {"which", "who", "that", "it", "also", "not"}:
                prev = low
        if run:
            out.append(run)
    return out, objects


def _candidates(run: list[tuple[str, int]]) -> list[list[str]]:
    """Noun-phrase-like spans of one run: its groups of content words, each alone or joined to the next group by
    its connector ("collapse" + "of the" + "expected information gain")."""
    groups: list[list[str]] = []
    joins: list[list[str]] = []
    cur: list[str] = []
    glue: list[str] = []
    for tok, _ in run:
        if tok.lower() in _CONNECTORS | _ARTICLES:
            if cur:
                groups.append(cur)
                joins.append([])
                cur = []
            glue.append(tok)
            continue
        if glue and groups:
            joins[-1] = glue
        glue = []
        cur.append(tok)
    if cur:
        groups.append(cur)
        joins.append([])
    out = []
    for i in range(len(groups)):
        span = list(groups[i])
        out.append(span)
        for j in range(i, len(groups) - 1):
            glue = joins[j]
            if not (glue and glue[0].lower() in _CONNECTORS and len(glue) <= 2):
                break
            span = [*span, *glue, *groups[j + 1]]
            if len(span) > MAX_WORDS:
                break
            out.append(span)
    return out


def _attributive(abstract: str) -> frozenset[str]:
    """The (lower-case) words the abstract only ever puts before another content word: modifiers
    ("black-box access", "2D meshes"), which never end a title."""
    toks = _TOKEN_RX.findall(abstract.replace("**", ""))
    before_content: set[str] = set()
    ending: set[str] = {toks[-1].lower()} if toks else set()
    for a, b in itertools.pairwise(toks):
        content = b[0].isalnum() and b.lower() not in FUNCTION_WORDS  # (a number too: "robust 0/1 loss")
        (before_content if content else ending).add(a.lower())
    return frozenset(before_content - ending)


def noun_groups(text: str) -> list[list[str]]:
    """The text's runs of content words, as written, cut at function words, punctuation, verbs, connectors and
    articles (see :func:`_runs`): the stretches a noun phrase's words come from ("information bottleneck",
    "graph neural networks"), never a verb ("reduces") or a function word."""
    runs, _ = _runs(text)
    glue = _CONNECTORS | _ARTICLES
    out: list[list[str]] = []
    for run in runs:
        group: list[str] = []
        for tok, _ in run:
            if tok.lower() in glue:
                if group:
                    out.append(group)
                group = []
            else:
                group.append(tok)
        if group:
            out.append(group)
    return out


def is_head(word: str) -> bool:
    """Whether ``word`` can end a noun phrase by its form: a name or an acronym, or a word without an adjective's,
    adverb's or participle's ending ("neural", "generative", "based", "largely")."""
    return not word[1:].islower() or not word.lower().endswith(_MODIFIER_ENDINGS)


def key_phrases(abstract: str, top: int = 3) -> list[str]:
    """The ``top`` best-scored noun-phrase-like spans of ``abstract`` (see :func:`_runs`), best first, no two
    sharing a content word.

    A word weighs its rarity in general English times how often the abstract says it (an acronym it defines
    counts for the words of its long form, and stands for them in a title); a span weighs the sum of its words,
    and more for each time it recurs. Words said once are trimmed off a span's ends."""
    rarity = english_statistics().rarity
    runs, objects = _runs(abstract[:_SCAN])
    attributive = _attributive(abstract[:_SCAN])
    common_share = common_in_papers()
    glue = _CONNECTORS | _ARTICLES
    long_forms = {acro: long.split() for long, acro in acronym_definitions(abstract)}
    tf: dict[str, int] = {}
    for run in runs:
        for tok, _ in run:
            for w in long_forms.get(tok, [tok]):
                if w.lower() not in glue:
                    tf[stem(w.lower())] = tf.get(stem(w.lower()), 0) + 1

    def weight(w: str) -> float:
        return (min(rarity.get(w.lower(), _UNKNOWN), _RARE) / _RARE) * math.log(1 + tf.get(stem(w.lower()), 1))

    def specific(w: str) -> float:  # rare in English, and not used by most abstracts
        low = w.lower()
        return (min(rarity.get(low, _UNKNOWN), _RARE) / _RARE) * (1 - common_share.get(stem(low), 0.0))

    def keep_start(cand: list[str]) -> bool:
        w, low = cand[0], cand[0].lower()
        if low in glue or (low.endswith("ing") and len(cand) > 1 and cand[1].lower() in glue):  # "focusing on"
            return False
        return tf.get(stem(low), 1) > 1 or not w[1:].islower()  # said again, or a coined name or acronym

    def keep_end(w: str) -> bool:  # the head noun, not a modifier or a participle ("problem of converting")
        low = w.lower()
        if low in glue or not w[1:].islower():  # a connector, or a name or acronym
            return low not in glue
        return not low.endswith(_MODIFIER_ENDINGS) and not (low.endswith("ing") and tf.get(stem(low), 1) == 1)

    seen: dict[tuple[str, ...], int] = {}
    scored: list[tuple[float, int, list[str]]] = []
    for ri, run in enumerate(runs):
        si = run[0][1]
        for raw in _candidates(run):
            cand = [w for t in raw for w in long_forms.get(t, [t])]
            start = 0
            while start < len(cand) - 1 and not keep_start(cand[start:]):
                start += 1
            cand = cand[start:] if keep_start(cand[start:]) else cand  # (all said once: the whole span)
            while cand and cand[0].lower() in glue:
                cand.pop(0)
            while cand and not keep_end(cand[-1]):
                cand.pop()
            if cand and cand[-1].lower() in attributive:  # cut mid-phrase: "... with black-box" (access)
                continue
            words = [t for t in cand if t.lower() not in glue]
            if not words or len(cand) > MAX_WORDS:
                continue
            key = tuple(stem(w.lower()) for w in words)
            seen[key] = seen.get(key, 0) + 1
            score = sum(weight(w) for w in words) * (1.2 if si == 0 else 1.0)
            if ri in objects and raw[0] == run[0][0] and specific(cand[-1]) >= GENERIC_WEIGHT:
                # what the paper proposes, unless its head is a generic word ("a general theoretical framework")
                score *= OBJECT_WEIGHT
            score *= min(1.0, max(specific(w) for w in words) / GENERIC_WEIGHT)
            scored.append((score, len(scored), cand))
    best: dict[tuple[str, ...], tuple[float, int, list[str]]] = {}
    for score, order, cand in scored:
        key = tuple(stem(t.lower()) for t in cand if t.lower() not in glue)
        boosted = score * (1 + 0.5 * (seen[key] - 1))
        if key not in best or boosted > best[key][0]:
            best[key] = (boosted, best[key][1] if key in best else order, cand)
    out: list[str] = []
    used: set[str] = set()
    for _, _, cand in sorted(best.values(), key=lambda x: (-x[0], x[1])):
        stems = {stem(t.lower()) for t in cand if t.lower() not in glue}
        if stems & used:
            continue
        out.append(" ".join(cand))
        used |= stems
        if len(out) == top:
            break
    return out
