"""One interface for reading a question into a :class:`~rag.types.QueryPlan`, and the two readers behind it.

- :class:`RuleReader` reads the question as typed, in three stages over the corpus's lexicon: parse
  (:mod:`.parse`), resolve (:mod:`.resolve`) and expand (:mod:`.expand`), run by :func:`rag.read.query.plan`. Every
  question is read by it first.
- :class:`CondensedReader` reads the LLM's condense output (:class:`~rag.types.Condensed`: the message as an English
  search, with the facets the model saw in it). The English query is read by the rule reader; when that leaves no
  facet that must hold, the model's facets are taken instead, through the same resolve and expand stages as the
  rule reader's units (so the same lexicon validates and spells them). The LLM answerer uses it only for a question
  with no Latin-script topic words ("有哪些关于模型合并的论文？"), which the rule reader cannot read.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol

from askpapers.rag.read.cues import tokens
from askpapers.rag.read.lexicon import Lexicon
from askpapers.rag.read.parse import MAX_ALTERNATIVES, MAX_FACETS, Item, Unit, bounded, grouped
from askpapers.rag.read.query import plan
from askpapers.rag.read.resolve import resolve
from askpapers.rag.types import Condensed, Facet, QueryPlan


class QueryReader(Protocol):
    """Reads a (validated) question into a plan; the lexicon it reads with is given when it is made."""

    def read(self, question: str) -> QueryPlan:
        """The plan of ``question``."""


class RuleReader:
    """The rule-based reader: the question as typed, parsed, resolved and expanded over ``lexicon``. ``weigh=False``
    keeps every facet as read (to train the topicality model)."""

    def __init__(self, lexicon: Lexicon, weigh: bool = True) -> None:
        self.lexicon = lexicon
        self.weigh = weigh

    def read(self, question: str) -> QueryPlan:
        return plan(question, self.lexicon, self.weigh)


class CondensedReader:
    """The LLM's reading of a message (``condensed``) as a plan: its English query read by the rule reader, or, when
    that leaves no facet that must hold, the model's facets, resolved and expanded as the rule reader's are. The
    plan keeps the question as asked; with no facets it keeps the intent of ``typed`` (the rule reader's plan of the
    question as typed, read again when not given)."""

    def __init__(self, lexicon: Lexicon, condensed: Condensed, typed: QueryPlan | None = None) -> None:
        self.lexicon = lexicon
        self.condensed = condensed
        self.typed = typed

    def read(self, question: str) -> QueryPlan:
        new = plan(self.condensed.query, self.lexicon)
        if not any(not f.optional for f in new.facets) and self.condensed.facets:
            new = replace(new, facets=self.facets())
        if new.facets:
            return replace(new, text=question)
        typed = self.typed if self.typed is not None else plan(question, self.lexicon)
        return replace(new, text=question, intent=typed.intent)

    def facets(self) -> list[Facet]:
        """The model's facets (each a list of alternatives), as units read into facets by the resolve and expand
        stages: the same lexicon checks which are terms, cuts what the corpus never states, weighs each facet's
        topicality and spells it."""
        items: list[Item] = []
        for alternatives in self.condensed.facets:
            units = [_unit(a) for a in alternatives]
            group: list[Item] = [u for u in units if u is not None]
            if not group:
                continue
            if items:
                items.append("and")
            for i, unit in enumerate(group):
                items += ["or", unit] if i else [unit]
        groups, _ = grouped(bounded(items))
        groups = [g[:MAX_ALTERNATIVES] for g in groups[:MAX_FACETS]]
        text = " ".join(a for alternatives in self.condensed.facets for a in alternatives)
        return resolve(groups, self.lexicon, shouted=not any(c.islower() for c in text))


def _unit(alternative: str) -> Unit | None:
    """One alternative the model wrote, as a unit of its words (None when it has none)."""
    words = [t for t in tokens(alternative.strip()) if t.word]
    return Unit([t.low for t in words], [t.text for t in words]) if words else None
