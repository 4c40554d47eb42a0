"""The Papers tab's table, a page at a time: the corpus sorted and searched by its listing, records read per page.

The order of every paper (by title, venue or year) and a search's matches come from the listing the lexical
index keeps (:meth:`rag.retrieve.index.LexicalStats.listing`: id, shown title, venue, year; no abstract), so
sorting and searching cover the whole corpus; only the papers of the page shown are read from the store. The
ordered ids of the last few (revision, search, sort) are kept, so turning pages reads the listing once.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from askpapers.rag.report.latex import latex_text
from askpapers.rag.retrieve.index import Index
from askpapers.vectorstore.text import printable
from askpapers.vectorstore.types import Listed, Paper

SORTS = ("Title", "Venue", "Newest first", "Oldest first")
SORTED_BY = {"Title": "by title", "Venue": "by venue, then title", "Newest first": "newest first, then by title",
             "Oldest first": "oldest first, then by title"}  # fmt: skip
ORDERS_KEPT = 4  # (revision, search, sort) orders kept: one per sort of the current search


def shown_title(title: str) -> str:
    """A title as one line of plain text, its LaTeX (``$\\ell_2$``) as Unicode: as the table shows it."""
    return latex_text(printable(title, newlines=False))


def sort_key(sort: str) -> Callable[[Listed], tuple[object, ...]]:
    """The key that orders listed papers as the "Sort by" control names (an unknown name sorts by title); ties
    by title, then id, so the order is total and a page always holds the same papers."""

    def title(r: Listed) -> tuple[str, str]:
        return shown_title(r.title).lower(), r.paper_id

    if sort == "Venue":
        return lambda r: (not r.venue, r.venue.lower(), *title(r))
    if sort == "Newest first":
        return lambda r: (r.year is None, -(r.year or 0), *title(r))
    if sort == "Oldest first":
        return lambda r: (r.year is None, r.year or 0, *title(r))
    return title


def matching(listed: Sequence[Listed], query: str, found: Sequence[str]) -> list[Listed]:
    """The listed papers a search matches: those ``found`` (the text search over titles and abstracts), or whose
    venue, year or id contains the query."""
    q = query.strip().lower()
    hits = set(found)
    return [
        r for r in listed if r.paper_id in hits or any(q in s.lower() for s in (r.venue, str(r.year or ""), r.paper_id))
    ]


@dataclass(frozen=True)
class PaperPage:
    """One page of the table: its papers' records in order, where it is, and how many papers there are."""

    papers: list[Paper]
    page: int  # 1-based (the last page when a later one was asked for)
    pages: int  # at least 1
    page_size: int
    matched: int  # papers the search matches (all of them without a search)
    total: int  # papers in the corpus
    query: str = ""
    sort: str = "Title"

    @property
    def first(self) -> int:
        """The position of the page's first paper among the matches (1-based; 0 when there are none)."""
        return (self.page - 1) * self.page_size + 1 if self.papers else 0

    def summary(self) -> str:
        """What the table shows, in words (Markdown): the count, the search's matches, the order and the page."""
        order = SORTED_BY.get(self.sort, SORTED_BY["Title"])
        if self.query:
            head = f"**{self.matched:,} of {self.total:,} papers** match the search (title, abstract, venue or year)"
        else:
            head = f"**{self.total:,} papers** in the corpus"
        if not self.papers:
            return f"{head}."
        last = self.first + len(self.papers) - 1
        where = f"page {self.page:,} of {self.pages:,} (papers {self.first:,}–{last:,})"
        return f"{head}, sorted {order} across all pages; {where}. Click a row to read its abstract."


class Catalogue:
    """Pages of the corpus for one index; thread-safe (the web app's sessions share it)."""

    def __init__(self, index: Index, page_size: int) -> None:
        self.index = index
        self.page_size = max(1, page_size)
        self._orders: OrderedDict[tuple[str, str, str], list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def order(self, query: str, sort: str, find: Callable[[str], list[str]]) -> list[str]:
        """The ids of the papers the search matches (every paper without one), in the sort's order; kept for the
        last few searches and sorts of this revision."""
        query = query.strip()
        key = (self.index.revision, query, sort)
        with self._lock:
            if key in self._orders:
                self._orders.move_to_end(key)
                return self._orders[key]
        listed = self.index.listing()
        if query:
            listed = matching(listed, query, find(query))
        ids = [r.paper_id for r in sorted(listed, key=sort_key(sort))]
        with self._lock:
            self._orders[key] = ids
            while len(self._orders) > ORDERS_KEPT:
                self._orders.popitem(last=False)
        return ids

    def page(self, page: int, query: str, sort: str, find: Callable[[str], list[str]]) -> PaperPage:
        """Page ``page`` (1-based; clamped to the pages there are) of the search's matches in the sort's order:
        only its papers' records are read from the store."""
        ids = self.order(query, sort, find)
        pages = max(1, math.ceil(len(ids) / self.page_size))
        page = min(max(1, int(page)), pages)
        start = (page - 1) * self.page_size
        wanted = ids[start : start + self.page_size]
        records = self.index.papers(wanted)
        return PaperPage(
            papers=[records[pid] for pid in wanted if pid in records],
            page=page,
            pages=pages,
            page_size=self.page_size,
            matched=len(ids),
            total=self.index.size() if query.strip() else len(ids),
            query=query.strip(),
            sort=sort if sort in SORTS else "Title",
        )
