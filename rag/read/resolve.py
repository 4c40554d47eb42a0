"""Resolve: which units are topics, as the corpus reads them, the middle of the reader's three stages
(:mod:`.parse` → resolve → :mod:`.expand`).

Every step here consults one :class:`~rag.read.lexicon.Lexicon` and the thresholds below: units joined by a link
are one term when the corpus states the whole ("mixture of experts"), alternatives share the last one's head or
object as the corpus writes them, a term or acronym that leads a phrase the corpus never uses whole is a facet of
its own ("LLM reasoning"), a unit the corpus never states is cut into the phrases it does state, a one-word facet
most papers use only ranks, and each facet is weighed by its topicality (:mod:`.topicality`): one that is not
topical only ranks. :func:`resolve` turns the groups of units of any reader into facets this way.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence, Set
from dataclasses import replace

from askpapers.rag.read.cues import (
    GENERIC_HEADS,
    LINK_VERBS,
    LINKS,
    NAME_HEADS,
    PARTICLES,
    RELATION_LINKS,
    RELATIONAL_VERBS,
    REQUEST_NOUNS,
    REQUEST_WORDS,
    Tok,
    is_acronym,
    is_name,
    participle,
    topic_word,
)
from askpapers.rag.read.expand import build, head_forms
from askpapers.rag.read.lexicon import (
    MIN_TERM_PAPERS,
    TERM,
    Lexicon,
    assoc,
    common_unit,
    english_words,
    held_as_term,
    is_term,
    plural_noun,
    word_classes,
)
from askpapers.rag.read.parse import MAX_PHRASE_WORDS, Item, Unit
from askpapers.rag.read.topicality import TOPICAL, content_words, nominal, topicality, verbal
from askpapers.rag.types import Facet
from askpapers.vectorstore.text import JOIN_HYPHEN, STOPWORDS, tokens

GLUE = 0.2  # a request word belongs to a topic when this share of its neighbour's papers state the pair
HEAD_GLUE = 0.04  # … or this share, for the head of the topic's phrase ("architecture search"; bench.glue)
GENERIC_SHARE = 0.25  # a one-word facet in at least this share of papers only ranks them


def resolve(
    groups: list[list[Unit]], lexicon: Lexicon, shouted: bool, weigh: bool = True, request: bool = False,
    slot: str = "",
) -> list[Facet]:  # fmt: skip
    """The facets of groups of alternative units (each group one facet as parsed), as the corpus reads them, each
    spelled (:func:`.expand.build`) and, with ``weigh``, weighed by its topicality. ``shouted``: the question is
    all in capitals (so capitals mark no acronym). ``request``: the text asks for papers (``rag.read.cues.framed``),
    so words of the request may stand beside the topic ("X *asap*", "*prior art* on X"); a statement or a bare topic
    (a SciFact claim) is all content. ``slot``: the first word of the request's object
    (:func:`.parse.topic_slot`): of two units of a request that :func:`_apart` tells apart, the one holding it is
    the topic, unless both are in the object (it runs on through a link, "of", "in", "for" …: "research in *the
    theory of pruning*")."""
    facets: list[Facet] = []
    cut_from: list[set[int]] = []  # the facets cut from each phrase typed as a whole
    led: list[set[int]] = []  # the facets of each phrase led by a term ("LLM reasoning")
    # the facets that may be words of the request, told by where their papers are (_spread): the verb of the request's
    # clause ("which papers *exploit* X"), a plural noun of a relation to the topic ("*applications* of X")
    asking: set[int] = set()
    linked: set[int] = set()  # the facets that any link joins to the unit after them ("X *in* Y")
    verbs: set[int] = set()  # the first parts of phrases cut apart that start with the verb of the request's clause
    leads = [v for g in groups for v in _lead_apart(g, lexicon, request, shouted)]
    for group in [d for g in leads for d in _distribute(g, lexicon)]:
        if named := _led_by_term(group, lexicon, shouted=shouted, request=request):
            led.append(set(range(len(facets), len(facets) + len(named))))
            facets += [build(g, lexicon) for g in named]
            if _relation_head(group, named[-1]):
                asking.add(len(facets) - 1)
            continue
        split = [_split_unattested(u, lexicon, request) for u in group]
        if request and len(group) == 1 and len(split[0]) > 1:
            # (a phrase cut from it made only of words of the request is the request's: "what pruning *methods
            # exist*?", whose "methods exist" the corpus states, had gated on it and left pruning to rank)
            kept = [u for u in split[0] if not _request_only(u)]
            if len(kept) == 1:
                group, split = kept, [kept]
            elif kept:
                split[0] = kept
        if len(group) == 1 and len(split[0]) > 1:  # one unit, cut into the phrases the corpus states
            parts = _parts(split[0], lexicon, request)
            cut_from.append(set(range(len(facets), len(facets) + len(parts))))
            if group[0].verb:  # (its first part is the verb of the request's clause: "Which papers *critique* X?")
                verbs.add(len(facets))
            if _relation_head(group, split[0][-1:]):
                asking.add(len(facets) + len(parts) - 1)
            facets += parts
        else:
            if len(group) == 1 and (group[0].verb or _relation_noun(group[0]) or group[0].requested):
                asking.add(len(facets))
            if len(group) == 1 and group[0].linked:
                linked.add(len(facets))
            facets.append(build([_lone_relation(u, lexicon, request) for u in group], lexicon))
    facets = ranking_only(facets, lexicon)
    if weigh:
        slotted = {i for i, f in enumerate(facets) if slot and any(slot in a.lower().split() for a in f.alternatives)}
        # (the object runs on through a link: "research in *the theory of pruning*", "papers on *X in Y*")
        slotted |= {i + 1 for i in slotted & linked if i + 1 < len(facets)}
        facets = _weigh(facets, lexicon, [*cut_from, *led] if request else None, cut_from, slotted, asking, verbs)
    return facets


def ranking_only(facets: list[Facet], lexicon: Lexicon) -> list[Facet]:
    """The facets, those that only rank beside others made optional: a leftover single word found in most papers
    ("learning", "model") narrows nothing; nor does a lone letter ("*Q*: which papers use X?", "*b*) X"), however many
    papers use it as a symbol. One facet must hold: when all would only rank, the rarest gates."""
    facets = [replace(f, optional=True) if (_generic(f, lexicon) or _letter(f)) and len(facets) > 1 else f
              for f in facets]  # fmt: skip
    if facets and all(f.optional for f in facets):
        rarest = min(range(len(facets)), key=lambda i: lexicon.phrase_df(facets[i].alternatives[0]))
        facets[rarest] = replace(facets[rarest], optional=False)
    return facets


def _letter(facet: Facet) -> bool:
    """A facet that is one letter, in every alternative."""
    return all(len(a) == 1 and a.isalpha() for a in facet.alternatives)


def _generic(facet: Facet, lexicon: Lexicon) -> bool:
    """A facet that is one word found in at least a quarter of the papers."""
    words = [a.lower().split() for a in facet.alternatives]
    size = max(lexicon.size, 1)
    return all(len(w) == 1 and lexicon.df(w[0]) >= GENERIC_SHARE * size for w in words)


def unhyphenated(toks: list[Tok], lexicon: Lexicon) -> list[Tok]:
    """The tokens, each word of two parts joined by a hyphen that the corpus does not state as a term
    (:func:`_hyphen_term`) typed as its two words: "pruning-related papers" asks for the papers on pruning, as
    "pruning related papers" does, and "knowledge distillation-based methods" for knowledge distillation (a word the
    corpus states as a term, "LLM-based", "language-guided", stays one, but for the last word of a term of several
    words that the corpus does not state with it, "continual learning-based"; a name, "ResNet-50", is left as typed).
    Each part can then be corrected, and read as a word of the topic or of the request, as if typed apart. (For a
    request only: a statement is all content, and its rare hyphenated words are its terms, "beta-band coherence".)"""
    out: list[Tok] = []
    for i, t in enumerate(toks):
        parts = JOIN_HYPHEN.split(t.text)
        if not (t.word and len(parts) == 2 and all(p.isalpha() and len(p) > 1 for p in parts) and not is_name(t.text)):
            out.append(t)
            continue
        head, tail = (p.lower() for p in parts)
        before = toks[i - 1].low if i and toks[i - 1].word else ""
        before = "" if before in STOPWORDS or before in REQUEST_WORDS else before
        # the word after a term of several words, "continual learning-based": "learning-based" is a term, but the
        # hyphen joins the word to the whole of "continual learning", which the corpus does not state with it
        after_term = bool(before) and (
            lexicon.phrase_df(f"{before} {head}") >= MIN_TERM_PAPERS
            and lexicon.phrase_df(f"{before} {head} {tail}") < MIN_TERM_PAPERS
        )
        # (a part that is no known word but a slip of one, "reinforcment-learning": typed apart, so that the part is
        # corrected as a word typed alone is)
        misspelt = any(not lexicon.known(p) and lexicon.correct(p) for p in (head, tail))
        if after_term or misspelt or not _hyphen_term(f"{head} {tail}", head, tail, lexicon):
            out += [Tok(p, p.lower(), True, owner=t.owner and k == len(parts) - 1) for k, p in enumerate(parts)]
        else:
            out.append(t)
    # a participle between a topic and a topic word relates them, hyphenated or typed apart alike ("reinforcement
    # learning-enabled robotic manipulation"; not "pruning-focused papers", where no topic word follows)
    for i, t in enumerate(out):
        # (not a hyphenated term kept whole: "X supporting *retrieval-augmented* Y")
        if (0 < i < len(out) - 1 and "-" not in t.low and participle(t.low) and topic_word(out[i - 1])
                and topic_word(out[i + 1])):  # fmt: skip
            out[i] = replace(t, relates=out[i + 1].low not in LINKS)
    return out


def _hyphen_term(whole: str, head: str, tail: str, lexicon: Lexicon) -> bool:
    """Whether a word of two parts is one term of the corpus: at least :data:`MIN_TERM_PAPERS` papers state it, or
    a :data:`TERM` share of the papers of its rarer part (a corpus of a few papers writes its terms a few times: two
    papers saying "language-guided" are all that say "guided"). On the conference dev pool, "pruning-related" 0
    papers, "distillation-based" 2 of 61 on distillation; "LLM-based" 56, "physics-informed" 3. A word with a part no
    paper states is kept as typed: the corpus says nothing of it."""
    if lexicon.phrase_df(whole) >= MIN_TERM_PAPERS or min(lexicon.phrase_df(head), lexicon.phrase_df(tail)) == 0:
        return True
    return assoc(whole, head, tail, lexicon) >= TERM


def glued(word: str, neighbour: list[str], before: bool, lexicon: Lexicon, last: bool = False) -> bool:
    """Whether a request word belongs to the topic next to it ("tool use", "user study"). After a topic word and
    ending the run of words (``last``: the head of a noun phrase, "architecture *search*"), a word that is no
    request noun needs less (:data:`HEAD_GLUE`): a request puts its verbs before the topic, its nouns after it."""
    if (word in STOPWORDS and word not in ("use", "study", "work", "works")) or word in LINKS:
        return False  # (a preposition heads no noun phrase: "the key ideas *behind* X")
    pair = [word, *neighbour[:1]] if before else [*neighbour[-1:], word]
    if lexicon.phrase_df(" ".join(pair)) < 2:
        return False
    head = not before and last and word not in REQUEST_NOUNS
    return assoc(" ".join(pair), pair[0], pair[1], lexicon) >= (HEAD_GLUE if head else GLUE)


def join_terms(items: list[Item], lexicon: Lexicon) -> list[Item]:
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
        if isinstance(item, Unit) and links and links[0] in RELATIONAL_VERBS and out and isinstance(out[-1], Unit):
            left, verb = out[-1], links[0]
            if len(links) == 1 and len(left.words) == 1:  # "language guided navigation": "language-guided navigation"
                # (a term of several words before the verb is a facet of its own: "imitation learning-driven
                # manipulation" is imitation learning and manipulation, not "imitation" and "learning-driven")
                out[-1] = Unit([*left.words[:-1], f"{left.words[-1]}-{verb}", *item.words],
                                [*left.shown[:-1], f"{left.shown[-1]}-{verb}", *item.shown])  # fmt: skip
                continue
            if len(links) > 1 and len(item.words) == 1 and not item.alias:  # "navigation guided by language": the same
                out[-1] = Unit([f"{item.words[0]}-{verb}", *left.words], [f"{item.shown[0]}-{verb}", *left.shown])
                continue
        if isinstance(item, Unit) and links and out and isinstance(out[-1], Unit):
            left = out[-1]
            whole = [*left.words, *links, *item.words]
            if not left.alias and not item.alias and is_term(whole, left.words, item.words, lexicon):
                out[-1] = Unit(whole, [*left.shown, *links, *item.shown])
                continue
            head = [*left.words, *links, *item.words[:1]]
            if (not left.alias and not item.alias and len(item.words) > 1
                    and is_term(head, left.words, item.words[:1], lexicon)
                    and lexicon.phrase_df(" ".join(head)) > lexicon.phrase_df(" ".join(item.words[:2]))):  # fmt: skip
                # "out of distribution generalization": the term "out of distribution" (45 papers; "distribution
                # generalization" 2), and "generalization"; not "expression of transcriptional | regulators" (4
                # papers; "transcriptional regulators" 64)
                out[-1] = Unit(head, [*left.shown, *links, *item.shown[:1]])
                out += ["and", Unit(item.words[1:], item.shown[1:])]
                continue
            alone = (len(out) < 2 or out[-2] != "or") and (at + 1 >= len(items) or items[at + 1] != "or")
            if (alone and len(left.words) == len(item.words) == 1 and not left.alias and not item.alias
                    and links[-1] in LINKS and left.words[0] not in PARTICLES
                    and not _links_on(items, at, lexicon)):  # fmt: skip
                # "policies for robots" is "robot policies" (not in "safety or alignment of LLMs": the link joins all);
                # the compound the corpus uses, whichever way round, so that either order reads alike ("fairness
                # for evaluation" and "evaluation with fairness" are "fairness evaluation")
                swapped = next((c for c in ((item, left), (left, item))
                                if lexicon.phrase_df(f"{c[0].words[0]} {c[1].words[0]}") >= MIN_TERM_PAPERS),
                               None)  # fmt: skip
                if swapped is not None:
                    out[-1] = Unit([*swapped[0].words, *swapped[1].words], [*swapped[0].shown, *swapped[1].shown])
                    continue
        if links and out and isinstance(out[-1], Unit):
            out[-1].relation = isinstance(item, Unit) and links[0] in RELATION_LINKS
            out[-1].linked = isinstance(item, Unit)
            if out[-1].linked and len(out) >= 3 and isinstance(out[-3], Unit) and out[-3].linked:
                # a unit between two links: "X with *applications* in Y"; and "the *impact* of X on Y", whose object
                # is linked on
                out[-1].spans = True
                out[-3].spans = out[-3].spans or out[-3].relation
            out.append("and")
        if item == "gap":
            item = "and" if out and isinstance(out[-1], Unit) else ""
        if item:
            out.append(item)
    return [x for x in out if not (isinstance(x, str) and x.startswith("link:"))]


def _links_on(items: list[Item], at: int, lexicon: Lexicon) -> bool:
    """Whether the unit at ``at`` starts a term with the unit that a link joins to it next ("learning *from
    demonstrations*" in "manipulation with learning from demonstrations"): it is then no word to fold into the
    unit before it ("learning manipulation")."""
    unit, links, j = items[at], [], at + 1
    while j < len(items) and isinstance(items[j], str) and str(items[j]).startswith("link:"):
        links.append(str(items[j])[5:])
        j += 1
    after = items[j] if j < len(items) else None
    if not isinstance(unit, Unit) or not links or not isinstance(after, Unit) or after.alias:
        return False
    return is_term([*unit.words, *links, *after.words], unit.words, after.words, lexicon)


def _distribute(group: list[Unit], lexicon: Lexicon) -> list[list[Unit]]:
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
            u = Unit(with_head, [*u.shown, last.shown[-1]])
        out.append(u)
    obj = last.words[1:]
    if (all(len(u.words) == 1 for u in out) and lexicon.phrase_df(" ".join(last.words)) == 0
            and lexicon.phrase_df(" ".join(obj)) >= MIN_TERM_PAPERS):  # fmt: skip
        return [[*out, Unit(last.words[:1], last.shown[:1])], [Unit(obj, last.shown[1:])]]
    return [[*out, last]]


def _verb_led(unit: Unit, lexicon: Lexicon) -> bool:
    """Whether a unit starts with the verb of the request's clause (:func:`.parse._clause_verb`), a verb whose
    papers are spread over every topic (:func:`_spread`: "exploit", "harness"; not "prune" or "transfer") or that no
    paper uses, and goes on to a topic that the corpus does not state with the verb as a phrase, in
    :data:`MIN_TERM_PAPERS` papers or more, and whose papers are not spread as well: "Which papers *exploit*
    quantization?" had read as the phrase "exploit quantization", which one paper of the conference pool states."""
    if not unit.verb or unit.alias or len(unit.words) < 2:
        return False
    if lexicon.phrase_df(" ".join(unit.words)) >= MIN_TERM_PAPERS:
        return False
    # (a verb no paper uses in any form is no topic of this corpus either: cut off, it only ranks, as a unit no paper
    # states does; kept, it read as a modifier the corpus never states, which must hold, and nothing matched)
    if _spread(unit.words[0], lexicon) is None and lexicon.family(unit.words[0]):
        return False
    # (an object whose papers are spread too is of the request with it: "Which papers *make progress* on X?")
    cohesion = lexicon.cohesion(" ".join(unit.words[1:]))
    return cohesion is None or cohesion >= COHESIVE


def _lead_apart(group: list[Unit], lexicon: Lexicon, request: bool = False, shouted: bool = False) -> list[list[Unit]]:
    """A group whose first unit starts with a word that is no part of the topic after it, as a group of that word
    and the group with the rest: the verb of the request (:func:`_verb_led`), or, before alternatives, a word the
    dictionary knows only as a verb or an adverb (:func:`~.topicality.verbal`: no modifier, as "efficient" of
    "efficient fine-tuning like LoRA" is) that no paper states with the first (:func:`_split_unattested` cuts it).
    "Which papers analyze backdoor attacks or defenses?" and "Which works are centered around backdoor attacks or
    defenses?" had read as "analyze backdoor attacks" or "analyze backdoor defenses" (and "around …"), which no
    paper states. (A unit alone, with no verb before it, is cut into the facets of a phrase cut apart:
    :func:`resolve`.)"""
    first = group[0]
    if _verb_led(first, lexicon):
        verb, rest = Unit(first.words[:1], first.shown[:1], verb=True), Unit(first.words[1:], first.shown[1:])
        return [[verb], [rest, *group[1:]]]
    if len(group) < 2 or not verbal(first.words[0]) or _led_by_term(group, lexicon, shouted, request) is not None:
        return [group]
    parts = _split_unattested(first, lexicon, request)
    if len(parts) < 2:
        return [group]
    return [*([p] for p in parts[:-1]), [parts[-1], *group[1:]]]


def _split_unattested(unit: Unit, lexicon: Lexicon, request: bool = False) -> list[Unit]:
    """A unit the corpus never states (in any of its spellings), cut into the longest phrases it does state (one
    with an acronym the question defines, only in a request: :func:`_cut_after_alias`)."""
    words = unit.words
    if unit.alias:
        return _cut_after_alias(unit, lexicon) if request else [unit]
    if len(words) < 2 or lexicon.phrase_df(" ".join(words)) > 0:
        return [unit]
    if any(lexicon.phrase_df(form) > 0 for form in head_forms(words, lexicon)):
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
    return [Unit(words[a:b], unit.shown[a:b]) for a, b in best]


def _cut_after_alias(unit: Unit, lexicon: Lexicon) -> list[Unit]:
    """A unit with the acronym the question defines for it, whose words end in some the corpus never states with
    them ("mixture-of-experts (MoE) models asap"), cut after the longest part it states, written out or with the
    acronym; the rest is a unit of its own. A unit the corpus states whole is kept."""
    words, long = unit.words, unit.long

    def stated(n: int) -> bool:
        forms = [" ".join(words[:n]), " ".join([unit.alias.lower(), *words[long:n]])]
        return any(lexicon.phrase_df(form) > 0 for form in forms)

    if not long or len(words) <= long or stated(len(words)):  # (no long: the acronym names every word)
        return [unit]
    n = next((n for n in range(len(words) - 1, long - 1, -1) if stated(n)), 0)
    if not n:
        return [unit]
    return [Unit(words[:n], unit.shown[:n], unit.alias, unit.long), Unit(words[n:], unit.shown[n:])]


def _acronym_word(word: str, shouted: bool, lexicon: Lexicon) -> bool:
    """An acronym: two capitals or more (unless the whole question is in capitals), or, typed in lower case, a
    short word the corpus uses that is no English word ("llm", "vit")."""
    if any(c.isupper() for c in word):
        return not shouted and is_acronym(word)
    low = word.lower()
    core = low[:-1] if low.endswith("s") else low
    return low.isalpha() and 2 <= len(core) <= 5 and core not in english_words() and lexicon.df(low) > 0


def _linked_part(part: Unit, lexicon: Lexicon, request: bool = False) -> Unit:
    """A part cut from a phrase (:func:`_parts`, :func:`_led_by_term`) that ends in a link verb after a hyphen,
    "GAN-based" of "GAN-based image generation" (no paper states the whole), or in a request in any participle
    ("GANs-enabled"), read as what it links: "X-based Y" is Y using X, so the papers on image generation with GANs,
    not only those that write "GAN-based" (as "GAN based image generation" typed apart is read; "reinforcement
    learning-based" is reinforcement learning). A phrase the corpus states whole is not cut: "energy-based models",
    "model-based reinforcement learning"."""
    if not part.words:
        return part
    last, _, tail = part.words[-1].rpartition("-")
    words = [*part.words[:-1], last]
    # (in a request, any participle: "GANs-driven", "LLM-enabled"; a statement's are its terms, "stress-activated")
    relates = tail in LINK_VERBS or tail in RELATIONAL_VERBS or (request and participle(tail))
    if not relates or not last or lexicon.phrase_df(" ".join(words)) == 0 or common_unit(words, lexicon):
        return part  # (words too common to carry a topic stay as typed: "model-based", "learning-based")
    return Unit(words, [*part.shown[:-1], part.shown[-1].rpartition("-")[0]])


def _led_by_term(group: list[Unit], lexicon: Lexicon, shouted: bool, request: bool = False) -> list[list[Unit]] | None:
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
        # (a lead ends in a content word: "learning from" leads nothing, "learning from demonstrations" is one term)
        n = next((n for n in range(len(first.words) - 1, 1, -1)
                  if first.words[n - 1] not in STOPWORDS and first.words[n - 1] not in LINKS
                  and lexicon.phrase_df(" ".join(first.words[:n])) >= MIN_TERM_PAPERS), 0)  # fmt: skip
    if not n:
        return None
    lead, rest = first.words[:n], first.words[n:]
    if n == 2 and not _acronym_word(first.shown[0], shouted, lexicon) and lexicon.df("".join(lead)) > 0:
        return None  # a word written apart ("multi modal" of "multimodal") leads like the word: nothing
    if len(rest) == 1 and rest[0] in GENERIC_HEADS | NAME_HEADS:  # "MoE models" is MoE
        return None
    if all(w in REQUEST_WORDS for w in rest):  # a request word is in a unit only as a part of its phrase (glued)
        return None
    if any(len(u.words) > 1 and u.words[:n] != lead for u in group[1:]):
        return None
    whole, left, right = " ".join(first.words), " ".join(lead), " ".join(rest)
    if lexicon.phrase_df(whole) >= MIN_TERM_PAPERS and held_as_term(whole, left, right, lexicon):
        return None  # a term of its own: "natural language processing" (60 of the 82 papers with both parts state it)
    others = [Unit(u.words[n:], u.shown[n:]) if len(u.words) > n else u for u in group[1:]]
    return [[_linked_part(Unit(lead, first.shown[:n]), lexicon, request)], [Unit(rest, first.shown[n:]), *others]]


def _lone_relation(unit: Unit, lexicon: Lexicon, request: bool) -> Unit:
    """A unit of one hyphenated word that ends in a link verb, as typed before words of the request ("*planning-based*
    approaches to autonomous driving", "*GANs-based* methods"), read in a request as what it links, as a part cut
    from a phrase is (:func:`_linked_part`): planning. Unless the corpus states it as a term of its own, as it
    decides for units joined by a link, but for its common part (:func:`~rag.read.lexicon.held_as_term`:
    "energy-based" 14 of 31, "rule-based", "graph-based"; "planning-based" 3 of 126)."""
    if not request or len(unit.words) != 1 or "-" not in unit.words[0] or unit.alias:
        return unit
    first, _, tail = unit.words[0].rpartition("-")
    if not first or held_as_term(f"{first} {tail}", first, tail, lexicon):
        return unit
    return _linked_part(unit, lexicon, request)


def _parts(parts: list[Unit], lexicon: Lexicon, request: bool = False) -> list[Facet]:
    """Facets of the phrases cut from one unit the corpus never states: the words it never uses, its rarest
    phrase and every phrase of several words that is a term of its own must hold ("quantum computing" needs
    "quantum"; "differentially private federated learning" needs both); the other single words only rank."""
    dfs = [lexicon.phrase_df(" ".join(p.words)) for p in parts]
    attested = [i for i, df in enumerate(dfs) if df > 0]
    rarest = min(attested, key=lambda i: dfs[i]) if attested else None
    term = [len(p.words) > 1 and dfs[i] >= MIN_TERM_PAPERS for i, p in enumerate(parts)]
    # (a part such as "GAN-based" is read as "GAN", and holds as the rarest part it was: "score-based diffusion
    # models" needs "score" beside diffusion models, as "score based diffusion models" typed apart does)
    return [build([_linked_part(p, lexicon, request)], lexicon, optional=not (dfs[i] == 0 or i == rarest or term[i]))
            for i, p in enumerate(parts)]  # fmt: skip


def _weigh(
    facets: list[Facet], lexicon: Lexicon, phrases: Sequence[Set[int]] | None = None, cut_from: Sequence[Set[int]] = (),
    slotted: Set[int] = frozenset(), asking: Set[int] = frozenset(), verbs: Set[int] = frozenset(),
) -> list[Facet]:  # fmt: skip
    """Each facet with its topicality (``asking``: see :func:`_facet_weights`); a facet that is not topical only
    ranks (the most topical one always gates, an optional one stays optional but for the topical head of a phrase
    cut apart in a request, and the parts of one phrase typed as a whole (``cut_from``) stay as read when one of them
    is topical and :func:`_keeps_part` keeps the other: "weather" of "weather forecasting" is a topic word, however
    common in English, while both parts of "much appreciated" only rank). A unit of its own that no paper states only
    ranks too. In a request (``phrases``: the facets of each phrase typed as a whole), of two units typed apart that
    the corpus states but never in one paper (:func:`_never_with`), one is a phrase of the request, and only ranks
    (:func:`_apart`)."""
    if not facets:
        return facets
    if phrases is not None:
        facets = _topical_alternatives(facets, lexicon)
    weights = _facet_weights(facets, lexicon, asking)
    kept = {i for group in cut_from if any(weights[j] >= TOPICAL for j in group) for i in group
            if _keeps_part(i, group, facets, weights, lexicon, phrases is not None, i in verbs)}  # fmt: skip
    stated = [any(lexicon.phrase_df(s) > 0 for s in f.all_spellings()) for f in facets]
    apart = _apart(facets, weights, stated, phrases, lexicon, slotted) if phrases is not None else set()
    # the most topical facet gates; in a request, even one read as optional by the corpus' counts alone (in "asked
    # to review quantization", "review" is the rarer part, but "quantization" is the topic), and one the corpus
    # states first, but never a word in a quarter of the papers while another facet is not one (:func:`_generic`:
    # "cooperation with *learning*"); of units alike in all that, the object of the request
    # (``slotted``: "papers about *adam*, with evidence", where "adam" weighs as common English, 0.13, and "evidence"
    # 0.27)
    if phrases is None:
        best = max(range(len(facets)), key=lambda i: (not facets[i].optional, weights[i]))
    else:
        best = max(
            range(len(facets)),
            key=lambda i: (i not in apart, not _generic(facets[i], lexicon), weights[i] >= TOPICAL, stated[i],
                           i in slotted, not facets[i].optional, weights[i]),
        )  # fmt: skip
    # (a relation noun that ends the phrase is no head: "planning *contributions* to X" is headed by planning)
    heads = {max((j for j in group if j not in asking), default=max(group)) for group in cut_from if group}
    out = []
    for i, (f, w) in enumerate(zip(facets, weights, strict=True)):
        # a unit of its own that no paper states narrows nothing the corpus holds ("ty", "thesis"): it only ranks
        unstated = i not in kept and not stated[i]
        demote = (
            i != best
            and i not in kept
            and (((w < TOPICAL or unstated) and not _goes_with(f, facets[best], lexicon)) or i in apart)
        )
        # (in a request, the head of a phrase cut apart, its last part, gates when topical: "navigation" of
        # "language-guided navigation"; a part before it only qualifies it. A claim gates on fewer of its units.)
        held = i == best or (phrases is not None and i in heads and i in kept and w >= TOPICAL)
        out.append(replace(f, weight=w, optional=(f.optional and not held) or demote))
    return out


SPELLINGS_TOGETHER = 4  # the spellings of each of two units searched together before they count as never together
LATER = 0.05  # of two units typed apart, never stated together, the earlier is the request's unless this more topical
# … unless the papers of one are this much less close to one another than the other's (_more_spread)
TIE_COHESION = 0.03
TIE_PAPERS = 5  # … each measured over at least this many papers


def _apart(
    facets: list[Facet], weights: list[float], stated: list[bool], phrases: Sequence[Set[int]], lexicon: Lexicon,
    slotted: Set[int] = frozenset(),
) -> set[int]:  # fmt: skip
    """The facets that are phrases of the request beside the topic. Of two topical units typed apart (not parts of
    one phrase), both stated by the corpus but never in one paper: the less topical ("which ones discuss X in
    *depth*?"), or, when they are about as topical (within :data:`LATER`: "*prior art* on pruning"), the earlier
    one, since a request names its topic last. Two units stated together are both topics, however often: that a
    word of the request is one ("any *leads*?") is the topicality model's to tell, and two topics asked together
    may co-occur no more often than chance ("sampling in LLMs": "sample" is in papers on anything). Of two such
    units, one the object of the request (``slotted``: "papers *about* adam, to get up to speed") and one not, the
    other is the request's, whatever their topicality."""
    out: set[int] = set()
    for i, j in itertools.combinations(range(len(facets)), 2):
        if not (stated[i] and stated[j]) or any(i in p and j in p for p in phrases):
            continue
        if min(weights[i], weights[j]) < TOPICAL:
            continue
        if _never_with(facets[i], facets[j], lexicon):
            pick = i if weights[i] < weights[j] + LATER else j
            if abs(weights[i] - weights[j]) < LATER and (spread := _more_spread(facets[i], facets[j], lexicon)):
                pick = (i, j)[spread - 1]  # (the more spread, in whichever order they were typed)
            other = j if pick == i else i
            out.add(other if pick in slotted and other not in slotted else pick)
    return out


def _more_spread(a: Facet, b: Facet, lexicon: Lexicon) -> int:
    """Of two units about as topical, never stated together: 1 or 2, the one whose papers are clearly less close to
    one another (by :data:`TIE_COHESION`, each measured over at least :data:`TIE_PAPERS` papers), or 0 when that
    cannot be told. A phrase of the request is spread over every topic ("prior art" 0.059, "prior work" 0.040,
    "open problems" 0.033 on the conference dev pool), a topic is not ("pruning" 0.104, "speech recognition"
    0.195); so the reading does not depend on which of two topics is typed first ("contrastive learning for speech
    recognition", "speech recognition with contrastive learning")."""
    if a.optional or b.optional:  # (a lone letter, a word in most papers: no topic to weigh against another)
        return 0
    ca, cb = (lexicon.cohesion(f.all_spellings()[0], least=TIE_PAPERS) for f in (a, b))  # (as the corpus spells it)
    if ca is None or cb is None or abs(ca - cb) < TIE_COHESION:
        return 0
    return 1 if ca < cb else 2


def _keeps_part(
    i: int, group: Set[int], facets: list[Facet], weights: list[float], lexicon: Lexicon, request: bool = False,
    verb: bool = False,
) -> bool:  # fmt: skip
    """Whether a part of a phrase typed as a whole, with a topical part beside it, stays as read: it is topical
    itself, it modifies a topical part after it and the corpus states no word of its family (so nothing says it is
    a word of the request: "weather" of "weather forecasting" in a corpus without weather must hold, and nothing
    matches; "researching" is of the family of "research"; in a request, a word after the topic modifies nothing:
    "quantization asap"), it is a noun before a topical part and rarer in the corpus than it ("protein" of "protein
    design"), it is a compound modifier ("language-guided"), or the corpus states it with a topical part far beyond
    chance. A verb of the request typed before the topic ("I'm *researching* knowledge graphs", "asked to *review*
    X"; ``verb``: the verb of the request's clause, "Which papers *critique* X?") is none of these."""
    f = facets[i]
    unstated = all(lexicon.both_df(a, a) == 0 for a in f.alternatives)
    # (in a request; in a statement every word is content, wherever it stands)
    modifies = any(weights[j] >= TOPICAL for j in group if j > i) or not request
    # (a noun rarer in the corpus than the topical part it modifies narrows that part to a topic: "protein" of
    # "protein design", "weather" of "weather forecasting" in a corpus of machine learning, where such words are rare
    # but common in English, so topicality alone weighs them as a word of the request)
    after = [j for j in group if j > i and weights[j] >= TOPICAL]
    noun = all(nominal(w) >= 1.0 for a in f.alternatives for w in content_words(a))
    narrows = not verb and noun and bool(after) and all(_df(f, lexicon) < _df(facets[j], lexicon) for j in after)
    return (
        (weights[i] >= TOPICAL and (modifies or not unstated))  # (how topical an unstated word is, no count says)
        or (unstated and modifies)
        or narrows
        or any("-" in a for a in f.alternatives)
        or any(weights[j] >= TOPICAL and _goes_with(f, facets[j], lexicon) for j in group if j != i)
    )


def _df(facet: Facet, lexicon: Lexicon) -> int:
    """The papers stating the facet's commonest alternative."""
    return max(lexicon.phrase_df(a) for a in facet.alternatives)


def _topical_alternatives(facets: list[Facet], lexicon: Lexicon) -> list[Facet]:
    """Each facet without the alternatives of a request that name nothing: not topical, each read in the question in
    place of the first, and no word of them can head a noun phrase (:func:`~.topicality.nominal`), while another
    alternative is topical or can: "Which papers use X *or something similar*?" asks for X ("similar" weighs 0.08
    beside pruning on the conference dev pool, and as an alternative had added the 215 papers stating it), as "X or
    similar methods" and "X or something comparable" do, however common X is in English ("adam"). A noun the user
    offered stays, however common ("the *safety* or alignment of language models"), and so does a word whose papers
    cohere (:func:`_coheres`: "*audio* or speech"); when no alternative names anything ("explain or interpret"), all
    stay."""
    firsts = [f.alternatives[0] for f in facets]
    out = []
    for i, f in enumerate(facets):
        if len(f.alternatives) < 2:
            out.append(f)
            continue
        weights = [topicality([*firsts[:i], alt, *firsts[i + 1 :]], lexicon)[i] for alt in f.alternatives]
        names = [any(nominal(t) >= 1.0 for t in tokens(alt.lower()) if t not in STOPWORDS) for alt in f.alternatives]
        keep = [k for k, w in enumerate(weights) if w >= TOPICAL or names[k] or _coheres(f.alternatives[k], lexicon)]
        if not keep or len(keep) == len(weights):  # (none names anything: all of them stay)
            out.append(f)
            continue
        groups = f.groups()
        out.append(replace(f, alternatives=tuple(f.alternatives[k] for k in keep),
                           spellings=tuple(groups[k] for k in keep) if f.spellings else ()))  # fmt: skip
    return out


def _coheres(alternative: str, lexicon: Lexicon) -> bool:
    """Whether the papers stating an alternative are :data:`COHESIVE` (measured over :data:`TIE_PAPERS` papers at
    least): it names a topic of the corpus even where the dictionary knows no noun in it ("*audio* or speech": "audio"
    is an adjective to it, 0.097; "similar" 0.013, "comparable" 0.019 and "relevant" 0.026 are spread over every
    topic)."""
    cohesion = lexicon.cohesion(alternative, least=TIE_PAPERS)
    return cohesion is not None and cohesion >= COHESIVE


def _facet_weights(facets: list[Facet], lexicon: Lexicon, asking: Set[int] = frozenset()) -> list[float]:
    """Each facet's topicality: that of its most topical alternative, each read in the question in place of the
    first ("the safety or alignment of language models": "alignment" is a topic of this corpus, so the facet is,
    however common "safety" is in English). The user offered every alternative as the topic. A phrase of the
    writing, whose papers are spread over every topic (:func:`_scattered`), weighs less than a topic, the less the
    more spread: "state of the art" only ranks, however many papers state it. So does a facet that may be a word of
    the request (``asking``: the verb of the request's clause, "Which papers *exploit* X?", or a plural noun of a
    relation to the topic, "*applications* of X") whose papers are spread (:func:`_spread`): "prune" and "attacks"
    are topics, "exploit", "harness" and "applications" words of the request. A hyphenated topic whose papers cohere
    is weighed as typed apart (:func:`_cohesive_hyphens`: "few-shot" as "few shot")."""
    firsts = [f.alternatives[0] for f in facets]
    weights = topicality(firsts, lexicon)
    for i, f in enumerate(facets):
        for alt in f.alternatives[1:]:
            weights[i] = max(weights[i], topicality([*firsts[:i], alt, *firsts[i + 1 :]], lexicon)[i])
        if len(facets) < 2:  # (a lone facet gates anyway)
            continue
        for alt in f.alternatives:  # (a hyphenated topic, as typed apart: see _cohesive_hyphens)
            if _cohesive_hyphens(alt, lexicon):
                spaced = JOIN_HYPHEN.sub(" ", alt)
                weights[i] = max(weights[i], topicality([*firsts[:i], spaced, *firsts[i + 1 :]], lexicon)[i])
        if i in asking:
            cohesion = _spread(f.alternatives[0], lexicon) if len(f.alternatives) == 1 else None
        else:
            cohesion = _scattered(f, lexicon)
        if cohesion is not None:
            weights[i] = min(weights[i], TOPICAL * max(cohesion, 0.0) / COHESIVE)
        elif _clustered(f, lexicon):
            weights[i] = max(weights[i], TOPICAL)
        if _letter(f):  # (a lone letter is a symbol of some papers, "Q" or "k", not a topic: "Quick *q*: ...")
            weights[i] = 0.0
    return weights


def _cohesive_hyphens(alt: str, lexicon: Lexicon) -> bool:
    """Whether an alternative holds hyphenated words, each a topic of the corpus: the papers stating it are at least
    :data:`COHESIVE` closer than chance. The topicality model weighs a hyphenated word as a word of the request, for
    it learned hyphens from the frames ("state-of-the-art", "related-work"): beside "federated learning" on the
    conference dev pool "few-shot" 0.004 and "few shot" 0.99, "fine-tuning" 0.02 and "fine tuning" 0.99,
    "vision-language" 0.03 and "vision language" 0.99. Such a word is weighed as typed apart when its papers cohere
    ("few-shot" 0.13, "fine-tuning" 0.08, "sim-to-real" 0.23), not when they are spread ("state-of-the-art" 0.02,
    "well-known" 0.01, "open-source" 0.03) or too few to tell."""
    words = [w.strip(".,;:!?\"'()[]") for w in alt.split() if JOIN_HYPHEN.search(w)]
    if not words:
        return False
    return all((c := lexicon.cohesion(w)) is not None and c >= COHESIVE for w in words)  # (stops at a spread one)


COHESIVE = 0.05  # the papers stating a topic of several words are at least this much closer than chance
CLUSTERED = 0.1  # a noun whose papers are this much closer than chance is a topic of the corpus


def _clustered(facet: Facet, lexicon: Lexicon) -> bool:
    """Whether every alternative of the facet is one word that can head a noun phrase (:func:`.topicality.nominal`)
    and whose papers are at least :data:`CLUSTERED` closer to one another than chance
    (:meth:`~rag.read.lexicon.Lexicon.cohesion`): a topic of the corpus, however common in English ("planning"
    beside "language models" in ICML 2024: topicality 0.19, cohesion 0.11; the answer had been every paper on
    language models)."""
    cohesions = _cohesions(facet, lexicon, lambda words: len(words) == 1 and nominal(words[0]) >= 1.0)
    return cohesions is not None and all(c >= CLUSTERED for c in cohesions)


def _scattered(facet: Facet, lexicon: Lexicon) -> float | None:
    """The cohesion (:meth:`~rag.read.lexicon.Lexicon.cohesion`) of a facet whose every alternative is a phrase of
    several content words that the corpus states often enough to tell, when even the most cohesive is below
    :data:`COHESIVE`; None otherwise (a single word, as "alignment" or "bias", is the topicality model's to weigh:
    a broad topic's papers are spread too). On the conference dev pool the topics of the dev questions stated by 30
    papers or more are at 0.08 ("neural network") to 0.34, and "state-of-the-art" at 0.02; on ICML 2024, "state of
    the art" 0.006, "extensive experiments" 0.02, "real world" 0.02, against "language models" 0.11."""
    cohesions = _cohesions(facet, lexicon, lambda words: len(words) >= 2, keep=REQUEST_WORDS)
    return max(cohesions) if cohesions and max(cohesions) < COHESIVE else None


VERB_PAPERS = 20  # the cohesion of a verb fewer papers use in any of its forms is not measured


def _request_only(unit: Unit) -> bool:
    """Whether every word of a unit is a word of the request or a stop-word ("methods exist")."""
    return all(w in REQUEST_WORDS or w in STOPWORDS for w in unit.words)


def _relation_head(group: list[Unit], last: list[Unit]) -> bool:
    """Whether the last part cut from a phrase linked to the topic after it is one plural noun, which may name a
    relation to that topic as "applications of X" does ("reinforcement learning *applications* in robotic
    manipulation"; :func:`_spread` tells it from a topic)."""
    return (len(group) == 1 and group[0].linked and len(last) == 1 and len(last[0].words) == 1
            and plural_noun(last[0].words[0]))  # fmt: skip


def _relation_noun(unit: Unit) -> bool:
    """Whether a unit is one plural noun that a link "of" or "to" joins to the topic after it, as no term: it may
    name a relation to the topic ("What are the *applications* of X?", "*alternatives* to X", "*limitations* of
    X"), which :func:`_spread` tells from a topic ("*attacks* on X"), as is a plural of `GENERIC_HEADS` that any
    link joins to it ("*problems* in X", "*settings* with X"); or one noun of either number that relates two topics
    (``spans``: "the *impact* of X on Y", "X's *impact* on Y"; "the *fairness* of X" names a topic)."""
    if len(unit.words) != 1:
        return False
    word = unit.words[0]
    # (a generic head joined to the topic by any link, "What papers tackle *problems* in X?", is weighed so too)
    related = unit.relation or (unit.linked and word in GENERIC_HEADS)
    return (related and plural_noun(word)) or (unit.spans and "NOUN" in word_classes(word))


def _spread(words: str, lexicon: Lexicon) -> float | None:
    """The cohesion of a verb, of a verb and its object as typed, or of a noun (over the papers using any form of its
    words, at least :data:`VERB_PAPERS`), when below :data:`COHESIVE`; None otherwise. On the conference dev pool,
    "exploit" -0.005, "harness" -0.003, "incorporate" 0.023, "leverage" 0.020, "analyze" -0.029, "take advantage"
    0.010, "applications" 0.015, "alternatives" 0.027, against "prune" 0.104, "distill" 0.060, "edit" 0.061,
    "compress" 0.075, "transfer" 0.148, "jailbreak" 0.240, "attacks" 0.122. (A word of the request that the
    dictionary also knows as a noun, such as "exploit", the topicality model weighs as a noun: 0.94 beside
    "information bottleneck".)"""
    cohesion = lexicon.cohesion(words, least=VERB_PAPERS)
    return cohesion if cohesion is not None and cohesion < COHESIVE else None


def _cohesions(
    facet: Facet, lexicon: Lexicon, fits: Callable[[list[str]], bool], keep: Set[str] = frozenset()
) -> list[float] | None:
    """The cohesion of each alternative of the facet, when every one's content words ``fits`` and every one is
    measured; None otherwise (looked at in order, and no further than the first that does not). ``keep``: the
    stop-words counted as content words ("work" of "prior work" for :func:`_scattered`)."""
    out = []
    for alt in facet.alternatives:
        if not fits([w for w in tokens(alt) if w not in STOPWORDS or w in keep]):
            return None
        cohesion = lexicon.cohesion(alt)
        if cohesion is None:
            return None
        out.append(cohesion)
    return out


GOES_WITH = 3.0  # a unit stated with the question's main topic this many times more often than chance is a topic
GOES_WITH_P = 1e-4  # … and so often that chance would give as many joint papers with at most this probability
TAIL_TERMS = 100  # the Poisson tail is summed over this many terms; past them, its Chernoff bound is used


def _poisson_tail(k: int, mu: float) -> float:
    """P(X >= k) for X ~ Poisson(mu), for k >= mu: the number of papers that would state two words together by
    chance, when each paper states each word independently at its corpus rate."""
    if k <= 0:
        return 1.0
    if mu <= 0:
        return 0.0
    if k > TAIL_TERMS:  # exp(-mu) (e mu / k)^k bounds the tail
        return math.exp(min(0.0, -mu + k * (1 + math.log(mu / k))))
    log_mu = math.log(mu)
    log_term = -mu + k * log_mu - math.lgamma(k + 1)
    total = 0.0
    for i in range(k, k + TAIL_TERMS):
        total += math.exp(log_term)
        log_term += log_mu - math.log(i + 1)
    return min(1.0, total)


def _joint(facet: Facet, topic: Facet, lexicon: Lexicon) -> list[tuple[int, int, float]]:
    """For each alternative of the unit: the papers that state it, those that state it with the topic, and how many
    of those chance would give (each paper stating each at its corpus rate, independently). Every count comes from
    the same phrase search, each alternative in the spelling the corpus uses ("multi modal learning" as
    "multimodal learning": typed apart, no paper states it, and the pair had read one way in one order only)."""
    b = topic.all_spellings()[0]
    nb = lexicon.both_df(b, b)
    size = max(lexicon.size, 1)
    return [(na, lexicon.both_df(a, b), na * nb / size) for a in [g[0] for g in facet.groups()]
            for na in [lexicon.both_df(a, a)]]  # fmt: skip


def _never_with(facet: Facet, topic: Facet, lexicon: Lexicon) -> bool:
    """Whether the corpus states the unit (some alternative of it), but no alternative of it in any paper that
    states the topic: as a gate it could only empty the answer, or let in papers that hold its words loosely.
    Topics asked together co-occur; a phrase of the request, however topical it looks ("prior art on X",
    "contributions", "learn more about X"), need not. (Whether it co-occurs more than chance would say is too
    noisy at the counts of one topic: "recurrent networks" with "language modeling".)"""
    counts = _joint(facet, topic, lexicon)
    if not any(na for na, _, _ in counts) or any(both for _, both, _ in counts):
        return False
    # (nor in another of their spellings: "reinforcement learning techniques", which no paper on robotic manipulation
    # states, is also "reinforcement learning", which 69 do)
    return not any(
        lexicon.both_df(a, b) for a in facet.all_spellings()[:SPELLINGS_TOGETHER]
        for b in topic.all_spellings()[:SPELLINGS_TOGETHER]
    )  # fmt: skip


def _goes_with(facet: Facet, main: Facet, lexicon: Lexicon) -> bool:
    """Whether the corpus states any alternative of the unit together with the question's main topic far more
    often than chance ("planning" with "autonomous driving", "safety" with "language models"): topics asked
    together co-occur in papers, while a word of the request ("worked", "state-of-the-art", "start") is about as
    common beside the topic as anywhere. How far is a significance, not a count of papers: two joint papers are
    telling for rare words, twenty may be chance for common ones."""
    return any(
        both and both >= GOES_WITH * expected and _poisson_tail(both, expected) <= GOES_WITH_P
        for _, both, expected in _joint(facet, main, lexicon)
    )
