"""docs/reading-table.md stays true: every word list, number and regex the question reader and the membership
decision keep at module level has a row (with its reason), and no row names one that is gone."""

from __future__ import annotations

import ast
import inspect
import re
from types import ModuleType

import askpapers.rag.answerers.followup as followup
import askpapers.rag.decide.acronyms as acronyms
import askpapers.rag.decide.evidence as evidence
import askpapers.rag.decide.match as match
import askpapers.rag.decide.membership as membership
import askpapers.rag.decide.pools as pools
import askpapers.rag.evaluation.frames as frames
import askpapers.rag.read.cues as cues
import askpapers.rag.read.expand as expand
import askpapers.rag.read.lexicon as lexicon
import askpapers.rag.read.parse as parse
import askpapers.rag.read.query as query
import askpapers.rag.read.resolve as resolve
import askpapers.rag.read.topicality as topicality
import askpapers.rag.report.examples as examples
import askpapers.vectorstore.terms as terms
from askpapers.rag.settings import SECTION_PREFIX, settings_rows
from tests.conftest import ROOT

TABLE = ROOT / "docs" / "reading-table.md"
MODULES: tuple[ModuleType, ...] = (
    query,
    parse,
    resolve,
    expand,
    cues,
    topicality,
    lexicon,
    followup,
    examples,
    pools,
    match,
    evidence,
    acronyms,
    membership,
    terms,
    frames,
)
UPPER = re.compile(r"_?[A-Z][A-Z0-9_]*")
# a row of a constants table: | `NAME` | module | …
ROW = re.compile(r"^\|\s*`(?P<name>_?[A-Z][A-Z0-9_]*)`\s*\|\s*(?P<module>\w+)\s*\|", re.M)
# a row of the settings table: | `answer.field` | `ASKPAPERS_…` | default | …
SETTING = re.compile(
    r"^\|\s*`(?P<section>\w+)\.(?P<field>\w+)`\s*\|\s*`(?P<env>ASKPAPERS_\w+)`\s*\|\s*(?P<default>[^|]+?)\s*\|", re.M
)


def short(module: ModuleType) -> str:
    """The module's last name ("query"), as the table names it: it stays true when modules move into packages."""
    return module.__name__.rsplit(".", 1)[-1]


def decides(value: object) -> bool:
    """A number, a collection of words (or of word tuples, or feature names) or a regex."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int | float | re.Pattern | frozenset | set | tuple | list | dict)


def defined(module: ModuleType) -> set[str]:
    """UPPER_CASE names assigned at the top level of the module's own source (not those it imports)."""
    tree = ast.parse(inspect.getsource(module))
    names: set[str] = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        names |= {t.id for t in targets if isinstance(t, ast.Name) and UPPER.fullmatch(t.id)}
    return names


def constants() -> set[tuple[str, str]]:
    return {(name, short(m)) for m in MODULES for name in defined(m) if decides(getattr(m, name))}


def rows() -> list[tuple[str, str]]:
    return [(m["name"], m["module"]) for m in ROW.finditer(TABLE.read_text(encoding="utf-8"))]


def test_the_table_finds_the_constants_it_is_about() -> None:
    found = constants()
    # a sample of each kind, so that a broken scan cannot pass by finding nothing
    kinds = [
        ("GLUE", "resolve"), ("EXAMPLE_CUES", "parse"), ("MAX_SPELLINGS", "expand"), ("COINED_PAPERS", "query"),
        ("REQUEST_WORDS", "cues"), ("TOKEN", "cues"), ("_NAME", "cues"), ("TOPICAL", "topicality"),
        ("CUT", "membership"), ("FEATURES", "membership"), ("GREETINGS", "frames"), ("_NOUN_FORMS", "terms"),
    ]  # fmt: skip
    for pair in kinds:
        assert pair in found
    assert ("REQUEST_WORDS", "query") not in found  # imported by query from cues, listed once under cues
    assert len(found) > 60


def test_every_constant_has_one_row_and_every_row_a_constant() -> None:
    listed = rows()
    assert len(listed) == len(set(listed)), "a constant is listed twice"
    missing = constants() - set(listed)
    gone = set(listed) - constants()
    assert not missing, f"add rows to docs/reading-table.md for {sorted(missing)}"
    assert not gone, f"docs/reading-table.md names constants that no longer exist: {sorted(gone)}"


def test_every_row_gives_a_value_and_a_reason() -> None:
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if ROW.match(line):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            assert len(cells) == 5 and all(cells), line


def test_the_settings_rows_are_settings_with_their_defaults() -> None:
    shown = {env.strip("`"): default for env, default, _ in settings_rows()}
    listed = list(SETTING.finditer(TABLE.read_text(encoding="utf-8")))
    assert listed
    for m in listed:
        assert m["env"] in shown, m["env"]
        assert m["env"] == SECTION_PREFIX[m["section"]] + m["field"].upper()
        assert m["default"].strip("`") == shown[m["env"]].strip("`"), m["env"]
