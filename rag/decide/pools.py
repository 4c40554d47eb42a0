"""The papers that may meet a facet, found without reading the rest: those that state one of its spellings (an FTS5
phrase search, with the acronyms and long forms the corpus defines for them and, in a question with several facets,
its words anywhere or a shorter form of it) and those close to it in embedding space. The matcher
(:mod:`rag.decide.match`) decides which of them meet it, through :class:`FacetPools`.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import replace

from askpapers.rag.decide.acronyms import (
    acronym_core,
    definitions_of,
    long_forms,
    maybe_acronym,
    short_acronyms,
    spellings,
)
from askpapers.rag.decide.evidence import one_words
from askpapers.rag.read.cues import GENERIC_HEADS, MODEL_HEADS, RELATIONAL, is_acronym
from askpapers.rag.read.expand import headless
from askpapers.rag.read.lexicon import zipf
from askpapers.rag.retrieve.index import Index
from askpapers.rag.settings import AnswerSettings
from askpapers.rag.types import Facet
from askpapers.vectorstore.terms import (
    RESPELLINGS,
    respelled,
    same_term,
    splits,
    term_stems,
    written_form_words,
    written_forms,
)
from askpapers.vectorstore.text import STOPWORDS, stems, tokens
from askpapers.vectorstore.types import ChunkHit, Filters

NEAR_MAX = 2000  # papers checked by embedding for a facet they do not state
DEFINERS = 60  # papers read for the acronyms and long forms they define for a facet
HEAD_SHARE = 0.25  # a shorter form in this share of papers or more is too common to find a facet by
# a phrase without its first modifier names it only if this share of the papers stating it state the whole
CORE_SHARE = 0.2
# a shorter form whose every word is this rare in general English (wordfreq's Zipf scale: under about 0.3 uses per
# million words) is jargon: it names the facet alone ("unlearning" 2.1, "splatting" 1.4), where a word of everyday
# English has other senses ("bottleneck" 3.0, "transport" 4.7, "radiance" 3.0, "series" 5.4)
JARGON_ZIPF = 2.5
VAGUE = (
    GENERIC_HEADS | MODEL_HEADS | frozenset({"examples", "data", "tasks", "task", "results", "learning", "training"})
)
WRITTEN_CACHE = 256  # facets' other writings kept (see FacetPools.written)
# a two-letter acronym ("RL") names a phrase only where the corpus defines it so: at least SHORT_DEFINERS of the
# DEFINERS papers that use it most define it, and at least SHORT_SHARE of those define it as the phrase (in the
# conference dev pool "RL" is "reinforcement learning" in 135 of 136 definitions, "LM" "language model" in 48 of 48;
# "DP" is "differential privacy" in 5 of 8, "ML" "machine learning" in 7 of 9: they are not taken)
SHORT_DEFINERS = 3
SHORT_SHARE = 0.9
SURFACE_FORMS = 12  # a word's forms the surface search asks for (a phrase's choices multiply: see _bounded)
SURFACE_PHRASES = 512  # phrases one spelling may expand to (3 words of 8 forms each); one with more is not asked
Pool = tuple[set[str], dict[str, ChunkHit]]  # the papers that may meet a facet, and their best chunks for it


def _bounded(slots: list[list[str]]) -> bool:
    """Whether a phrase of these slots expands to at most :data:`SURFACE_PHRASES` phrases."""
    n = 1
    for slot in slots:
        n *= len(slot)
    return n <= SURFACE_PHRASES


def unrelational(phrase: str) -> str:
    """The phrase's words without the relating parts of its compounds ("language-guided" -> "language")."""
    return " ".join(w for w in tokens(phrase) if w not in RELATIONAL)


class FacetPools:
    """A facet's spellings as the corpus writes them, its shorter forms, and the papers that may meet it."""

    def __init__(self, index: Index, rule: AnswerSettings) -> None:
        self.index = index
        self.rule = rule
        self._written: dict[tuple[str, tuple[str, ...]], dict[str, list[str]]] = {}  # (see written)
        self._defined_as: dict[tuple[str, str], list[str]] = {}  # (see _definitions)

    def dense(self, facet: Facet, filters: Filters | None, within: list[str] | None) -> dict[str, ChunkHit]:
        """Each paper's most similar chunk to any of the facet's first spellings."""
        best: dict[str, ChunkHit] = {}
        for spelling in facet.all_spellings()[: self.rule.dense_spellings]:
            if within is not None:
                hits = self.index.best_chunks_within(spelling, within)
            else:
                hits = self.index.best_chunks(spelling, self.rule.dense_topic_chunks, filters)
            for pid, hit in hits.items():
                if pid not in best or hit.similarity > best[pid].similarity:
                    best[pid] = hit
        return best

    def pool(
        self, facet: Facet, filters: Filters | None, within: list[str] | None,
        dense_search: Future[dict[str, ChunkHit]], loose: bool = False, cores: Sequence[str] = (),
    ) -> Pool:  # fmt: skip
        """Only two kinds of paper can meet a facet: those that state a spelling of it (an FTS5 phrase query, or
        with ``loose`` any query holding its words) or one of ``cores``, and those whose best chunk is close
        enough; nothing else needs to be read. ``dense_search``: :meth:`dense` for the facet, which the caller
        started on a worker thread (its embeddings and Chroma's queries run beside the phrase lookups)."""
        if within is not None:
            return set(within), dense_search.result()
        # every paper that states it (unranked: the count is the true total, whatever k is), in either spelling
        found = self.index.phrase_ids(facet.all_spellings(), filters)
        if other := [*respelled(facet.all_spellings()), *self.written_apart(facet.all_spellings())]:
            found |= self.index.phrase_ids(other, filters)
        # ... and written as one word ("finetuning" of "fine-tuning"), or with a word of it written apart or two
        # written as one ("multi agent reinforcement learning" of "multiagent reinforcement learning")
        if joined := ["".join(t) for s in facet.all_spellings() if len(t := tokens(s)) > 1]:
            found |= self.index.phrase_ids(joined, filters)
        if apart := [v for forms in self.written(facet.all_spellings()).values() for v in forms]:
            found |= self.index.phrase_ids(apart, filters)
        extra = self.defined_forms(facet, filters)
        if extra:
            found |= self.index.phrase_ids(extra, filters)
        if loose:
            held = [unrelational(s) for s in facet.all_spellings()]  # as holds_words reads them
            found |= self.index.all_words_ids([h for h in held if h], filters)
        if cores:
            found |= self.index.phrase_ids(list(cores), filters)
        dense = dense_search.result()
        found |= {pid for pid, hit in dense.items() if hit.similarity >= self.rule.dense_with_terms}
        return found, dense

    def defined_forms(self, facet: Facet, filters: Filters | None) -> list[str]:
        """The acronyms and long forms the papers define for the facet's spellings ("GANs" ↔ "generative
        adversarial networks"), read from the :data:`DEFINERS` papers that state it best."""
        definers = [pid for pid, _ in self.index.phrase_search(facet.all_spellings(), DEFINERS, filters)]
        texts = [p.abstract for p in self.index.papers(definers).values()]
        defined = spellings(facet.all_spellings(), texts)
        unfiltered = filters is None or filters.empty  # (the papers short_forms would read)
        shorts = [a for forms in self.short_forms(facet, texts if unfiltered else None).values() for a in forms]
        return [v for forms in defined.values() for v in [*forms, *shorts] if v not in facet.all_spellings()]

    def short_forms(self, facet: Facet, texts: list[str] | None = None) -> dict[str, list[str]]:
        """Each spelling's two-letter acronyms that name it in this corpus ("RL" for "reinforcement learning"):
        defined for it by the :data:`DEFINERS` papers stating it best (``texts``, when the caller has read them),
        and so defined by :data:`SHORT_SHARE` of the papers that define it among those that use it most
        (:data:`SHORT_DEFINERS` at least), so that "DP" does not stand for "differential privacy" where it is also
        "dynamic programming". Matched as written, in capitals (:func:`~rag.decide.evidence.states`). Looked up
        once per spellings and store revision."""
        key = (self.index.seen_revision, ("short", *facet.all_spellings()))
        if (got := self._written.get(key)) is not None:
            return got
        if texts is None:
            definers = [pid for pid, _ in self.index.phrase_search(facet.all_spellings(), DEFINERS)]
            texts = [p.abstract for p in self.index.papers(definers).values()]
        found = short_acronyms(facet.all_spellings(), texts)
        out: dict[str, list[str]] = {}
        for spelling, acronyms in found.items():
            for acronym in acronyms:
                if self._names(acronym, spelling):
                    out.setdefault(spelling, []).append(acronym)
        for spelling in facet.all_spellings():
            if inner := self._inner_short(spelling):
                out[spelling] = [*out.get(spelling, []), *inner]
        if len(self._written) >= WRITTEN_CACHE:
            self._written.clear()
        self._written[key] = out
        return out

    def _names(self, acronym: str, phrase: str) -> bool:
        """Whether the corpus defines the two-letter acronym as the phrase: :data:`SHORT_SHARE` of the definitions
        read from the papers that use it most, :data:`SHORT_DEFINERS` at least."""
        longs = self._definitions(acronym)
        return len(longs) >= SHORT_DEFINERS and longs.count(" ".join(stems(phrase))) >= SHORT_SHARE * len(longs)

    def _inner_short(self, spelling: str) -> list[str]:
        """The spelling with two words of it in a row written as the two-letter acronym the corpus defines for
        them (:meth:`_names`): "offline RL" of "offline reinforcement learning", "multi agent RL" of "multi-agent
        reinforcement learning", which papers write once "RL" is defined, or without defining it at all. Only in a
        spelling of three words or more: a phrase of two is its acronym alone, found by :meth:`short_forms`."""
        words = tokens(spelling)
        out = []
        for i in range(len(words) - 1 if len(words) > 2 else 0):
            pair = words[i : i + 2]
            if any(w in STOPWORDS or not w[:1].isalpha() for w in pair):
                continue
            acronym = (pair[0][0] + pair[1][0]).upper()
            if self._names(acronym, " ".join(pair)):
                out.append(" ".join([*words[:i], acronym, *words[i + 2 :]]))
        return out

    def _definitions(self, acronym: str) -> list[str]:
        """What the :data:`DEFINERS` papers that use a two-letter acronym most define it as (once per store
        revision: many questions' facets have the same one, "RL")."""
        key = (self.index.seen_revision, acronym)
        if (got := self._defined_as.get(key)) is not None:
            return got
        users = [pid for pid, _ in self.index.phrase_search([acronym], DEFINERS)]
        longs = definitions_of(acronym, [p.abstract for p in self.index.papers(users).values()])
        if len(self._defined_as) >= WRITTEN_CACHE:
            self._defined_as.clear()
        self._defined_as[key] = longs
        return longs

    def stated(
        self, facet: Facet, filters: Filters | None, loose: bool = False, cores: Sequence[str] = ()
    ) -> tuple[set[str], set[str]] | None:
        """The papers the index shows to meet the facet without its embedding, as the matcher reads a paper
        (:meth:`~rag.decide.match.FacetMatcher.meets`): those stating one of its spellings, an acronym or long form
        the corpus defines for them (:meth:`defined_forms`) or one of ``cores``, each word in a form that is the
        same term (:func:`~vectorstore.terms.same_term`: "transformers" finds "transformer", not "transformation");
        and, with ``loose``, those and the papers holding every content word of a spelling anywhere (the matcher
        needs them in one sentence, which the index cannot tell: such papers are read, not counted; without
        ``loose``, the same set twice). Found in the index's table of the words as written, from the forms its
        vocabulary holds; not restricted by ``filters`` (they choose the acronyms read). None when a spelling's
        words take too many forms to ask for (:data:`SURFACE_PHRASES`)."""
        forms = list(dict.fromkeys([*facet.all_spellings(), *self.defined_forms(facet, filters), *cores]))
        forms += [v for vs in self.written(facet.all_spellings()).values() for v in vs if v not in forms]
        words = [tokens(f) for f in forms]
        joined = ["".join(w) for w in words if len(w) > 1]
        held = [([w for w in t if w not in STOPWORDS and w not in RELATIONAL], t) for t in words] if loose else []
        apart = self._apart(forms)
        same = self.same_terms({w for ws in words for w in ws} | set(joined) | {b for _, _, b in apart})
        for form in forms:  # (an acronym is itself or its plural, never a word it stems to: "ats" is not "at")
            if (core := acronym_core(form.strip()).lower()) and core in same:
                same[core] = [v for v in same[core] if v in (core, core + "s")]
            if core and core + "s" in same:
                same[core + "s"] = [v for v in same[core + "s"] if v in (core, core + "s")]
        # (a form that is, or the corpus also writes as, one word takes a derived noun's noun forms only: states)
        one = one_words(forms)
        alone = {w: [v for v in same[w] if same_term(w, v, True)] for w in same}
        phrases = [[(alone if "".join(ws) in one else same)[w] for w in ws] for ws in words if ws]
        phrases += [[alone[j]] for j in joined]
        # (a word written as two: the second in any form that keeps the whole the same term, "fine tuning")
        phrases += [[[a], [v for v in same[b] if same_term(w, a + v, True)]] for w, a, b in apart]
        if not all(_bounded(p) for p in phrases):
            return None
        found = self.index.surface_ids(phrases, in_a_row=True)
        if not loose:
            return found, found
        anywhere = self.index.surface_ids(
            [[(alone if "".join(t) in one else same)[w] for w in ws] for ws, t in held if ws], in_a_row=False
        )
        return found, found | anywhere

    def written(self, phrases: Sequence[str]) -> dict[str, list[str]]:
        """Each phrase of several words written another way the corpus states: a word of it as two words the
        corpus uses, or two of its words as one ("multi agent reinforcement learning" of "multiagent reinforcement
        learning", and the other way round), at most :data:`~vectorstore.terms.RESPELLINGS` each. (The pool, the
        matcher's variants and the count of a large set all ask: looked up once per phrases and store revision.)"""
        key = (self.index.seen_revision, tuple(phrases))
        if (got := self._written.get(key)) is not None:
            return got
        out: dict[str, list[str]] = {}
        for phrase in phrases:
            words = tokens(phrase)
            if len(words) < 2:
                continue
            used = self.index.word_df(sorted(written_form_words(words)))
            forms = written_forms(words, used.__contains__)  # (word_df leaves out the words the corpus never uses)
            if kept := [f for f in forms if self.index.phrase_count(f) > 0][:RESPELLINGS]:
                out[phrase] = kept
        if len(self._written) >= WRITTEN_CACHE:
            self._written.clear()
        self._written[key] = out
        return out

    def written_apart(self, phrases: Sequence[str]) -> list[str]:
        """The one-word phrases written as two words the corpus uses ("fine tuning" of "finetuning", "multi agent"
        of "multiagent"): the matcher takes them for the word (:func:`~rag.decide.evidence.states`)."""
        return [f"{a} {b}" for _, a, b in self._apart(phrases)]

    def _apart(self, phrases: Sequence[str]) -> list[tuple[str, str, str]]:
        """(word, first part, second part) of :meth:`written_apart`."""
        words = [t[0] for p in phrases if len(t := tokens(p)) == 1]
        parts = sorted({x for w in words for ab in splits(w) for x in ab})
        used = self.index.word_df(parts) if parts else {}
        return [(w, a, b) for w in words for a, b in splits(w) if used.get(a) and used.get(b)]

    def same_terms(self, words: set[str]) -> dict[str, list[str]]:
        """Each word's forms in the corpus vocabulary that are the same term (the word itself first), most used
        first, at most :data:`SURFACE_FORMS`."""
        keys = {w: term_stems(w) for w in words}
        vocab = self.index.words_with_stems(sorted({k for ks in keys.values() for k in ks}))
        by_df = [v for v, _ in sorted(vocab, key=lambda x: (-x[1], x[0]))]
        return {w: list(dict.fromkeys([w, *(v for v in by_df if same_term(w, v))]))[:SURFACE_FORMS] for w in words}

    def defined(self, facet: Facet, filters: Filters | None) -> Facet:
        """The facet with the long forms the corpus defines for its acronyms, first, so that an acronym and its
        long form are read alike ("LLMs", "llms" and "large language models"; the long form's embedding says
        more), and an acronym typed in lower case as the corpus writes it; an acronym inside a phrase is spelled
        out too ("deep RL" is also "deep reinforcement learning"). The other way round needs nothing: the
        acronyms defined for a long form are read from each paper (:func:`spellings`), and a short acronym
        searched on its own would find its other meanings ("CL")."""
        groups = facet.groups()
        inner = sorted({w for g in groups for s in g if " " in s.strip() for w in s.split() if is_acronym(w)})
        if not inner and not any(maybe_acronym(s) for g in groups for s in g):
            return facet
        hits = [pid for pid, _ in self.index.phrase_search([*facet.all_spellings(), *inner], DEFINERS, filters)]
        texts = [p.abstract for p in self.index.papers(hits).values()]
        spelled = {w: long_forms([w], texts)[0][:1] for w in inner}
        out = []
        for group in groups:
            longs, written = long_forms([s for s in group if maybe_acronym(s)], texts)
            longs += [" ".join(spelled[w][0] if spelled.get(w) else w for w in s.split()) for s in group if " " in s]
            longs = [f for f in dict.fromkeys(longs) if all(stems(f) != stems(s) for s in group)]
            same = [written.get(" ".join(stems(s)), s) if longs else s for s in group]
            out.append(tuple(dict.fromkeys([*longs, *same])))
        return replace(facet, spellings=tuple(out))

    def jargon(self, facet: Facet) -> list[str]:
        """The facet's shorter forms (:meth:`cores`) that are jargon: every word rare in general English (below
        :data:`JARGON_ZIPF`). Such a form names the facet even in a question of one facet: most papers stating
        "unlearning" study machine unlearning, and the corpus says so (it passed :meth:`cores`' share test), while
        a paper stating "bottleneck" need not be about the information bottleneck."""
        out = []
        for form in self.cores(facet):
            words = [w for w in tokens(form) if w not in STOPWORDS]
            if words and all(zipf(w) < JARGON_ZIPF for w in words):
                out.append(form)
        return out

    def cores(self, facet: Facet) -> list[str]:
        """Shorter forms of the facet's spellings that still name it, unless vague or too common to find it by:
        the phrase without a generic head ("diffusion" of "diffusion models"), and the phrase without its first
        modifier ("manipulation" of "robotic manipulation", "neural networks" of "deep neural networks") when the
        corpus says the modifier is what the shorter form usually means: at least :data:`CORE_SHARE` of the papers
        stating the shorter form state the whole phrase ("inference" does not name "variational inference")."""
        size = max(1, self.index.size())
        forms: list[str] = []
        for s in facet.all_spellings():
            words = [w for w in tokens(s) if w not in STOPWORDS]
            if len(words) < 2:
                continue
            rest = " ".join(words[1:])
            if rest not in VAGUE and words[1] not in RELATIONAL:
                whole, short = self.index.phrase_count(s), self.index.phrase_count(rest)
                if 0 < short < HEAD_SHARE * size and whole >= CORE_SHARE * short:
                    forms.append(rest)
            parts, relational = s.split(), len(words) > 2 and words[-2] in RELATIONAL
            if relational or (len(parts) > 1 and "-" in parts[-2]):
                # a hyphenated modifier without its head: "retrieval-augmented" of "retrieval-augmented generation",
                # "sim-to-real" of "sim-to-real transfer" (as written: its stop-words are part of it)
                modifier = " ".join(words[:-1]) if relational else " ".join(parts[:-1])
                whole, short = self.index.phrase_count(s), self.index.phrase_count(modifier)
                if 0 < short < HEAD_SHARE * size and whole >= CORE_SHARE * short:
                    forms.append(modifier)
            if (kept := headless(words)) is not None:  # the head the planner drops too (rag.read.expand)
                head = " ".join(kept)
                if head not in VAGUE and 0 < self.index.phrase_count(head) < HEAD_SHARE * size:
                    forms.append(head)
        return list(dict.fromkeys(forms))

    def similarities(self, facets: list[Facet], pools: list[Pool], ids: list[str]) -> None:
        """Each candidate's embedding similarity to each facet, for those not among the facet's nearest chunks."""
        if not ids:
            return
        vectors = self.index.vectors(ids)
        queries = self.index.embedder.embed([f.all_spellings()[0] for f in facets])
        for (_, dense), query in zip(pools, queries, strict=True):
            for pid, vec in vectors.items():
                sim = float(vec @ query)
                if pid not in dense or dense[pid].similarity < sim:
                    dense[pid] = ChunkHit(pid, dense[pid].text if pid in dense else "", sim)

    def near(self, facets: list[Facet], pools: list[Pool], have: list[str]) -> list[str]:
        """Papers in the pools of all facets but one, whose embedding is close to that facet's text."""
        seen = set(have)
        extra: list[str] = []
        for k, facet in enumerate(facets):
            others = [found for j, (found, _) in enumerate(pools) if j != k]
            cands = sorted(pid for pid in set.intersection(*others) if pid not in seen and pid not in pools[k][0])
            if not cands:
                continue
            query = self.index.embed(facet.all_spellings()[0])
            for pid, vec in self.index.vectors(cands[:NEAR_MAX]).items():
                sim = float(vec @ query)
                if sim >= self.rule.dense_with_terms:
                    pools[k][1].setdefault(pid, ChunkHit(pid, "", sim))
                    pools[k][0].add(pid)
                    extra.append(pid)
                    seen.add(pid)
        return extra
