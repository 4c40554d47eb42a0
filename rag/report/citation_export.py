"""The cited papers of an answer as Markdown, CSV or BibTeX: files that are inert wherever they are opened.

- **Markdown:** every character that could start a link, an image, raw HTML or an entity (``[ ] ( ) < > ! & \\``)
  is backslash-escaped, so a viewer shows titles, evidence and the answer as text and fetches nothing;
  emphasis and lists still render.
- **CSV:** a cell that a spreadsheet would run as a formula (it begins with ``=``, ``+``, ``-``, ``@``, a tab or
  a carriage return) is prefixed with ``'``, as OWASP advises; the ``csv`` module does the quoting.
- **BibTeX:** field values keep their text; a brace that would unbalance its field is written as
  ``\\textbraceleft{}`` / ``\\textbraceright{}``. ``author`` holds the authors (joined by ``and``), ``url`` the
  paper's own page (never a code link), ``note`` the code links and the askpapers id. Keys
  (first author's surname, year, first title word, a hash of the id) are stable per paper and unique within a file.
- **All three:** terminal escape sequences, control characters and bidi overrides are dropped from every field
  (as the CLI drops them, :func:`vectorstore.text.printable`), so ``cat`` on a file in a terminal runs nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
import unicodedata
from dataclasses import replace

from askpapers.rag.types import Answer, Citation
from askpapers.vectorstore.text import STOPWORDS, printable, tokens

_MD_ACTIVE = re.compile(r"([\\\[\]()<>!&`])")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def md_inert(text: str) -> str:
    """Text for a Markdown file that renders as itself: no link, image, HTML, entity or code span can form."""
    return _MD_ACTIVE.sub(r"\\\1", text)


def _line(text: str) -> str:
    return printable(text, newlines=False)


def inert_answer(answer: Answer) -> Answer:
    """A copy of ``answer`` whose exported text has no escape sequence, control character or bidi override."""
    cites = [replace(c, title=_line(c.title), evidence=printable(c.evidence), abstract=printable(c.abstract),
                     venue=_line(c.venue), url=_line(c.url), code_urls=[_line(u) for u in c.code_urls],
                     paper_id=_line(c.paper_id), authors=[_line(a) for a in c.authors])
             for c in answer.citations]  # fmt: skip
    return replace(answer, question=_line(answer.question), text=printable(answer.text), citations=cites)


def to_markdown(answer: Answer) -> str:
    answer = inert_answer(answer)
    lines = [f"# {md_inert(answer.question)}", "", md_inert(answer.text), "", "## Cited papers", ""]
    for c in answer.citations:
        venue = f" — {md_inert(c.venue)}" if c.venue else ""
        lines.append(f"\\[{c.n}\\] **{md_inert(c.title)}**{venue}  ")
        if c.authors:
            lines.append(f"{md_inert(', '.join(c.authors))}  ")
        if paper_url(c):
            lines.append(f"URL: {md_inert(paper_url(c))}  ")
        for url in c.code_urls:
            lines.append(f"Code: {md_inert(url)}  ")
        lines.append("")
        lines.append(f"> {md_inert(c.quotes()[0])}")
        lines.append("")
    return "\n".join(lines)


def csv_cell(value: object) -> str:
    """A cell a spreadsheet shows as text (never runs as a formula)."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def to_csv(answer: Answer) -> str:
    answer = inert_answer(answer)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["n", "paper_id", "title", "authors", "venue", "year", "score", "evidence", "url", "code_urls",
                "abstract"])  # fmt: skip
    for c in answer.citations:
        row = [c.n, c.paper_id, c.title, "; ".join(c.authors), c.venue, c.year or "", c.score, c.evidence, c.url,
               " ".join(c.code_urls), c.abstract]  # fmt: skip
        w.writerow([csv_cell(v) for v in row])
    return buf.getvalue()


def bib_value(text: str) -> str:
    """A BibTeX field value (without its outer braces): braces balanced, every other character kept."""
    depth = 0
    opened: list[int] = []
    out: list[str] = []
    for ch in text:
        if ch == "{":
            opened.append(len(out))
            out.append(ch)
            depth += 1
        elif ch == "}":
            if depth:
                depth -= 1
                opened.pop()
                out.append(ch)
            else:
                out.append("\\textbraceright{}")
        else:
            out.append(ch)
    for i in opened:  # braces never closed
        out[i] = "\\textbraceleft{}"
    return "".join(out)


def paper_url(c: Citation) -> str:
    """The paper's own page: its ``url`` unless that is one of its code links."""
    return c.url if c.url and c.url not in c.code_urls else ""


def _ascii_word(text: str) -> str:
    """Letters and digits of ``text`` folded to ASCII ("Müller" -> "muller")."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return "".join(ch for ch in folded.lower() if ch.isalnum())


def bib_key(c: Citation) -> str:
    """First author's surname + year + first title word + a short hash of the paper id: readable, and stable."""
    surname = _ascii_word(c.authors[0].split()[-1])[:20] if c.authors and c.authors[0].split() else ""
    words = [w for w in tokens(c.title) if w not in STOPWORDS and w.isascii() and w.isalnum()] or ["paper"]
    digest = hashlib.sha1(c.paper_id.encode("utf-8")).hexdigest()[:6]
    return f"{surname}{c.year or ''}{words[0][:20]}-{digest}"


def bib_names(authors: list[str]) -> str:
    """The ``author`` field: names joined by ``and``; a name that holds the word "and" is braced whole."""
    return " and ".join(f"{{{a}}}" if "and" in a.lower().split() else a for a in authors)


def to_bibtex(answer: Answer) -> str:
    answer = inert_answer(answer)
    entries = []
    used: set[str] = set()
    for c in answer.citations:
        key = bib_key(c)
        base, n = key, 1
        while key in used:  # two papers with one hash prefix: still unique within the file
            n += 1
            key = f"{base}-{n}"
        used.add(key)
        fields = [("title", bib_value(c.title))]
        if c.authors:
            fields.append(("author", bib_names([bib_value(a) for a in c.authors])))
        fields.append(("abstract", bib_value(c.abstract)))
        if c.venue:
            fields.append(("booktitle", bib_value(c.venue)))
        if c.year:
            fields.append(("year", str(c.year)))
        if paper_url(c):
            fields.append(("url", bib_value(paper_url(c))))
        code = f"Code: {', '.join(c.code_urls)}. " if c.code_urls else ""
        fields.append(("note", bib_value(f"{code}askpapers id {c.paper_id}")))
        body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
        entries.append("@inproceedings{" + key + ",\n" + body + "\n}")
    return "\n\n".join(entries) + ("\n" if entries else "")
