"""The export files (Markdown, CSV, BibTeX) read back intact and stay inert, whatever the titles and abstracts hold."""

from __future__ import annotations

import csv
import io

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from rag.citation_export import bib_value, csv_cell, md_inert, to_bibtex, to_csv, to_markdown
from rag.types import Answer, Citation

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
        assert cell in (original, "'" + original)  # intact, with the quote only where it was needed
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
