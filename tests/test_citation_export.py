"""The export files (Markdown, CSV, BibTeX) read back intact and stay inert, whatever the titles and abstracts hold."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from askpapers.rag.report.citation_export import bib_value, csv_cell, md_inert, to_bibtex, to_csv, to_markdown
from askpapers.rag.types import Answer, Citation
from askpapers.vectorstore.text import printable

EXFIL = "http://127.0.0.1:9/x.png"
HOSTILE_TITLES = [
    '=HYPERLINK("http://evil.example","click")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\tTabbed title",
    "\rCarriage title",
    "Braces } unbalanced { here }}",
    "A {balanced} title",
    f"![logo]({EXFIL}) and <img src={EXFIL}>",
    "Back\\slash \\textbf{bold} 100% & $x_1$",
    "[click](javascript:alert(1)) &lt;img&gt;",
]


def citation(n: int, title: str, pid: str | None = None, abstract: str = "An abstract.") -> Citation:
    return Citation(n=n, paper_id=pid or f"icml2024:{n:04d}", title=title, evidence=abstract, abstract=abstract,
                    score=0.5, venue="ICML 2024", year=2024, url=f"https://openreview.net/forum?id={n}",
                    code_urls=[])  # fmt: skip


def answer(citations: list[Citation], text: str = "Found papers [1].") -> Answer:
    return Answer(question="Which papers?", text=text, citations=citations, found=True)


def _active_tokens(markdown: str) -> list[str]:
    """Tokens that a Markdown viewer would turn into something live: images, raw HTML, links."""
    md = MarkdownIt("commonmark", {"html": True, "linkify": False})
    stack = list(md.parse(markdown))
    found = []
    while stack:
        tok = stack.pop()
        if tok.type in ("image", "html_inline", "html_block", "link_open"):
            found.append(tok.type)
        stack.extend(tok.children or [])
    return found


def test_csv_reads_back_and_no_cell_is_a_formula() -> None:
    cites = [citation(i, t) for i, t in enumerate(HOSTILE_TITLES, start=1)]
    rows = list(csv.reader(io.StringIO(to_csv(answer(cites)))))
    header, body = rows[0], rows[1:]
    assert len(body) == len(cites)
    titles = [r[header.index("title")] for r in body]
    for original, cell in zip(HOSTILE_TITLES, titles, strict=True):
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
        shown = printable(original, newlines=False)  # (a carriage return in a title is a control: a space)
        assert cell in (shown, "'" + shown)  # intact, with the quote only where it was needed
    assert csv_cell("plain") == "plain" and csv_cell("=1+1") == "'=1+1"


def test_bibtex_reads_back_with_every_field_and_unique_keys() -> None:
    import bibtexparser
    from bibtexparser.bparser import BibTexParser

    cites = [citation(i, t) for i, t in enumerate(HOSTILE_TITLES, start=1)]
    # 49 papers of one venue whose ids share a long prefix (they once got 35 distinct keys)
    cites += [citation(100 + i, "Diffusion models for robotics", pid=f"icml2024:abc{i}") for i in range(49)]
    text = to_bibtex(answer(cites))
    db = bibtexparser.loads(text, parser=BibTexParser(common_strings=False))
    assert len(db.entries) == len(cites)
    keys = [e["ID"] for e in db.entries]
    assert len(set(keys)) == len(keys)

    def decoded(value: str) -> str:  # (BibTeX itself treats runs of blanks as one space)
        return " ".join(value.replace("\\textbraceright{}", "}").replace("\\textbraceleft{}", "{").split())

    for c, e in zip(cites, db.entries, strict=True):
        assert decoded(e["title"]) == " ".join(c.title.split())
        assert e["abstract"] == c.abstract and e["booktitle"] == "ICML 2024" and e["year"] == "2024"
        assert e["url"] == c.url and c.paper_id in e["note"]
    assert to_bibtex(answer(cites)) == text, "keys and text are stable"


def test_bib_value_balances_braces() -> None:
    assert bib_value("a {b} c") == "a {b} c"
    assert bib_value("a } b") == "a \\textbraceright{} b"
    assert bib_value("a { b") == "a \\textbraceleft{} b"
    assert bib_value("}{") == "\\textbraceright{}\\textbraceleft{}"


def test_markdown_export_is_inert() -> None:
    cites = [citation(i, t, abstract=f"Evidence with ![x]({EXFIL}) and <iframe src={EXFIL}>.")
             for i, t in enumerate(HOSTILE_TITLES, start=1)]  # fmt: skip
    model_text = f'See ![a [b] c]({EXFIL}) and <div style="background:url({EXFIL})">x</div> [1].\n\n[r]: {EXFIL}'
    md = to_markdown(answer(cites, model_text))
    assert _active_tokens(md) == []
    for t in HOSTILE_TITLES:  # the titles are all there, as text
        rendered = MarkdownIt("commonmark").render(md_inert(t))
        assert "<a" not in rendered and "<img" not in rendered


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*"ab [](){}<>!&`\\*_:/#\n", "http://x.y/z.png", "<img src=x>"])).map("".join))
def test_md_inert_never_forms_a_link_image_or_html(text: str) -> None:
    assert _active_tokens(md_inert(text)) == []


# -- authors, the paper's own URL, code links and keys (issue 16) ---------------------------------------------------

GITHUB = "https://github.com/example/repo"


def authored(n: int, title: str, authors: list[str], url: str = "", code: list[str] | None = None) -> Citation:
    return Citation(n=n, paper_id=f"hand:{n}", title=title, evidence="An abstract.", abstract="An abstract.",
                    score=0.5, venue="ICML 2024", year=2024, url=url, code_urls=code or [],
                    authors=authors)  # fmt: skip


HAND = [
    authored(1, "Braces } in a title", ["Hao Dai", "Yang Liu"], "https://openreview.net/forum?id=a1", [GITHUB]),
    authored(2, "Code link only", ["Jürgen Müller", "Anna {K} Smith}"], "", [GITHUB]),
    authored(3, "A GitHub page as the URL", ["Barnes and Noble"], GITHUB, [GITHUB]),
    authored(4, "No authors at all", [], "https://arxiv.org/abs/2401.00001"),
    authored(5, "Same surname, year and word", ["Hao Dai"], "https://openreview.net/forum?id=a5"),
    authored(6, "Same surname, year and word", ["Hao Dai"], "https://openreview.net/forum?id=a6"),
]


def _bib_entries(cites: list[Citation]) -> list[dict[str, str]]:
    import bibtexparser
    from bibtexparser.bparser import BibTexParser

    db = bibtexparser.loads(to_bibtex(answer(cites)), parser=BibTexParser(common_strings=False))
    assert len(db.entries) == len(cites)
    return list(db.entries)


def _unbrace(value: str) -> str:
    return value.replace("\\textbraceright{}", "}").replace("\\textbraceleft{}", "{")


def _check_bib(cites: list[Citation]) -> list[dict[str, str]]:
    entries = _bib_entries(cites)
    keys = [e["ID"] for e in entries]
    assert len(set(keys)) == len(keys), "every key is unique within the file"
    for c, e in zip(cites, entries, strict=True):
        if c.authors:
            names = [_unbrace(n.strip()) for n in e["author"].split(" and ") if n.strip()]
            # a name holding the word "and" is braced whole, so it is one name
            joined = " and ".join(names)
            assert joined.replace("{Barnes and Noble}", "Barnes and Noble") == " and ".join(c.authors)
        else:
            assert "author" not in e
        if c.url and c.url not in c.code_urls:
            assert e["url"] == c.url
        else:
            assert "url" not in e, "a code link is never the paper's url"
        for link in c.code_urls:
            assert link in e["note"]
        assert c.paper_id in e["note"] and _unbrace(e["title"]) == c.title
    return entries


def test_bibtex_has_authors_the_paper_url_and_code_links_in_note() -> None:
    entries = _check_bib(HAND)
    assert entries[0]["ID"].startswith("dai2024braces-")
    assert entries[1]["ID"].startswith("muller2024code-")
    assert entries[4]["ID"] != entries[5]["ID"]


def test_csv_has_authors_and_reads_back() -> None:
    rows = list(csv.DictReader(io.StringIO(to_csv(answer(HAND)))))
    assert [r["authors"] for r in rows] == ["; ".join(c.authors) for c in HAND]
    assert [r["url"] for r in rows] == [c.url for c in HAND]
    assert [r["code_urls"] for r in rows] == [" ".join(c.code_urls) for c in HAND]
    assert [r["title"] for r in rows] == [c.title for c in HAND]


def _rendered_text(markdown: str) -> str:
    """What a Markdown viewer shows, as plain text."""
    out = []
    for tok in MarkdownIt("commonmark").parse(markdown):
        for child in tok.children or []:
            if child.type in ("text", "code_inline"):
                out.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                out.append("\n")
        out.append("\n")
    return "".join(out)


def test_markdown_shows_titles_authors_urls_and_evidence_as_text() -> None:
    cites = [*HAND, *(citation(20 + i, t, abstract=f"Quote {t} here.") for i, t in enumerate(HOSTILE_TITLES))]
    md = to_markdown(answer(cites))
    assert _active_tokens(md) == []
    shown = " ".join(_rendered_text(md).split())  # (a line break in a title is a space on screen)
    for c in cites:
        assert " ".join(c.title.split()) in shown, c.title
        assert " ".join(c.evidence.split()) in shown, c.evidence
        assert all(a in shown for a in c.authors)
        if c.url and c.url not in c.code_urls:
            assert f"URL: {c.url}" in shown
        for link in c.code_urls:
            assert f"Code: {link}" in shown


ICML2024 = Path("/work/shared/datasets/conference/icml2024.jsonl")


@pytest.mark.skipif(not ICML2024.exists(), reason="needs the shared ICML 2024 corpus")
def test_bibtex_of_49_icml_2024_papers_reads_back_with_unique_keys(tmp_path: Path) -> None:
    from askpapers.vectorstore.parse import parse_file
    from askpapers.vectorstore.text import sentences

    with ICML2024.open(encoding="utf-8") as fh:
        lines = [line for _, line in zip(range(49), fh, strict=False)]
    subset = tmp_path / "icml49.jsonl"
    subset.write_text("".join(lines), encoding="utf-8")
    papers, _ = parse_file(subset)
    assert len(papers) == 49
    cites = [Citation.from_paper(n, p, sentences(p.abstract)[0], 0.5) for n, p in enumerate(papers, start=1)]
    assert sum(bool(c.authors) for c in cites) >= 40  # the data has authors, so the file does
    entries = _check_bib(cites)
    for c, e in zip(cites, entries, strict=True):
        assert " ".join(_unbrace(e["abstract"]).split()) == " ".join(c.abstract.split())
        assert e["booktitle"] == c.venue and e["year"] == str(c.year)


# Issue 23, item 2: terminal escapes in a title, an author or an abstract never reach an export file, where ``cat``
# would run them (OSC 52 clipboard write, clear screen, window title, bell, the one-byte C1 CSI, a bidi override).
ESCAPES = ["\x1b]52;c;ZXZpbA==\x07", "\x1b[2J", "\x1b]0;pwned\x07", "\x07", "\x9b31m", "\u202e"]


def _hostile_answer() -> Answer:
    joined = "".join(ESCAPES)
    c = citation(1, f"Title{joined} end", abstract=f"Abstract{joined} text.")
    c.authors = [f"Ada{joined} Lovelace", "Bob Smith"]
    c.venue = f"ICML{ESCAPES[2]} 2024"
    return Answer(question=f"Which{ESCAPES[0]} papers?", text=f"Found{ESCAPES[1]} papers [1].", citations=[c],
                  found=True)  # fmt: skip


def _assert_no_escapes(text: str) -> None:
    for bad in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert bad not in text, repr(bad)
    assert "ZXZpbA==" not in text and "pwned" not in text  # the sequences go whole, not just their first byte
    assert "31m" not in text and "[2J" not in text


def test_csv_export_drops_escape_and_bidi_characters() -> None:
    text = to_csv(_hostile_answer())
    _assert_no_escapes(text)
    (row,) = csv.DictReader(io.StringIO(text))
    assert row["title"] == "Title end" and row["abstract"] == "Abstract text."
    assert row["authors"] == "Ada Lovelace; Bob Smith"


def test_bibtex_export_drops_escape_and_bidi_characters() -> None:
    text = to_bibtex(_hostile_answer())
    _assert_no_escapes(text)
    assert "title = {Title end}" in text and "author = {Ada Lovelace and Bob Smith}" in text
    assert "abstract = {Abstract text.}" in text


def test_markdown_export_drops_escape_and_bidi_characters() -> None:
    text = to_markdown(_hostile_answer())
    _assert_no_escapes(text)
    assert "**Title end**" in text and "Ada Lovelace, Bob Smith" in text and "> Abstract text." in text
    assert text.startswith("# Which papers?") and "Found papers \\[1\\]." in text
