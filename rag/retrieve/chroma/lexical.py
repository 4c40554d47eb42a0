"""The SQLite FTS5 (BM25) index as the query path reads it: search by words, phrases and facets
(:class:`~rag.retrieve.index.LexicalSearch`), and the corpus statistics the planner reads questions with, each
computed once per store revision (:class:`~rag.retrieve.index.LexicalStats`). A damaged index file is rebuilt from
the store (:meth:`rag.retrieve.chroma.freshness.StoreFreshness.call`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from askpapers.rag.retrieve.chroma.freshness import FreshRole
from askpapers.vectorstore.lexical import LexicalIndex, phrase_key
from askpapers.vectorstore.types import Filters, Listed

T = TypeVar("T")


class ChromaLexical(FreshRole):
    """BM25 over the titles and abstracts of the store's papers."""

    def lexical_search(self, query: str, n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """BM25 over the query's words: (paper_id, score), best first."""
        return self.fresh.call(lambda index: index.search(query, n, filters))

    def phrase_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers stating one of the phrases (consecutive stemmed words), best BM25 first."""
        return self.fresh.call(lambda index: index.phrase_search(phrases, n, filters))

    def facet_search(self, facets: list[list[str]], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers stating a phrase of every facet, best BM25 first."""
        return self.fresh.call(lambda index: index.facet_search(facets, n, filters))

    def all_words_search(self, phrases: list[str], n: int, filters: Filters | None = None) -> list[tuple[str, float]]:
        """Papers holding every content word of one of the phrases anywhere, best BM25 first."""
        return self.fresh.call(lambda index: index.all_words_search(phrases, n, filters))

    def phrase_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]:
        """Every paper stating one of the phrases, unranked."""
        return self.fresh.call(lambda index: index.phrase_ids(phrases, filters))

    def all_words_ids(self, phrases: list[str], filters: Filters | None = None) -> set[str]:
        """Every paper holding every content word of one of the phrases anywhere, unranked."""
        return self.fresh.call(lambda index: index.all_words_ids(phrases, filters))

    def surface_ids(self, queries: list[list[list[str]]], in_a_row: bool = True) -> set[str]:
        """Every paper whose words as written meet one of the queries (slots of words), unranked."""
        return self.fresh.call(lambda index: index.surface_ids(queries, in_a_row))

    def field_scores(self, query: str, paper_ids: Sequence[str]) -> dict[str, tuple[float, float, float]]:
        """BM25 of the query's words in each paper: (title and abstract, title, abstract)."""
        return self.fresh.call(lambda index: index.field_scores(query, list(paper_ids)))


class ChromaStats(FreshRole):
    """The vocabulary, for reading questions: word and phrase counts, venues and the paper count, per revision."""

    def _stat(self, key: str, compute: Callable[[LexicalIndex], T]) -> T:
        """A corpus statistic, computed once per store revision."""
        self.refresh()  # (a changed store empties the cache first)
        key = f"{self.seen_revision}\0{key}"  # (and a value computed as it changed is never read at the next one)
        found = self.caches.stats.get(key)
        if found is None:
            found = self.fresh.call(compute)
            self.caches.stats.put(key, found)
        return found  # type: ignore[return-value]

    def word_df(self, words: Sequence[str]) -> dict[str, int]:
        """The document frequency of each word the corpus uses (words it never uses are left out); one query for
        those not counted yet at this revision."""
        self.refresh()
        prefix = f"{self.seen_revision}\0df\0"
        wanted = list(dict.fromkeys(words))
        stats = self.caches.stats
        known = {w: stats.get(prefix + w) for w in wanted}
        missing = [w for w, n in known.items() if n is None]
        if missing:
            found = self.fresh.call(lambda index: index.word_df(missing))
            for w in missing:
                known[w] = found.get(w, 0)
                stats.put(prefix + w, known[w])
        return {w: n for w, n in known.items() if n}  # type: ignore[misc]

    def words_with_stems(self, stems: Sequence[str]) -> list[tuple[str, int]]:
        key = "stems\0" + "\0".join(sorted(set(stems)))
        return self._stat(key, lambda index: index.words_with_stems(stems))

    def vocabulary(self, min_df: int = 1) -> list[tuple[str, int]]:
        return self.fresh.call(lambda index: index.vocabulary(min_df))

    def phrase_count(self, phrase: str) -> int:
        """Papers stating the phrase (an FTS5 count, not a list of ids), counted once per store revision for all
        the phrases FTS5 reads alike (:func:`phrase_key`: the planner counts a spelling's word forms, and at 50k
        papers half of its counts were of a form already counted)."""
        return self._stat("phrase\0" + phrase_key(phrase), lambda index: index.phrase_count(phrase))

    def facet_count(self, facets: list[list[str]]) -> int:
        """Papers stating a phrase of every facet (an FTS5 count)."""
        key = "facets\0" + "\1".join("\0".join(f) for f in facets)
        return self._stat(key, lambda index: index.facet_count(facets))

    def venues(self) -> list[str]:
        return self._stat("venues", lambda index: index.venues())

    def years(self) -> list[int]:
        return self._stat("years", lambda index: index.years())

    def listing(self) -> list[Listed]:
        """Every paper's id, title, venue and year, from the BM25 index (no record is read from the store)."""
        return self.fresh.call(lambda index: index.listing())

    def sample_ids(self, n: int) -> list[str]:
        """``n`` papers' ids chosen by a hash of the id, from the BM25 index's row ids (no record is read)."""
        return self.fresh.call(lambda index: index.sample_ids(n))

    def size(self) -> int:
        """Papers in the BM25 index (the store's count, without a request to Chroma; once per revision)."""
        return self._stat("size", lambda index: index.size())
