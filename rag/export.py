"""The cited papers of an answer as Markdown, CSV or BibTeX."""

from __future__ import annotations

import csv
import io
import re

from .types import Answer


def to_markdown(answer: Answer) -> str:
    lines = [f"# {answer.question}", "", answer.text, "", "## Cited papers", ""]
    for c in answer.citations:
        venue = f" — {c.venue}" if c.venue else ""
        lines.append(f"[{c.n}] **{c.title}**{venue}  ")
        lines.append(f"> {c.evidence}")
        for url in c.code_urls:
            lines.append(f"Code: <{url}>")
        lines.append("")
    return "\n".join(lines)


def to_csv(answer: Answer) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["n", "paper_id", "title", "venue", "year", "score", "evidence", "url", "code_urls", "abstract"])
    for c in answer.citations:
        w.writerow(
            [
                c.n,
                c.paper_id,
                c.title,
                c.venue,
                c.year or "",
                c.score,
                c.evidence,
                c.url,
                " ".join(c.code_urls),
                c.abstract,
            ]
        )
    return buf.getvalue()


def _bib(value: str) -> str:
    return value.replace("\\", "\\\\").replace("{", "\\{").replace("}", "\\}")


def to_bibtex(answer: Answer) -> str:
    entries = []
    for c in answer.citations:
        word = (re.findall(r"[A-Za-z0-9]+", c.title) or ["paper"])[0].lower()
        key = f"{word}{c.year or ''}_{re.sub(r'[^A-Za-z0-9]', '', c.paper_id)[:8]}"
        fields = [f"  title = {{{_bib(c.title)}}}", f"  abstract = {{{_bib(c.abstract)}}}"]
        if c.venue:
            fields.append(f"  booktitle = {{{_bib(c.venue)}}}")
        if c.year:
            fields.append(f"  year = {{{c.year}}}")
        if c.url or c.code_urls:
            fields.append(f"  url = {{{_bib(c.url or c.code_urls[0])}}}")
        fields.append(f"  note = {{askpapers id {_bib(c.paper_id)}}}")
        entries.append("@inproceedings{" + key + ",\n" + ",\n".join(fields) + "\n}")
    return "\n\n".join(entries) + ("\n" if entries else "")
