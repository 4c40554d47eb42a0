"""Export files (Markdown, CSV, BibTeX) of the recent answers, in a folder of this process."""

from __future__ import annotations

import atexit
import itertools
import shutil
import tempfile
import threading
from pathlib import Path

from rag.citation_export import to_bibtex, to_csv, to_markdown
from rag.types import Answer

__all__ = ["Exports"]


class Exports:
    """Export files of the recent answers, in one folder of this process that is removed when it exits.

    Only the newest ``keep`` answers' files are kept (Gradio serves its own copies of them).
    """

    def __init__(self, keep: int = 20) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="askpapers-export-"))
        self.keep = keep
        self._count = itertools.count(1)
        self._lock = threading.Lock()
        atexit.register(shutil.rmtree, self.root, ignore_errors=True)

    def write(self, answer: Answer) -> list[str]:
        if not answer.citations:
            return []
        with self._lock:
            n = next(self._count)
            for old in sorted(self.root.iterdir(), key=lambda p: int(p.name))[: -self.keep + 1 or None]:
                shutil.rmtree(old, ignore_errors=True)
        d = self.root / str(n)
        d.mkdir()
        out = []
        for name, text in (("cited-papers.md", to_markdown(answer)), ("cited-papers.csv", to_csv(answer)),
                           ("cited-papers.bib", to_bibtex(answer))):  # fmt: skip
            (d / name).write_text(text, encoding="utf-8")
            out.append(str(d / name))
        return out

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
