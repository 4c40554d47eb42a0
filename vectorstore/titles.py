"""Display titles for papers that come without one, and code links found in abstracts.

A title is the method the abstract names ("SoftBinary Coding (SBC)", "WaterSIC"), with the abstract's best key
phrase after a short name ("FedFit: Federated learning"), if any, else the abstract's best key phrases ("Expected
information gain and intractable estimators"). Key phrases are noun-phrase-like spans
of the abstract (see :func:`key_phrases`), so a title is never a clause or a cut sentence. Titles are made unique
per corpus.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from askpapers.vectorstore.text import (
    STOPWORDS,
    acronym_definitions,
    content_stems,
    one_line,
    printable,
    sentence_spans,
    sentences,
    stem,
    tokens,
)

_GITHUB = re.compile(r"https?://(?:www\.)?github\.com/[\w.-]+(?:/[\w.-]+)?", re.IGNORECASE)
_VERB = (
    r"(?:propose|proposes|proposed|introduce|introduces|introducing|present|presents|develop|develops|derive"
    r"|call|term|dub|name|design)"
)
# "Capitalised Words (ACRO)" - up to 8 words, each starting with a capital or a connector word.
_WORD = r"(?:[A-Z][\w’'-]*|of|for|and|with|in|on|via|to|the|a|module|framework|based)"
# The last word may be a lower-case head noun: "U-shaped Multilevel Attention module (UMA)".
_NAMED_ACRONYM = re.compile(
    rf"\b((?:{_WORD}\s+){{0,8}}?[A-Z][\w’'-]*(?:\s+[a-z][\w-]*)?)\s+\(([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*)\)"
)
# A coined token: CamelCase, an inner capital or digit, an acronym after a hyphen ("Rob-FCP"), or one of 3+ letters.
_COINED = r"[A-Z][a-z]*[A-Z0-9][\w-]*|[A-Z][a-z]*-[A-Z]{2,}[\w-]*|[A-Z]{3,}[\w-]*"
# The gap between the verb and the name is bounded: unbounded, a long sentence repeating a verb took quadratic time.
# (a name starts a word: "CNN" of "G-CNN" and "FCP" of "Rob-FCP" are not names)
_AFTER_VERB = re.compile(
    rf"\b{_VERB}\b[^.;:]{{0,300}}?\b(?:termed|called|named|dubbed)?\s*[\"“*]*(?<![\w-])({_COINED})\b"
)
# (the name runs on over capitalised words: "called Thought Rollback (TR)", not "Thought")
_TERMED = re.compile(
    r"\b(?:termed|called|named|dubbed|name\s+(?:the|our)\s+(?:\w+\s+){0,2})\s*[\"“]*([A-Z][\w-]+(?:\s+[A-Z][\w-]+){0,6})"
    r"(?:\s+\(([A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*)\))?"
)
_CAPITALISED_NAME = re.compile(
    r"\b(?:introduce|propose|present|introducing)\s+((?:[A-Z][\w-]*\s+){1,5}[A-Z][\w-]*)\s*,"
)
# one capitalised word in apposition: "we propose Quest, a query-aware ..." (capitalised mid-sentence: a name)
_APPOSED_NAME = re.compile(
    r"\b(?:introduce|propose|present|introducing|develop)\s+([A-Z][\w-]+)\s*(?:,\s+(?:a|an|the)\b|:\s+[a-z])"
)
_BOLD = re.compile(r"\*\*([^*]{2,80})\*\*")
LONG_NAME = 4  # words of a method's name that say what it is by themselves: no phrase is added after it
DESCRIBING = 5  # key phrases looked at for the one that follows a short name ("WaterSIC: ...")
MAX_TITLE = 100  # characters of a derived title
_ACRONYM_STOP = {"LLM", "LLMS", "FL", "RL", "ML", "AI", "GNN", "VLM", "VLMS", "MLLM", "MLLMS", "KL", "GPU", "CPU"}


def code_urls(text: str) -> tuple[str, ...]:
    """GitHub links in ``text``, in order, without trailing punctuation or repeats."""
    seen: dict[str, None] = {}
    for m in _GITHUB.finditer(text):
        seen.setdefault(m.group(0).rstrip(".,;)"), None)
    return tuple(seen)


def _clean(name: str) -> str:
    name = name.replace("**", "").replace("*", "").strip(" \"“”'’.,:;")
    return one_line(name)


def _is_subsequence(needle: list[str], hay: str) -> bool:
    it = iter(hay)
    return len(needle) >= 2 and all(c in it for c in needle)


def _is_concept(token: str, abstract: str) -> bool:
    """A term the abstract defines in lower case, like "expected information gain (EIG)"."""
    return bool(re.search(rf"\b[a-z][\w-]*\s+\({re.escape(token)}\)", abstract))


def _acronym_fits(words: str, acro: str) -> bool:
    """Whether the acronym's letters can be read off the words' capitals/initials (loosely)."""
    initials = "".join(w[0] for w in re.split(r"[\s-]+", words) if w).upper()
    caps_of_acro = [c for c in acro if c.isupper()]
    if _is_subsequence(caps_of_acro, initials):
        return True
    letters = [c for c in acro.upper() if c.isalpha()]
    i = 0
    for c in initials:
        if i < len(letters) and c == letters[i]:
            i += 1
    caps = "".join(c for c in words if c.isupper())
    return i >= max(2, len(letters) - 2) or (len(letters) >= 2 and caps[: len(letters)] == "".join(letters))


_VERB_RX = re.compile(rf"\b{_VERB}\b", re.IGNORECASE)
_NAMING = frozenset({"termed", "called", "named", "dubbed", "coined", "namely"})
# After one of these, a name is what the new work builds on or is about ("we propose a method for tuning LoRA").
_ATTACHING = frozenset(
    "of for to with on in by from via using such as based like than that which into over between within".split()  # noqa: SIM905
)


def _introduced(sentence: str, start: int) -> bool:
    """Whether the name at ``start`` of ``sentence`` is what its proposing verb introduces: the verb's object
    ("we propose a U-shaped ... (UMA)", "we introduce X, a ...", "a method called X"), not a name mentioned in a
    prepositional phrase after it ("we propose a method for tuning CLIP")."""
    if set(tokens(sentence[:start])[-3:]) & _NAMING:  # 'a novel algorithm, termed "WaterSIC", is proposed'
        return True
    verbs = [m for m in _VERB_RX.finditer(sentence, 0, start) if not m.group(0).lower().endswith("ed")]
    if not verbs:  # (the "recently proposed" methods are others')
        return False
    gap = tokens(sentence[verbs[-1].end() : start])
    named = [i for i, w in enumerate(gap) if w in _NAMING]
    if named:
        gap = gap[named[-1] + 1 :]
    return len(gap) <= 8 and not set(gap) & _ATTACHING


def _modifies(token: str, abstract: str) -> bool:
    """Whether the abstract puts ``token`` before a lower-case content word ("KV cache", "CNN layers")."""
    after = re.findall(rf"(?<![\w-]){re.escape(token)}\s+([a-z][\w-]+)", abstract)
    return any(w not in FUNCTION_WORDS for w in after)


def _named_method(abstract: str) -> str | None:
    sents = sentences(abstract)
    verb_sents = [s for s in sents if _VERB_RX.search(s) or "**" in s]
    for s in verb_sents:
        for m in _BOLD.finditer(s):
            inner = _clean(m.group(1))
            if s[m.start() - 1 : m.start()].isalnum() or s[m.end() : m.end() + 1].isalnum():
                continue  # letters marked inside a word ("norm-**Di**sentangled")
            if re.search(r"[A-Z]", inner) and len(inner.split()) <= 10:
                return inner
        plain = s.replace("*", "")  # (markdown emphasis: "named *Correlated Dense Associative Memory* (CDAM)")
        for m in _NAMED_ACRONYM.finditer(plain):
            words, acro = m.group(1), m.group(2)
            words = re.sub(r"^(?:(?:the|a|an|of|for|and|with|in|on|via|to|module|framework|based)\s+)+", "", words)
            if acro.upper() in _ACRONYM_STOP or not _acronym_fits(words, acro):
                continue
            if not _introduced(plain, m.start(1) + m.group(1).index(words)):
                continue
            return f"{_clean(words)} ({acro})"
        m3 = _CAPITALISED_NAME.search(plain)
        if m3:
            return _clean(m3.group(1))
        m4 = _APPOSED_NAME.search(plain)
        if m4 and m4.group(1).upper() not in _ACRONYM_STOP:
            return _clean(m4.group(1))
        for rx in (_TERMED, _AFTER_VERB):
            m2 = rx.search(plain)
            if not m2:
                continue
            token = m2.group(1)
            stem = re.split(r"[-_]", token)[0].upper()
            if stem in _ACRONYM_STOP or token.lower().endswith("-based") or _is_concept(token, abstract):
                continue
            if token.isupper() and len(token) <= 3 and _modifies(token, abstract):
                continue  # an acronym used as a modifier ("KV cache"): a term, not the paper's name
            if not _introduced(plain, m2.start(1)):
                continue
            long_forms = {a: long for long, a in acronym_definitions(abstract)}
            if token in long_forms:  # an acronym the abstract spells out somewhere: "Mirror Descent (MD)"
                return f"{long_forms[token][:1].upper()}{long_forms[token][1:]} ({token})"
            if rx is _TERMED and m2.group(2):
                return f"{_clean(token)} ({m2.group(2)})"
            return _clean(token)
    for s in verb_sents:  # else a long form in lower case: "we propose a path-guided sampling (PGS) method"
        plain = s.replace("**", "")
        for long, acro in acronym_definitions(plain):
            at = plain.find(f"{long} ({acro}")
            if sum(c.isupper() for c in acro) < 3 or acro.upper() in _ACRONYM_STOP:
                continue  # (two letters name common concepts: "neural network (NN)")
            if at >= 0 and _introduced(plain, at):
                return f"{long[:1].upper()}{long[1:]} ({acro})"
    return None


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
_VERB_BEFORE = (
    "to",
    "we",
    "they",
    "it",
    "he",
    "she",
    "also",
    "can",
    "will",
    "would",
    "could",
    "should",
    "may",
    "might",
    "must",
    "cannot",
)
_PROPOSING = frozenset(
    "propose proposes introduce introduces present presents develop develops design designs devise".split()  # noqa: SIM905
)
_EPITHETS = frozenset({"novel", "new", "simple", "first"})
_SUBJECTS = frozenset({"we", "they"})
_PARTICIPLE_BEFORE = ("is", "are", "was", "were", "by", "while", "when", "also", "thereby")
_NOUN_BEFORE = ("the", "a", "an", "this", "these", "its", "their", "our", "his", "her")
_SCAN = 4000  # characters of an abstract read for key phrases (ICML abstracts are 600-2,500 long)
_SHORT = 4  # words: a key phrase shorter than this is followed by the next one
MAX_WORDS = 10  # words of a key-phrase span
OBJECT_WEIGHT = 1.5  # a span the abstract proposes, introduces or presents weighs this much more
VERBAL_SHARE = 0.1  # a word said after "to"/"we"/a modal this share as often as after an article is verbal
GENERIC_WEIGHT = 0.5  # a phrase none of whose words is more specific than this weighs less
_RARE = 16.0
_UNKNOWN = 12.0  # words of a key-phrase title


@dataclass(frozen=True)
class _English:
    """Statistics of general English: each word's rarity (-log share); the words that are mostly verbs; the common
    two-word terms whose second word is such a verb ("Fourier transform"); the words it also uses as verbs
    ("limit", "match"); and the -ing words it never puts after an article ("leveraging", "demonstrating", unlike
    "learning" or "sampling"): participles, which do not stand inside a title's noun phrase; and the words it puts after
    an article at all."""

    rarity: dict[str, float]
    verbs: frozenset[str]
    compounds: frozenset[tuple[str, str]]
    verbal: frozenset[str]
    participles: frozenset[str]
    nominal: frozenset[str]  # the words it puts after an article or a possessive ("the data")


@lru_cache(maxsize=1)
def _english() -> _English:
    """General-English statistics from the word lists symspellpy ships (see :class:`_English`)."""
    base = Path(str(files("symspellpy")))
    counts: dict[str, int] = {}
    with (base / "frequency_dictionary_en_82_765.txt").open(encoding="utf-8") as f:
        for line in f:
            word, _, count = line.partition(" ")
            counts[word] = int(count)
    total = sum(counts.values())
    rarity = {w: math.log(total / n) for w, n in counts.items()}
    before_verb, before_noun, before_participle = set(_VERB_BEFORE), set(_NOUN_BEFORE), set(_PARTICIPLE_BEFORE)
    verb_ctx: dict[str, int] = {}
    noun_ctx: dict[str, int] = {}
    participle_ctx: dict[str, int] = {}
    bigrams = base / "frequency_bigramdictionary_en_243_342.txt"
    with bigrams.open(encoding="utf-8") as f:
        for line in f:
            a, _, rest = line.partition(" ")
            b, _, n = rest.partition(" ")
            if a in before_verb:
                verb_ctx[b] = verb_ctx.get(b, 0) + int(n or 0)
            elif a in before_noun:
                noun_ctx[b] = noun_ctx.get(b, 0) + int(n or 0)
            if a in before_participle and b.endswith("ing"):
                participle_ctx[b] = participle_ctx.get(b, 0) + int(n or 0)
    verbs = frozenset(w for w, n in verb_ctx.items() if n > 2 * noun_ctx.get(w, 0))
    # words general English also uses as verbs ("limit", "lack", "match"): after a plural noun, a verb
    verbal = frozenset(w for w, n in verb_ctx.items() if n >= VERBAL_SHARE * noun_ctx.get(w, 0))
    with bigrams.open(encoding="utf-8") as f:  # (a second pass: keeping every pair took 40 MB)
        pairs = (line.split(" ", 2)[:2] for line in f)
        compounds = frozenset((a, b) for a, b in pairs if b in verbs and a not in STOPWORDS and not b.endswith("ed"))
    participles = frozenset(w for w, n in participle_ctx.items() if n and not noun_ctx.get(w) and w in counts)
    return _English(rarity, verbs, compounds, verbal, participles, frozenset(noun_ctx))


@lru_cache(maxsize=1)
def _common_in_papers() -> dict[str, float]:
    """The share of the bundled corpus's abstracts that use each (stemmed) word: how generic a word is in
    research abstracts ("model", "method", "information"), which general English does not tell."""
    from askpapers.vectorstore.resources import bundled_corpus

    docs: list[set[str]] = []
    for path in sorted(bundled_corpus().glob("*.txt")):
        for para in path.read_text(encoding="utf-8").split("\n\n"):
            if len(para) > 300:
                docs.append({stem(t) for t in tokens(para)})
    counts: dict[str, int] = {}
    for d in docs:
        for w in d:
            counts[w] = counts.get(w, 0) + 1
    return {w: n / len(docs) for w, n in counts.items()} if docs else {}


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


def _after_plural(word: str, prev: str, english: _English) -> bool:
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
    english = _english()
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
            if low in _VERB_BEFORE or low in {"which", "who", "that", "it", "also", "not"}:
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
    rarity = _english().rarity
    runs, objects = _runs(abstract[:_SCAN])
    attributive = _attributive(abstract[:_SCAN])
    common_share = _common_in_papers()
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


def _shorten(title: str, limit: int = MAX_TITLE) -> str:
    """At most ``limit`` characters: cut at the last space that keeps half of it, and mark the cut with "…"."""
    if len(title) <= limit:
        return title
    cut = title[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-") + "…"


def _fits(parts: list[str], limit: int = MAX_TITLE) -> bool:
    return len("".join(parts)) <= limit


def derive_title(abstract: str) -> str:
    """A display title for an abstract that has none (at most :data:`MAX_TITLE` characters).

    The method the abstract names, if any, followed by its best key phrase that shares no word with the name when
    the name is short ("WaterSIC: Possible covariance matrices of input activations"; a name of
    :data:`LONG_NAME` words or more says what the method is by itself); else its best key phrase, and the next one
    when that is short ("Expected information gain and intractable estimators"). Parts are whole phrases: one that
    does not fit is left out, never cut."""
    name = _named_method(abstract)
    phrases = key_phrases(abstract, DESCRIBING)  # (the best first: its first three are key_phrases(abstract))
    if name:
        own = set(content_stems(name))
        rest = [ph for ph in phrases if not set(content_stems(ph)) & own and len(content_stems(ph)) >= 2]
        if rest and len(re.sub(r"\s*\(.*\)$", "", name).split()) < LONG_NAME and _fits([name, ": ", rest[0]]):
            return f"{name}: {rest[0][:1].upper()}{rest[0][1:]}"
        return _shorten(name)
    if not phrases:
        return "Untitled abstract"
    parts = [phrases[0][:1].upper() + phrases[0][1:]]
    if len(phrases[0].split()) < _SHORT and len(phrases) > 1 and _fits([*parts, " and ", phrases[1]]):
        parts += [" and ", phrases[1]]
    return _shorten("".join(parts))


def unique_titles(titles: Iterable[tuple[str, str]], taken: set[str] | None = None) -> dict[str, str]:
    """Map each (key, title) to a title no other key has, adding a numeric suffix if needed."""
    used = set(taken or ())
    first_free: dict[str, int] = {}  # per title, the suffix to try first: all below it are used already
    out: dict[str, str] = {}
    for key, title in titles:  # (without the memo, n papers with one title took n² steps)
        n = first_free.get(title, 1)
        candidate = title if n == 1 else f"{title} ({n})"
        while candidate.lower() in used:
            n += 1
            candidate = f"{title} ({n})"
        first_free[title] = n + 1
        used.add(candidate.lower())
        out[key] = candidate
    return out


def checked_title(candidate: str, abstract: str) -> str | None:
    """``candidate`` (a model's title for ``abstract``) as a display title, or None when it is not one.

    It must be one short line of at most :data:`MAX_TITLE` characters, not end on a function word, and every
    content word of it must occur in the abstract: a title that names anything the abstract does not is rejected.
    """
    first = next((line for line in printable(candidate).splitlines() if line.strip()), "")
    title = one_line(first).strip(" \"'“”‘’*`").rstrip(" .;:,")
    words = title.split()
    if not 2 <= len(words) <= 16 or len(title) > MAX_TITLE:
        return None
    if words[-1].lower().strip("()") in FUNCTION_WORDS:
        return None
    said = set(content_stems(abstract))
    own = content_stems(title)
    if not own or any(s not in said for s in own):
        return None
    return title
