"""What a question asks besides its topic: the short list of request words people wrap a topic in, its tokens, the
misspelt words corrected, the acronyms it defines, the filters it states in words ("from 2024", "at ICML", "with
code") and its intent (a set of papers, a count, an overview, a fact about a named method).

The lists hold request words and cue words only, never topics: what is a topic is decided by the corpus
(:mod:`rag.read.query`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from askpapers.rag.read.lexicon import (
    Lexicon,
    english_words,
    past_participles,
    plural_noun,
    typo_distance,
    word_classes,
    zipf,
)
from askpapers.rag.read.lexicon import verb_lemmas as verb_lemmas  # (for parse, which imports no lexicon module)
from askpapers.rag.types import Intent
from askpapers.vectorstore.english import english_statistics
from askpapers.vectorstore.text import STOPWORDS
from askpapers.vectorstore.types import Filters

# -- the one short list of request words: what people wrap a topic in, never the topic itself ---------------------
REQUEST_WORDS = frozenset(
    """
    which what whats how papers paper works work studies study articles article publications publication research
    literature abstracts abstract results show list find give get got tell search look looking want need like love help
    reading suggestion suggestions submissions submission references preprints manuscripts
    interested know see me us i im ive id my our you your anyone anybody someone somebody please pls plz thanks thank
    thx ty cheers hi hello hey anything
    something everything stuff things thing ones good great nice cool interesting relevant notable important
    best top recent latest new newest current existing use uses using used utilize utilizes utilise utilises
    apply applies applying employ employs employing leverage leverages leveraging study studying investigate
    investigates investigating explore explores exploring examine examines examining address addresses addressing
    tackle tackles tackling propose proposes proposing introduce introduces introducing present presents
    presenting develop develops developing focus focuses focusing involve involves involving consider considers
    considering discuss discusses discussing mention mentions mentioning deal deals dealing concern concerns
    concerning regarding re related relating relate relates cover covers covering talk talks talking centered
    centred topic topics area areas field fields subject theme themes idea ideas notion concept approach approaches
    method methods technique techniques there exist exists available corpus collection currently kind kinds type
    types sort sorts can could would should does do did is are was were be been any some all every but also
    among amongst however especially particularly specifically mainly build builds building built rely relies
    relying extend extends extending employ adopt adopts adopting utilizing
    hmm hm hmmm umm um uh uhm erm er ah oh wanna ok okay alright yo now
    """.split()  # noqa: SIM905
)  # (the last line: interjections, "hmm, X... any papers?", which a comma had made an alternative of X)
LINKS = frozenset(
    {
        "for", "in", "with", "on", "to", "via", "of", "under", "across", "into", "towards", "toward", "against", "over",
        "through", "within", "from", "by",
        # more prepositions of English, a closed class ("the key ideas *behind* X", "fairness *among* clients"; not
        # those that set the next words apart, "beyond", "besides", "despite": "X beyond images" is no X of images)
        "behind", "among", "amongst", "during", "amid", "amidst", "throughout", "beside", "alongside", "upon", "around",
    }
)  # fmt: skip
# the noun of a preposition of several words, "in the *context* of", "in *terms* of", "with *respect* to", "for the
# *task* of": the whole links as its first word does (a closed class of English; "context" had gated as a topic)
PREPOSITION_NOUNS = frozenset(
    {"context", "contexts", "field", "area", "domain", "realm", "setting", "settings", "case", "scope", "terms",
     "means", "respect", "regard", "basis", "light", "presence", "form", "purpose", "task", "problem", "framework",
     "lens", "perspective", "viewpoint", "standpoint"}
)  # fmt: skip
# a link and a noun that say how, not what, when no topic word follows ("discuss X *at length*", "*in detail*")
ADVERBIAL_PHRASES = frozenset(
    {("at", "length"), ("in", "detail"), ("in", "depth"), ("in", "general"), ("in", "particular"), ("at", "all"),
     ("in", "full"), ("in", "short"), ("in", "brief"), ("at", "least")}
)  # fmt: skip
# a link that joins the unit before it to the topic after it as a relation, not a second topic ("the applications *of*
# X", "alternatives *to* X", "the ideas *behind* X")
RELATION_LINKS = frozenset({"of", "to", "behind"})
# "applied to", "X using Y", "where X meets Y"
LINK_VERBS = frozenset({"applied", "combined", "based", "centric", "using", "use", "uses", "meets", "meet"})
# second parts of hyphenated modifiers that relate the first part rather than name a topic ("language-guided")
RELATIONAL = frozenset(
    {
        "guided", "based", "driven", "aware", "conditioned", "augmented", "enhanced", "informed", "specific",
        "dependent", "agnostic", "free", "centric", "oriented", "level",
    }
)  # fmt: skip
# … of which these are participles: "navigation guided by language" is "language-guided navigation"
RELATIONAL_VERBS = frozenset({"guided", "driven", "conditioned", "augmented", "enhanced", "informed"})
OR_WORDS = frozenset({"or", "and/or", "either", "nor"})
NOT_WORDS = frozenset({"not", "without", "excluding", "exclude", "except", "excluded", "non", "no"})
# "X does not affect Y", "X has no effect": a negated statement about a topic, not an exclusion
AUXILIARIES = frozenset(
    {"do", "does", "did", "is", "are", "was", "were", "has", "have", "had", "can", "could", "will", "would", "may",
     "might", "should"}
)  # fmt: skip
RELATIVES = frozenset({"that", "which", "who"})
BOTH_CUES = frozenset(
    {
        "both", "combine", "combines", "combining", "combined", "together", "jointly", "plus",
        # words that put two topics in relation ("at the intersection of X and Y", "papers that connect X and Y")
        "intersection", "intersections", "interplay", "connect", "connects", "connecting", "bridging",
        "integrating", "combination", "combinations",
    }
)  # fmt: skip
# after "and", a possessive that points back at the topic before it: "LLMs and their reasoning" is the reasoning of
# LLMs (both must hold), not LLMs or reasoning
POINTING_BACK = frozenset({"their", "its"})
ANAPHORA = frozenset({"those", "these", "them", "ones", "above", "aforementioned", "previous", "latter", "former"})
# a conjunction that opens a clause of its own ("…, if any", "unless you have them"): the topic ends before it
SUBORDINATORS = frozenset({"if", "unless", "whether", "because", "although", "though"})
# a particle of a phrasal verb ("get *up* to speed", "catch *up* on", "figure *out*"): it never heads a term, so
# "X to Y" is not read as the term "Y X" when X is one ("up to speed" is not "speed up")
PARTICLES = frozenset({"up", "down", "out", "off", "away", "back", "along"})
# words after a link and "their" that name a part of the papers asked for ("at their *core*", "in their *abstract*")
THEIR_WORDS = 2
DEMONSTRATIVES = frozenset({"this", "these", "those"})  # ("that" is as often a relative pronoun: "papers that use X")
# what a verb acts on when it acts on the previous answer ("Narrow *it* down to X", "Filter *them* by X", "Can you
# cut *that* down to X?"): a pronoun, an object of the verb (see `parse.points_back` and `_imperative`)
POINTERS = frozenset({"it", "that", "this", "them", "those", "these"})
# a noun for the previous answer, and what follows the answer a verb narrows ("trim *the list* to X")
ANSWER_NOUNS = frozenset({"list", "results", "answer", "answers", "selection", "set"})
# a word that points at the previous answer before a noun for it ("From *that list*, …", "In *your answer*, …"; not
# "the", "Give me the list of papers on X"), the nouns that may follow it, and the adverbs between "the papers you"
# and the verb that gave them ("Among the papers you *just* listed, …")
ANSWER_POINTERS = frozenset({"that", "this", "your", "our"})
POINTED_NOUNS = ANSWER_NOUNS - {"selection", "set"} | {"reply", "response"}  # ("in this set" may be the corpus)
GIVEN_ADVERBS = frozenset({"just", "already", "previously", "earlier"})
NARROWING = frozenset({"to", "down"})
COUNT_CUES = (("how", "many"), ("number", "of"), ("count",))
# what may follow a count cue whose object is left out ("how many *in total*?", "how many *altogether*")
COUNT_TAILS = frozenset({"total", "altogether", "overall", "roughly", "approximately", "exactly", "here", "so", "far"})
OVERVIEW_WORDS = {
    "summarise": "summary", "summarize": "summary", "summary": "summary", "summaries": "summary",
    "summarising": "summary", "summarizing": "summary", "overview": "summary", "overviews": "summary",
    "recap": "summary", "survey": "summary", "landscape": "summary", "takeaways": "summary", "rundown": "summary",
    "gist": "summary", "trends": "new",
    "compare": "compare", "comparing": "compare", "comparison": "compare", "contrast": "compare",
}  # fmt: skip
OVERVIEW_PAIRS = {
    ("whats", "new"): "new", ("anything", "new"): "new", ("recent", "advances"): "new",
    ("recent", "progress"): "new", ("recent", "developments"): "new", ("recent", "work"): "new",
    ("main", "approaches"): "compare", ("different", "approaches"): "compare", ("various", "approaches"): "compare",
    ("key", "approaches"): "compare", ("main", "methods"): "compare", ("different", "methods"): "compare",
    ("main", "ideas"): "compare", ("main", "directions"): "compare",
    ("key", "takeaways"): "summary", ("main", "takeaways"): "summary",
}  # fmt: skip
GENERIC_HEADS = frozenset(
    """attacks attack methods method approaches approach techniques technique algorithms algorithm frameworks framework
    systems principle principles paradigm paradigms problem problems setting settings task tasks""".split()  # noqa: SIM905
)
# heads that add nothing to the name before them ("MoE models" is MoE) …
NAME_HEADS = frozenset({"models", "model", "architectures", "architecture", "networks", "network"})
# … and the heads a model's name may also go without ("diffusion policies", "LLM agents")
MODEL_HEADS = NAME_HEADS | frozenset({"reasoning", "policies", "policy", "agents", "agent"})
# head nouns that name a kind of work: in "backdoor attacks or defenses" the defenses are backdoor defenses
WORK_HEADS = GENERIC_HEADS | frozenset(
    """defenses defense defences defence detection prediction estimation generation analysis mitigation verification
    evaluation training inference learning models benchmarks datasets applications""".split()  # noqa: SIM905
)
CODE_WORDS = frozenset({"code", "github", "implementation", "implementations"})
CODE_CUES = frozenset({"with", "has", "have", "having", "providing", "provide", "release", "released", "releasing",
                       "public", "open", "source", "open-source", "available", "their", "its", "shared"})  # fmt: skip
QUESTION_STARTS = frozenset(
    {
        "what", "which", "how", "does", "do", "did", "is", "are", "was", "were", "can", "could", "why", "when", "where",
        "whats",
    }
)  # fmt: skip
REQUEST_NOUNS = frozenset(
    ["papers", "paper", "works", "studies", "articles", "publications", "research", "literature", "abstracts",
     "submissions", "submission", "references", "preprints", "manuscripts"]
)  # fmt: skip

MAX_ACRONYM = 8  # letters of a lower-case acronym in brackets ("mixture-of-experts (moe)")
TOKEN = re.compile(r"[^\W_]+(?:[-\u2010\u2011'’][^\W_]+)*|[,;/()\[\]?!.:\u2013\u2014]|(?<=\s)[-+&](?=\s)")
# (each branch starts where a word starts, so searching long text stays linear; it is used with fullmatch). A dash,
# or a hyphen with a space on both sides, ends the topic before it: "diffusion models — what's been done?"
_NAME = re.compile(r"(?<![\w-])(?:[A-Za-z]*[a-z][A-Z][\w-]*|[A-Z]{2,}[\w-]*|[A-Za-z]+-[A-Z0-9][\w-]*|\w*\d\w*)")


@dataclass
class Tok:
    text: str  # as typed (after correction)
    low: str
    word: bool
    protected: int = -1  # index of the acronym definition this token belongs to
    # in a request, a participle between a topic and a topic word, hyphenated or not ("learning-*enabled* robotic
    # manipulation", "learning *enabled* robotic manipulation": resolve.unhyphenated): it relates the two
    relates: bool = False
    owner: bool = False  # a possessive "'s" was dropped from it ("imitation learning*'s* impact on manipulation")


def tokens(text: str) -> list[Tok]:
    out = []
    for m in TOKEN.finditer(text):
        t = m.group(0).replace("’", "'")
        low = t.lower()
        # (a plural's possessive is the apostrophe after it: "transformers' impact on X")
        possessive = low.endswith("s") and text[m.end() : m.end() + 1] in ("'", "’")
        if "'" in low:  # contractions read as one word ("what's" → "whats", "I'm" → "im"), possessives dropped
            possessive = low.endswith("'s") and low[:-2] not in ("what", "that", "there", "it")
            low = low[:-2] if possessive else low.replace("'", "")
            t = t[:-2] if possessive else t  # (as shown too: "imitation learning's impact" asks for imitation learning)
        out.append(Tok(t, low, t[0].isalnum(), owner=possessive))
    return _shorthand(out)


# Chat shorthand typed in lower case, read as the words it stands for (a closed class of English): "do u have anything
# *abt* X" had read "abt", which no paper states, as a facet that must hold, and cited nothing.
SHORTHAND = {
    "abt": ("about",), "bout": ("about",), "u": ("you",), "ur": ("your",), "thx": ("thanks",), "thnx": ("thanks",),
    "tnx": ("thanks",), "ta": ("thanks",), "wrt": ("with", "respect", "to"), "tho": ("though",), "smth": ("something",),
    "sth": ("something",), "ppl": ("people",), "cuz": ("because",), "coz": ("because",),
}  # fmt: skip
SLASHED = {("w", "o"): "without", ("b", "c"): "because"}  # (and "w/" alone: "with")


def _shorthand(toks: list[Tok]) -> list[Tok]:
    """ "w/" read as "with", "w/o" as "without" and "b/c" as "because" (chat shorthand: "papers w/ X" had read "w" as
    an alternative of X), and each word of :data:`SHORTHAND` typed in lower case as the words it stands for."""
    out: list[Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if i + 1 < len(toks) and toks[i + 1].text == "/":
            after = toks[i + 2].low if i + 2 < len(toks) else ""
            if (word := SLASHED.get((t.low, after))) is not None:  # ("w/o", "b/c")
                out.append(Tok(word, word, True))
                i += 3
                continue
            if t.low == "w":  # ("w/")
                out.append(Tok("with", "with", True))
                i += 2
                continue
        if t.text in SHORTHAND:
            out += [Tok(w, w, True) for w in SHORTHAND[t.text]]
            i += 1
            continue
        out.append(t)
        i += 1
    return out


def is_acronym(token: str) -> bool:
    """One word with two capitals or more ("LLMs", "NeRF", "GANs", "RL")."""
    return " " not in token.strip() and sum(c.isupper() for c in token) >= 2


def is_name(token: str) -> bool:
    """A coined name ("WaterSIC", "GEM-FI", "GPT-4", "NeRF"): never corrected, and a sign of a factoid question."""
    return bool(_NAME.fullmatch(token)) and len(token) > 2


SLIP_LETTERS = 6  # a slip of the corpus is read as one only in a word this long …
SLIP_PAPERS = 2  # … that at most this many papers use …
SLIP_ZIPF = 2.0  # … rarer than this in general English …
SLIP_RATIO = 10  # … when a swap of two neighbouring letters gives a word this many times as common


def correct(toks: list[Tok], lexicon: Lexicon) -> list[tuple[str, str]]:
    """Misspelt words replaced by the known word they most likely mean (names and known words never change, but
    for the corpus's own slips: :func:`_slip`), and two words typed as one by the two (:func:`_run_together`:
    ``toks`` gains a token). Each fix as (typed, read)."""
    fixes = []
    out: list[Tok] = []
    for t in toks:
        out.append(t)
        if not t.word or not t.low.isalpha() or len(t.low) < 4 or is_name(t.text):
            continue
        if lexicon.known(t.low):
            if right := _slip(t.low, lexicon):
                fixes.append((t.text, right))
                t.text = t.low = right
            continue
        right = lexicon.correct(t.low)
        if apart := _run_together(t.low, right, lexicon):  # (two words: read as typed with the space)
            fixes.append((t.text, " ".join(apart)))
            out[-1:] = [Tok(w, w, True) for w in apart]
            continue
        if right and right != t.low:
            fixes.append((t.text, right))
            t.text = t.low = right
    toks[:] = out
    return fixes


JOINED_PART = 2  # letters of each word of two typed as one, at least ("humanai" is "human ai")


def _run_together(word: str, right: str | None, lexicon: Lexicon) -> tuple[str, str] | None:
    """Two words typed as one, the space left out ("longterm dependencies", "humanai interaction"): of the ways to
    cut an unknown word into two known words that are not stop-words, the one whose phrase most papers state (None
    when no paper states any). A missing space is one edit: the nearest misspelt word ``right``
    (:meth:`Lexicon.correct`) is read instead when fewer edits away, or as few and stated by more papers
    ("faithfullness" is "faithfulness", not "faith fullness"). Edit distance alone had read "longterm" as "longer"."""
    cuts = [(word[:i], word[i:]) for i in range(JOINED_PART, len(word) - JOINED_PART + 1)]
    said = {(a, b): lexicon.written_df(f"{a} {b}") for a, b in cuts
            if a not in STOPWORDS and b not in STOPWORDS and lexicon.known(a) and lexicon.known(b)}  # fmt: skip
    best = max(said, key=lambda c: (said[c], c), default=None)
    if best is None or said[best] == 0:
        return None
    if right and typo_distance(word, right) == 1 and lexicon.df(right) >= said[best]:
        return None
    return best


SLIP_PHRASE_PAPERS = 3  # a phrase a known word is read as a slip in is stated by this many papers at least
SLIP_TRIED = 8  # the words one edit away tried in it, most used first


def phrase_slips(toks: list[Tok], lexicon: Lexicon) -> list[tuple[str, str]]:
    """A real word typed for another in a phrase ("pont cloud" for "point cloud"; "pont" is English, so no spelling
    check finds it): of two content words in a row that no paper writes together, one that at most
    :data:`SLIP_PAPERS` papers use is read as the word one edit away (of the :data:`SLIP_TRIED` most used) that
    makes a phrase :data:`SLIP_PHRASE_PAPERS` papers write, or more; the one most write. Names, acronyms and request
    words are left as typed. (For a request: a claim's rare words are its terms.)"""
    fixes = []
    for i in range(len(toks) - 1):
        pair = toks[i : i + 2]
        if not all(_plain_word(t) for t in pair) or lexicon.written_df(f"{pair[0].low} {pair[1].low}") > 0:
            continue
        best: tuple[int, int, str] | None = None
        for k, t in enumerate(pair):
            if lexicon.df(t.low) > SLIP_PAPERS:
                continue
            for near in lexicon.near_words(t.low)[:SLIP_TRIED]:
                phrase = " ".join(near if j == k else u.low for j, u in enumerate(pair))
                n = lexicon.written_df(phrase)
                if n >= SLIP_PHRASE_PAPERS and (best is None or n > best[0]):
                    best = (n, k, near)
        if best is not None:
            t = pair[best[1]]
            fixes.append((t.text, best[2]))
            t.text = t.low = best[2]
    return fixes


def _plain_word(t: Tok) -> bool:
    """A word of letters, four or more, lower case as typed, and no stop-word or request word."""
    return (t.word and t.text.isalpha() and t.text.islower() and len(t.low) >= 4 and t.protected < 0
            and t.low not in STOPWORDS and t.low not in REQUEST_WORDS)  # fmt: skip


def _slip(word: str, lexicon: Lexicon) -> str | None:
    """The word a known word is a slip of, the same slip in the corpus ("estiamtion", which one abstract of 3,621
    also has): a word of :data:`SLIP_LETTERS` letters or more that at most :data:`SLIP_PAPERS` papers use, that is
    rare in English (Zipf below :data:`SLIP_ZIPF`, so "summarise" stays) and that two neighbouring letters swapped
    turn into a word :data:`SLIP_RATIO` times as common in the corpus. Short words are left (lower-case acronyms:
    "odes", "smoe")."""
    if len(word) < SLIP_LETTERS or word in english_words() or zipf(word) >= SLIP_ZIPF:
        return None
    n = lexicon.df(word)
    if not 0 < n <= SLIP_PAPERS:
        return None
    swaps = [word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1) if word[i] != word[i + 1]]
    counts = {w: lexicon.df(w) for w in dict.fromkeys(swaps)}
    best = max(counts, key=lambda w: (counts[w], w), default="")
    return best if best and counts[best] >= SLIP_RATIO * n else None


def _initials(words: list[str]) -> tuple[str, str]:
    """Initials of the content words (hyphen parts counted), and of every word: "mixture-of-experts" → "moe"."""
    content = "".join(part[0] for w in words if w not in STOPWORDS for part in w.split("-") if part)
    every = "".join(part[0] for w in words for part in w.split("-") if part)
    return content, every


def _abbreviates(acro: str, initials: str) -> bool:
    """A lower-case acronym that spells the initials in order, from the first ("nerf" for "neural radiance
    fields"), and is at most twice as long."""
    if len(initials) < 2 or acro[0] != initials[0] or len(acro) > 2 * len(initials):
        return False
    letters = iter(acro)
    return all(ch in letters for ch in initials)


def protect_acronyms(toks: list[Tok]) -> dict[int, str]:
    """Mark the words of each long form the question defines ("reinforcement learning from human feedback (RLHF)",
    "mixture-of-experts (MoE)") as one unit; returns the acronym of each definition."""
    acronyms: dict[int, str] = {}
    for i in range(1, len(toks) - 2):
        inside = toks[i + 1].text
        maybe = is_name(inside) or (inside.isalpha() and 2 <= len(inside) <= MAX_ACRONYM)  # "(MoE)", "(moe)"
        if toks[i].text != "(" or toks[i + 2].text != ")" or not maybe:
            continue
        acro = toks[i + 1].text.removesuffix("s")
        wanted = {acro.lower(), "".join(c for c in acro if c.isupper()).lower()}
        for n in range(1, min(8, i) + 1):
            tail = toks[i - n : i]
            if not all(t.word for t in tail) or tail[0].low in STOPWORDS:
                continue
            initials = set(_initials([t.low for t in tail]))
            if wanted & initials or (acro.islower() and any(_abbreviates(acro, x) for x in initials)):
                for t in tail:
                    t.protected = i
                acronyms[i] = toks[i + 1].text
                break
    return acronyms


def stated_filters(toks: list[Tok], lexicon: Lexicon) -> tuple[Filters, set[int]]:
    """Filters stated in words, and the token positions they used."""
    used: set[int] = set()
    venue = year = None
    lows = [t.low for t in toks]
    for v in sorted(lexicon.venues(), key=len, reverse=True):  # a venue of the corpus, named with or without year
        words = v.lower().split()
        for n in (len(words), 1):
            span = words[:n]
            for i in range(len(lows) - n + 1):
                if lows[i : i + n] == span and not used & set(range(i, i + n)):
                    same_name = [x for x in lexicon.venues() if x.lower().split()[0] == span[0]]
                    if n == len(words) or len(same_name) == 1:
                        venue = v
                        used |= set(range(i, i + n))
                        if i and lows[i - 1] in ("at", "in", "from"):
                            used.add(i - 1)
        if venue:
            break
    for i, t in enumerate(toks):
        if i not in used and t.low.isdigit() and len(t.low) == 4 and 1950 <= int(t.low) <= 2099:
            year = int(t.low)
            used.add(i)
            if i and lows[i - 1] in ("from", "in", "since", "of", "published"):
                used.add(i - 1)
    has_code = None
    for i, t in enumerate(toks):
        if t.low in CODE_WORDS and i > 0 and lows[i - 1] in CODE_CUES:
            nxt = next((x for x in toks[i + 1 :] if x.word), None)
            if nxt is None or nxt.low in REQUEST_WORDS or nxt.low in STOPWORDS or nxt.low in ("available", "released"):
                has_code = True
                j = i
                while j > 0 and lows[j - 1] in CODE_CUES | {"that", "which", "a", "the"}:
                    j -= 1
                used |= set(range(j, i + 1))
    return Filters(venue=venue, year=year, has_code=has_code), used


# Words that say who asks or how politely: a question holding one is a request, not a statement.
ASKERS = frozenset(
    """
    i im ive id me my we our us you your anyone anybody someone please pls plz thanks thank thx cheers hi hello hey
    """.split()  # noqa: SIM905
)


# What a request asks for, beside the request nouns ("Background reading on X", "Surface the work done on X",
# "pointers to X"), and "what" anywhere ("ok what about X"): a statement rarely holds one (none of SciFact's 809
# claims does).
WANTS = frozenset({"work", "reading", "readings", "references", "pointers", "what", "whats"})


# The subject a request asks with, after an auxiliary (`AUXILIARIES`: "*Could you* identify …", "*Has anyone* worked
# on …"), and a subject with its auxiliary in a statement ("*I'm* researching …", "*we are* exploring …"): the first
# word past `BEFORE_VERB` words and adverbs is the verb of the request (`asked_verbs`).
ASKED = frozenset({"you", "u", "ya", "i", "anyone", "anybody", "someone", "somebody"})
SUBJECT_AUXILIARIES = frozenset(
    {("im",), ("ive",), ("weve",), ("id",), ("i", "am"), ("we", "are"), ("i", "was")}
)  # (I'm, I've, we've, I'd, as one token once normalised)
OPENERS = frozenset({"so", "and", "but", "then", "now", "also", "anyway"})  # words a clause may open with
BEFORE_VERB = frozenset(
    {"please", "pls", "plz", "also", "just", "maybe", "perhaps", "here", "else", "ever", "really", "been"}
)
# A wish followed by "to" and a verb ("I want to *learn* X", "I'd like to *understand* X", "trying to *catch* up on
# X"): the verb says what the asker will do, not what the papers are about (`asked_verbs`); "wanna" holds its "to".
# (not "planning": "applies planning to autonomous driving" names a topic before "to")
WISHES = frozenset({"want", "wants", "wanted", "need", "needs", "like", "love", "trying", "try", "hoping", "hope",
                    "wish", "wanna"})  # fmt: skip
# A request passed on, or a wish for someone else, with its object before "to" ("my advisor *asked me to collect*
# papers on X", "I'd like *you to* find X"): the verb after "to" is set aside as after a wish (`asked_verbs`).
DIRECTIVES = frozenset({"asked", "asks", "told", "tells", "expects", "expected", "requested"})
OBJECTS = frozenset({"me", "us", "you", "him", "her", "them"})
ADVERB_BASE = 3.0  # Zipf frequency of an adverb's base in English (about once per million words)


def topic_word(t: Tok | None) -> bool:
    """A word that may be part of a topic: a word, neither a request word nor a stop-word."""
    return t is not None and t.word and t.low not in REQUEST_WORDS and t.low not in STOPWORDS


def verb_form(word: str) -> bool:
    """Whether the dictionary knows a (lower-case) word as a form of a verb ("exploit", "harnesses", "analyzed"),
    whatever else it knows it as (:func:`~rag.read.lexicon.word_classes`)."""
    return "VERB" in word_classes(word)


def adjective(word: str) -> bool:
    """Whether the dictionary knows a (lower-case) word as an adjective, whatever else it knows it as ("possible",
    "available", "robust")."""
    return "ADJ" in word_classes(word)


def noun_form(word: str) -> bool:
    """Whether the dictionary knows a (lower-case) word as a noun, whatever else it knows it as ("learning",
    "planning"; not "targeting", "improving")."""
    return "NOUN" in word_classes(word)


def said_as_verb(word: str) -> bool:
    """Whether general English says a (lower-case) word as a verb at least now and then: after "to", "we", "it" or a
    modal a tenth as often as after an article (:class:`~vectorstore.english.English`'s ``verbal``: "helps",
    "improves", "enables"; not "networks", "models" or "attacks")."""
    return word in english_statistics().verbal


def said_as_noun(word: str) -> bool:
    """Whether general English puts a (lower-case) word after an article or a possessive at all
    (:class:`~vectorstore.english.English`'s ``nominal``: "the planning", "the learning"; never "the solving")."""
    return word in english_statistics().nominal


def bare_verb(word: str) -> bool:
    """Whether a (lower-case) word is the base form of a verb the dictionary knows as nothing else ("improve",
    "reduce"; not "federated", an adjective in use, nor "train", also a noun)."""
    return word_classes(word) == {"VERB"} and word in verb_lemmas(word)


def participle(word: str, irregular: bool = False) -> bool:
    """Whether a (lower-case) word is the past participle of a verb the dictionary knows ("powered", "inspired"): the
    "-ed" form of a verb; with ``irregular``, also one the dictionary inflects otherwise ("put", "made", "driven")."""
    if word.endswith("ed"):
        return verb_form(word)
    return irregular and any(word in past_participles(lemma) for lemma in verb_lemmas(word))


def adverb(word: str) -> bool:
    """Whether a word is an adverb made from an English word ("ideally", "preferably", "quickly", "basically"): its
    base, without the "-ly", is a word of general English (``wordfreq``, bundled data)."""
    if len(word) < 6 or not word.endswith("ly"):
        return False
    bases = [word[:-2], word[:-3] + "y"]
    if word.endswith(("ably", "ibly")):
        bases.append(word[:-1] + "e")
    if word.endswith("ally"):
        bases.append(word[:-4])
    return any(zipf(b) >= ADVERB_BASE for b in bases if len(b) > 2)


# words that start a noun phrase and follow no topic noun in a question: after a question's first word, they make
# it a verb ("this", "these", "any", "all" are left out: "Quantization these days?", "Pruning any good?")
DETERMINERS = frozenset({"the", "a", "an", "some", "my", "our", "your", "me", "us"})


def asked_verbs(toks: list[Tok]) -> set[int]:
    """The positions of the verb a request asks with, of its subject, of the adverbs between them and of a particle
    after it ("Could you *identify* papers on X", "Has anyone here *worked* on X", "Can you *dig up* …"): in
    English the first word after an auxiliary and its subject, or after a subject and its auxiliary ("I'm
    *researching* X", "we are *exploring* X"), past "please", "here", "been" or an adverb, is the verb of the
    clause, so it is never a topic; a request word or a stop-word there is left as it is ("Do you *have* GAN
    papers?")."""
    out: set[int] = set()
    for i in range(len(toks) - 1):
        asks = i > 0 and toks[i].low in ASKED and toks[i - 1].low in AUXILIARIES  # "could you", "has anyone"
        tells = (toks[i].low,) in SUBJECT_AUXILIARIES or (
            i > 0 and (toks[i - 1].low, toks[i].low) in SUBJECT_AUXILIARIES
        )
        wanna = toks[i].low == "wanna"
        to = i + 2 if toks[i + 1].low in OBJECTS else i + 1  # ("asked *me* to", "like *you* to")
        if (wanna and toks[i].low in WISHES) or (
            toks[i].low in WISHES | DIRECTIVES and to < len(toks) and toks[to].low == "to"
        ):
            # the verb after "want to", "asked me to": the wish, its object and "to" are request words or stop-words
            # already, or only rank (a directive)
            out |= _verb(toks, i + 1 if wanna else to + 1)[1]
        elif asks or tells:
            j, verb = _verb(toks, i + 1)
            if verb:  # (the subject and the adverbs too: "anyone" is who asks)
                out |= set(range(i, j)) | verb
        else:
            out |= _imperative(toks, i)
    return out


def _verb(toks: list[Tok], j: int) -> tuple[int, set[int]]:
    """The verb of a clause from position ``j`` on, past `BEFORE_VERB` words and adverbs: its position, and those of
    it and of a particle after it ("dig *up*", "cut that *down*"); none when the word there is a request word or a
    stop-word (the verb itself, whose topic stays: "Do you *have* GAN papers?")."""
    while j < len(toks) and (toks[j].low in BEFORE_VERB or adverb(toks[j].low)):
        j += 1
    if not (j < len(toks) and toks[j].word and toks[j].low not in STOPWORDS and toks[j].low not in REQUEST_WORDS):
        return j, set()
    if j + 1 < len(toks) and toks[j + 1].low in PARTICLES:
        return j, {j, j + 1}
    after = j + 1 + answer_object(toks, j + 1)
    if after > j + 1 and after < len(toks) and toks[after].low in PARTICLES:
        return j, {j, after}  # ("Can you cut that *down* to X?")
    return j, {j}


def loose_adverbs(toks: list[Tok]) -> set[int]:
    """The positions of adverbs before no topic word (the end, punctuation, a stop-word or a request word): in a
    request they say when or how ("written about X *recently*?", "X, *preferably*"), and no term ends in one (one
    may start with it: "weakly supervised")."""
    out = set()
    for i, t in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if adverb(t.low) and not topic_word(nxt):
            out.add(i)
    return out


# a possessive or an indefinite article after "for" or "before": the asker's purpose ("for *my* thesis")
PURPOSE_STARTS = frozenset({"my", "our", "your", "a", "an"})


def purposes(toks: list[Tok]) -> set[int]:
    """The positions of a purpose clause after the topic, up to the next punctuation: "for" or "before" followed
    by a possessive or an indefinite article ("X *for a grant proposal*", "X *for my thesis*", "X *before my
    meeting tomorrow*"), or "to" after a comma ("X*, to get up to speed*"). The topic names what the papers are
    about, the purpose what the asker will do with them; a topic joined by "for" takes no article ("RL for robotic
    manipulation"), nor one joined by "to" a comma ("sim to real"). ("LLMs *as a* judge" is a topic.)"""
    out: set[int] = set()
    topic = False
    i = 0
    while i < len(toks):
        t = toks[i]
        if topic_word(t):
            topic = True
        after_comma = i > 0 and toks[i - 1].text == ","  # ("X, to get up to speed")
        if (topic and i + 1 < len(toks) and toks[i + 1].word
                and ((t.low in ("for", "before") and toks[i + 1].low in PURPOSE_STARTS)
                     or (t.low == "to" and after_comma))):  # fmt: skip
            j = i
            while j < len(toks) and toks[j].word:
                out.add(j)
                j += 1
            i = j
            continue
        i += 1
    return out


# Verbs that arrange an answer ("sorted *by* relevance", "ranked by year", "grouped by approach"): what follows "by" is
# the order asked for, not a topic (a closed class of English verbs, in any form)
ARRANGING = frozenset({"sort", "rank", "order", "group", "arrange", "organize", "organise"})
ARRANGED_WORDS = 3  # the words after "by" that name the order, at most


def arrangements(toks: list[Tok]) -> set[int]:
    """The positions of an order asked for: a verb of :data:`ARRANGING`, as a participle ("List papers on X*, sorted
    by relevance*"; "relevance" had gated as a topic, weighed 0.56, and 1 or 2 papers were cited) or opening a clause
    ("*Sort by year*"; not "learning to rank by …"), "by" and up to :data:`ARRANGED_WORDS` words after it, to the next
    punctuation."""
    out: set[int] = set()
    for i, t in enumerate(toks[:-2]):
        if not (t.word and toks[i + 1].low == "by" and ARRANGING & set(verb_lemmas(t.low))):
            continue
        if not (participle(t.low) or (starts_clause(toks, i, after_asker=False) and t.low in verb_lemmas(t.low))):
            continue
        j = i + 2
        while j < len(toks) and j < i + 2 + ARRANGED_WORDS and toks[j].word:
            j += 1
        out.update(range(i, j))
    return out


# Words that thank, opening a clause of thanks: the rest of that clause is about the exchange, never the papers
# ("Thanks *in advance*", "thank you so much for *your time*", "cheers *for the help*"); "thanks to X" is "owing to"
THANKING = frozenset({"thanks", "thank", "ty", "cheers", "appreciated"})
THANKS_LEADS = frozenset({"many", "much", "i", "id", "we"})  # ("*Many* thanks", "*much* appreciated", "*I* thank you")


def thanking(toks: list[Tok]) -> set[int]:
    """The positions of a clause of thanks: from a word of :data:`THANKING` (or "appreciate it") that opens a clause,
    or follows a word of :data:`THANKS_LEADS` ("Many thanks for …", "much appreciated", "I thank you"), to the next
    punctuation. Not "thanks to" (a cause), nor a clause that names what it asks for ("thanks for any papers on X": a
    request noun or "work")."""
    out: set[int] = set()
    lows = [t.low for t in toks]
    for i, t in enumerate(toks):
        thanks = t.low in THANKING or (t.low == "appreciate" and i + 1 < len(toks) and lows[i + 1] == "it")
        if not (t.word and thanks):
            continue
        led = i > 0 and lows[i - 1] in THANKS_LEADS
        if not (starts_clause(toks, i, after_asker=False) or led):
            continue
        j = i + 1
        while j < len(toks) and toks[j].word:
            j += 1
        clause = lows[i + 1 : j]
        if clause[:1] == ["to"] or set(clause) & (REQUEST_NOUNS | WANTS):
            continue
        out.update(range(i - led, j))
    return out


def _imperative(toks: list[Tok], i: int) -> set[int]:
    """A phrasal verb that opens a clause and asks ("*Point out* the research on X", "Please *dig up* papers on
    X", "Look up X"): a word and a particle where a clause starts (the question's start, punctuation, or
    "please"), followed by a stop-word or a request word unless the word is a request word itself. A term does not
    start so ("scale up transformers" is left as it is). So does a word where a clause starts when a determiner or an
    object pronoun follows it ("*Gather* the literature on X", "*Surface* the work on X"): no topic of English
    opens with a noun and "the"."""
    starts = starts_clause(toks, i, after_asker=False)  # (after "can you" the verb is `asked_verbs`' own)
    acted = answer_object(toks, i + 1)
    if starts and acted and toks[i].word and _plain_verb(toks[i]) and toks[i].low not in REQUEST_WORDS:
        # "*Filter* them by X", "*Narrow* it *down* to X", "*Cut* the list *down* to X": a verb that acts on the
        # previous answer, and its particle
        particle = i + 1 + acted
        return {i, particle} if particle < len(toks) and toks[particle].low in PARTICLES else {i}
    if starts and toks[i].word and toks[i + 1].low in DETERMINERS and _plain_verb(toks[i]):
        return {i}  # "*Gather* the literature on X", "*Recommend* some reading on X"
    if not (starts and toks[i].word and toks[i + 1].low in PARTICLES):
        return set()
    after = toks[i + 2] if i + 2 < len(toks) else None
    asks = toks[i].low in REQUEST_WORDS  # ("*Look up* X", "*Find out* about X": the verb asks already)
    if asks or not topic_word(after):
        return {i, i + 1}
    return set()


def answer_object(toks: list[Tok], j: int) -> int:
    """How many tokens from ``j`` on name the previous answer as what the verb before them acts on (0: none): a
    `POINTERS` pronoun with a particle or a link after it ("narrow *it* down", "filter *them* by X"; not a word it is
    the subject of or points at, "show that *diffusion* helps", "this *paper*", nor the end of the question, "…,
    appreciate it"), or a noun for the answer after a determiner or a pronoun, with "to" or "down" after it ("trim
    *the list* to X", "cut *that list* down to X"; not "compare the approaches to X", which asks)."""
    if j + 1 < len(toks) and toks[j].low in POINTERS and (toks[j + 1].low in PARTICLES or toks[j + 1].low in LINKS):
        return 1
    noun = (
        j + 2 < len(toks)
        and (toks[j].low in DETERMINERS or toks[j].low in POINTERS)
        and toks[j + 1].low in ANSWER_NOUNS
        and toks[j + 2].low in NARROWING
    )
    return 2 if noun else 0


def starts_clause(toks: list[Tok], i: int, after_asker: bool = True) -> bool:
    """Whether the word at ``i`` opens a clause: the question's start, after punctuation, after a `BEFORE_VERB`
    word or an opener ("please narrow …", "now filter …"), or, with ``after_asker``, after an auxiliary and who
    asks ("can you narrow …")."""
    if i == 0 or not toks[i - 1].word or toks[i - 1].low in BEFORE_VERB or toks[i - 1].low in OPENERS:
        return True
    return after_asker and i > 1 and toks[i - 1].low in ASKED and toks[i - 2].low in AUXILIARIES


def _plain_verb(t: Tok) -> bool:
    """A word that can open an imperative: a plain lower-case or capitalised word, no name, acronym or -ing form
    ("Scaling the depth of networks?" opens with a topic)."""
    return t.text.isalpha() and not is_name(t.text) and not t.low.endswith("ing") and t.low not in STOPWORDS


def framed(toks: list[Tok]) -> bool:
    """Whether the question wraps its topic in a request: it asks ("?"), opens with a word of a question or a
    request ("Which …", "Show …", "Any …"), names what it wants ("papers", "literature", "reading") or who asks
    ("I", "you", "please"). A statement ("4-PBA treatment decreases ER stress.") or a bare topic is not framed: all
    of it is what is searched for."""
    lows = {t.low for t in toks}
    words = [t.low for t in toks if t.word]
    opens = bool(words) and words[0] in QUESTION_STARTS | REQUEST_WORDS
    return "?" in lows or opens or bool(lows & (REQUEST_NOUNS | ASKERS | WANTS))


def intent_of(lows: list[str], words: list[str], names: list[str]) -> tuple[Intent, str, set[int]]:
    """(intent, overview kind, token positions that only said the intent)."""
    used: set[int] = set()
    for cue in COUNT_CUES:
        for i in range(len(lows) - len(cue) + 1):
            # a count of papers, not "how many queries does it take to …" (a fact a paper states): the papers are
            # named after the cue, or its object is left out in a request that names them ("Which papers use X,
            # and *how many* are there?", where "many" had been read as an alternative of X, which it replaced)
            if tuple(lows[i : i + len(cue)]) == cue and (
                cue == ("count",) or REQUEST_NOUNS & set(lows[i:]) or _elided(lows, i + len(cue))
            ):
                return "count", "", set(range(i, i + len(cue)))
    kind = ""
    for i in range(len(lows) - 1):
        pair = (lows[i], lows[i + 1])
        if pair in OVERVIEW_PAIRS:
            kind = kind or OVERVIEW_PAIRS[pair]
            used |= {i, i + 1}
    for i, w in enumerate(lows):
        if w in OVERVIEW_WORDS:
            kind = kind or OVERVIEW_WORDS[w]
            used.add(i)
    if kind:
        return "overview", kind, used
    asks_fact = bool(words) and words[0] in QUESTION_STARTS and not REQUEST_NOUNS & set(words)
    if names and asks_fact:
        return "factoid", "", used
    return "set", "", used


def _elided(lows: list[str], start: int) -> bool:
    """Whether a count cue's object is left out and the question names the papers before it: from ``start`` to the
    next punctuation, only stop-words, request words and :data:`COUNT_TAILS` ("how many *are there*", "how
    many*?*", "how many *in total*")."""
    rest = []
    for w in lows[start:]:
        if w and not w[0].isalnum():
            break
        rest.append(w)
    said = STOPWORDS | REQUEST_WORDS | COUNT_TAILS
    return bool(REQUEST_NOUNS & set(lows[:start])) and all(not w or w in said for w in rest)


def given(toks: list[Tok]) -> set[int]:
    """The position of the word a demonstrative points at ("in *this batch*", "of these *submissions*"): in a
    request it names what the conversation already has (the collection, the previous answer), not a topic. One
    word only: without parts of speech, a longer run would run on into the verb ("these abstracts *cover* X")."""
    pointed = {
        i + 1
        for i, t in enumerate(toks[:-1])
        if t.low in DEMONSTRATIVES
        and toks[i + 1].word
        and toks[i + 1].low not in STOPWORDS
        and toks[i + 1].low not in LINKS
    }
    return pointed | _theirs(toks)


def _theirs(toks: list[Tok]) -> set[int]:
    """The words after a link and "their" when "their" can only mean the papers asked for: the word before the link
    is no plural noun the dictionary knows, so it is the papers' ("Which submissions put quantization *at their
    core*?", "… mention X *in their abstract*"), not the topic's ("evaluate LLMs on their reasoning" is left as
    typed); and the words after "their" right after a topic word ("Which papers make X *their main focus*?"). The
    words run to the next stop-word, link or punctuation (at most :data:`THEIR_WORDS`)."""
    out: set[int] = set()
    for i in range(1, len(toks) - 2):
        before = toks[i - 1]
        if toks[i + 1].low != "their" or not before.word:
            continue
        if toks[i].low not in LINKS and toks[i].low != "at":
            # "Which papers make X *their main focus*?": right after the topic, "their" can only be the papers'
            if not toks[i].word or toks[i].low in STOPWORDS:
                continue
        elif before.low.endswith("s") and (plural_noun(before.low) or not word_classes(before.low)):
            continue  # (a plural topic may own it: "LLMs", "knowledge graphs")
        for j in range(i + 2, min(len(toks), i + 2 + THEIR_WORDS)):
            if not toks[j].word or toks[j].low in STOPWORDS or toks[j].low in LINKS:
                break
            out.add(j)
    return out
