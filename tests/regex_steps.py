"""Count the steps a backtracking regular-expression engine takes, instead of timing it.

Python's ``re`` is a backtracking engine with no step counter, so this module re-runs a compiled pattern on a
small model of the same engine: it walks the pattern's parse tree (``re._parser``) in the order ``re`` tries
alternatives (greedy repeats longest first, lazy ones shortest first, branches left to right, every start position
in turn for a search) and counts one step per node tried and per character a repeat consumes. The count does not
depend on the machine or its load, so a test can compare the work at n, 2n and 4n units of input exactly.

The model follows the constructs the project's patterns use (literals, classes, categories, anchors, groups,
branches, greedy and lazy repeats, look-ahead and fixed-width look-behind); ``find_all`` returns the same spans as
``Pattern.finditer``, which ``tests/test_linear_time.py`` checks on every pattern it measures.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]

Cont = Callable[[int], bool]
Node = Callable[[int, Cont], bool]


class UnsupportedPattern(ValueError):
    pass


class Counter:
    def __init__(self) -> None:
        self.steps = 0


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _category(cat: object) -> Callable[[str], bool]:
    table: dict[object, Callable[[str], bool]] = {
        C.CATEGORY_DIGIT: str.isdecimal,
        C.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdecimal(),
        C.CATEGORY_SPACE: str.isspace,
        C.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
        C.CATEGORY_WORD: _is_word,
        C.CATEGORY_NOT_WORD: lambda ch: not _is_word(ch),
    }
    if cat not in table:
        raise UnsupportedPattern(f"category {cat}")
    return table[cat]


def _char_test(op: object, av: object, ignore_case: bool) -> Callable[[str], bool]:
    def variants(ch: str) -> tuple[str, ...]:
        return (ch, ch.lower(), ch.upper()) if ignore_case else (ch,)

    if op is C.LITERAL:
        lit = chr(av)  # type: ignore[call-overload]
        return lambda ch: any(v == lit or (ignore_case and v == lit.lower()) for v in variants(ch))
    if op is C.NOT_LITERAL:
        lit = chr(av)  # type: ignore[call-overload]
        return lambda ch: not any(v == lit or (ignore_case and v == lit.lower()) for v in variants(ch))
    if op is C.IN:
        negate = False
        tests: list[Callable[[str], bool]] = []
        for item_op, item_av in av:  # type: ignore[attr-defined]
            if item_op is C.NEGATE:
                negate = True
            elif item_op is C.LITERAL:
                lit_c = chr(item_av)
                tests.append(lambda ch, c=lit_c: c in variants(ch) or (ignore_case and c.lower() == ch.lower()))
            elif item_op is C.RANGE:
                lo, hi = item_av
                tests.append(lambda ch, lo=lo, hi=hi: any(lo <= ord(v) <= hi for v in variants(ch)))
            elif item_op is C.CATEGORY:
                tests.append(_category(item_av))
            else:
                raise UnsupportedPattern(f"class item {item_op}")
        return lambda ch: any(t(ch) for t in tests) != negate
    raise UnsupportedPattern(str(op))


class _Compiler:
    def __init__(self, counter: Counter, flags: int) -> None:
        self.counter = counter
        self.flags = flags

    def seq(self, sub: P.SubPattern | list[tuple[object, object]]) -> Node:
        nodes = [self.node(op, av) for op, av in sub]

        def run(s: str, i: int, k: Cont, at: int = 0) -> bool:
            if at == len(nodes):
                return k(i)
            return nodes[at](i, lambda j: run(s, j, k, at + 1))

        # The subject is bound late, by `bind`; nodes read it from self.text.
        return lambda i, k: run(self.text, i, k)

    text = ""

    def single(self, op: object, av: object) -> Callable[[str], bool] | None:
        if op in (C.LITERAL, C.NOT_LITERAL, C.IN):
            return _char_test(op, av, bool(self.flags & re.IGNORECASE))
        if op is C.ANY:
            return (lambda ch: True) if self.flags & re.DOTALL else (lambda ch: ch != "\n")
        return None

    def node(self, op: object, av: object) -> Node:
        counter = self.counter
        test = self.single(op, av)
        if test is not None:

            def char(i: int, k: Cont) -> bool:
                counter.steps += 1
                return i < len(self.text) and test(self.text[i]) and k(i + 1)

            return char
        if op is C.AT:
            return self.anchor(av)
        if op is C.SUBPATTERN:
            _group, add, delete, sub = av  # type: ignore[misc]
            saved = self.flags
            self.flags = (self.flags | add) & ~delete
            inner = self.seq(sub)
            self.flags = saved
            return inner
        if op is C.BRANCH:
            alts = [self.seq(sub) for sub in av[1]]  # type: ignore[index]

            def branch(i: int, k: Cont) -> bool:
                for alt in alts:
                    counter.steps += 1
                    if alt(i, k):
                        return True
                return False

            return branch
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            return self.repeat(op is C.MAX_REPEAT, *av)  # type: ignore[misc]
        if op in (C.ASSERT, C.ASSERT_NOT):
            direction, sub = av  # type: ignore[misc]
            inner = self.seq(sub)
            width = sub.getwidth()
            if direction < 0 and width[0] != width[1]:
                raise UnsupportedPattern("variable-width look-behind")
            positive = op is C.ASSERT

            def look(i: int, k: Cont) -> bool:
                counter.steps += 1
                if direction < 0:
                    start = i - width[0]
                    found = start >= 0 and inner(start, lambda j: j == i)
                else:
                    found = inner(i, lambda j: True)
                return (found == positive) and k(i)

            return look
        raise UnsupportedPattern(str(op))

    def anchor(self, where: object) -> Node:
        counter = self.counter

        def at(i: int) -> bool:
            s = self.text
            if where in (C.AT_BEGINNING, C.AT_BEGINNING_STRING):
                return i == 0
            if where is C.AT_END:
                return i == len(s) or (i == len(s) - 1 and s[i] == "\n")
            if where is C.AT_END_STRING:
                return i == len(s)
            if where in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
                before = i > 0 and _is_word(s[i - 1])
                after = i < len(s) and _is_word(s[i])
                return (before != after) == (where is C.AT_BOUNDARY)
            raise UnsupportedPattern(f"anchor {where}")

        def node(i: int, k: Cont) -> bool:
            counter.steps += 1
            return at(i) and k(i)

        return node

    def repeat(self, greedy: bool, lo: int, hi: object, sub: P.SubPattern) -> Node:
        counter = self.counter
        top = sys.maxsize if hi is C.MAXREPEAT else int(hi)  # type: ignore[call-overload]
        one = self.single(*sub[0]) if len(sub) == 1 else None
        if one is not None:  # a repeat of one character, as re's REPEAT_ONE / MIN_REPEAT_ONE

            def rep_one(i: int, k: Cont) -> bool:
                s = self.text
                if greedy:
                    n = 0
                    while n < top and i + n < len(s) and one(s[i + n]):
                        n += 1
                        counter.steps += 1
                    while n >= lo:
                        counter.steps += 1
                        if k(i + n):
                            return True
                        n -= 1
                    return False
                n = 0
                while n < lo:
                    counter.steps += 1
                    if not (i + n < len(s) and one(s[i + n])):
                        return False
                    n += 1
                while True:
                    counter.steps += 1
                    if k(i + n):
                        return True
                    if n >= top or not (i + n < len(s) and one(s[i + n])):
                        return False
                    n += 1

            return rep_one
        body = self.seq(sub)

        def rep(i: int, k: Cont, count: int = 0) -> bool:
            counter.steps += 1
            more: Cont = lambda j: (j != i or count < lo) and rep(j, k, count + 1)  # noqa: E731
            if greedy:
                return (count < top and body(i, more)) or (count >= lo and k(i))
            return (count >= lo and k(i)) or (count < top and body(i, more))

        return lambda i, k: rep(i, k)


def _capped(sub: P.SubPattern | list[tuple[object, object]], cap: int) -> list[tuple[object, object]]:
    """The parse tree with every finite repeat bound above ``cap`` lowered to ``cap`` ({0,300} becomes {0,cap}).

    A bounded repeat adds at most a constant per start position however large its bound, so the growth of the
    work with the input (what the tests compare) is the same; the window in which it looks faster than linear
    shrinks, and with it the input needed to measure. Unbounded repeats (*, +, {n,}) are left as they are."""
    out: list[tuple[object, object]] = []
    for op, av in sub:
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, inner = av  # type: ignore[misc]
            if hi is not C.MAXREPEAT and hi > cap:
                lo, hi = min(lo, cap), cap
            out.append((op, (lo, hi, _capped(inner, cap))))
        elif op is C.SUBPATTERN:
            group, add, delete, inner = av  # type: ignore[misc]
            out.append((op, (group, add, delete, _capped(inner, cap))))
        elif op is C.BRANCH:
            out.append((op, (av[0], [_capped(alt, cap) for alt in av[1]])))  # type: ignore[index]
        else:  # look-arounds kept whole: a look-behind is fixed-width, and its width is read from the parse tree
            out.append((op, av))
    return out


class Model:
    """A compiled pattern's model, with a step counter (``cap``: lower finite repeat bounds to it, see _capped)."""

    def __init__(self, pattern: re.Pattern[str], cap: int | None = None) -> None:
        self.counter = Counter()
        self._compiler = _Compiler(self.counter, pattern.flags)
        tree = P.parse(pattern.pattern, pattern.flags)
        self._root = self._compiler.seq(tree if cap is None else _capped(tree, cap))

    def _match_at(self, text: str, start: int) -> int | None:
        end: list[int] = []

        def done(j: int) -> bool:
            end.append(j)
            return True

        self._compiler.text = text
        return end[0] if self._root(start, done) else None

    def search(self, text: str, pos: int = 0) -> tuple[int, int] | None:
        for start in range(pos, len(text) + 1):
            self.counter.steps += 1
            end = self._match_at(text, start)
            if end is not None:
                return start, end
        return None

    def find_all(self, text: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        pos = 0
        while pos <= len(text):
            found = self.search(text, pos)
            if found is None:
                break
            spans.append(found)
            pos = found[1] if found[1] > found[0] else found[1] + 1
        return spans


def steps(pattern: re.Pattern[str], text: str, cap: int | None = None) -> int:
    """The steps of one search and one find-all of ``pattern`` over ``text`` (what the test asks of ``re``)."""
    model = Model(pattern, cap)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20 * len(text) + 10_000))
    try:
        model.search(text)
        model.find_all(text)
    finally:
        sys.setrecursionlimit(limit)
    return model.counter.steps


def largest_bound(pattern: re.Pattern[str], cap: int | None = None) -> int:
    """The largest finite upper bound of a repeat in ``pattern`` ({0,300} gives 300): work inside such a window
    may grow faster than linearly until the input is longer than the window."""

    def walk(sub: P.SubPattern | list[tuple[object, object]]) -> int:
        best = 0
        for op, av in sub:
            if op in (C.MAX_REPEAT, C.MIN_REPEAT):
                _lo, hi, inner = av  # type: ignore[misc]
                best = max(best, 0 if hi is C.MAXREPEAT else int(hi), walk(inner))
            elif op is C.SUBPATTERN:
                best = max(best, walk(av[3]))  # type: ignore[index]
            elif op is C.BRANCH:
                best = max([best, *(walk(alt) for alt in av[1])])  # type: ignore[index]
            elif op in (C.ASSERT, C.ASSERT_NOT):
                best = max(best, walk(av[1]))  # type: ignore[index]
        return best

    found = walk(P.parse(pattern.pattern, pattern.flags))
    return found if cap is None else min(found, cap)
