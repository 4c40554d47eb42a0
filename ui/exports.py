"""Export files (Markdown, CSV, BibTeX) of the recent answers, in a folder of this process.

The folder goes when the process exits normally (atexit), and ``askpapers serve`` turns SIGTERM into a normal exit
(see :func:`exit_on_sigterm`). A process killed outright (SIGKILL, a crash) cannot clean up, so every new
:class:`Exports` first removes the folders such processes left: a folder holds a lock file that its process keeps
locked (``flock``) while it lives, and the kernel releases the lock when the process dies, whatever killed it. Only
folders this app creates are removed: named ``askpapers-export-*``, directly in the temp folder (paths resolved),
owned by this user, not symbolic links, and holding an unlocked ``owner.lock``. Folders without one (from older
versions, or being created this moment) are left alone.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import IO

from askpapers.rag import to_bibtex, to_csv, to_markdown
from askpapers.rag.types import Answer

try:
    import fcntl
except ImportError:  # (not on Windows: folders are then removed at exit only)
    fcntl = None  # type: ignore[assignment]

__all__ = ["PREFIX", "Exports", "exit_on_sigterm", "remove_stale"]

log = logging.getLogger("askpapers")
PREFIX = "askpapers-export-"
LOCK = "owner.lock"


def _owned_folder(path: Path, parent: Path) -> bool:
    """Whether ``path`` is a real folder of this user's directly inside ``parent`` (no link anywhere)."""
    try:
        info = path.lstat()
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    return path.resolve().parent == parent


def _unlocked(lock: Path) -> bool:
    """Whether ``lock`` is a regular file that no live process holds locked."""
    if fcntl is None:
        return False
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:  # missing, or a link
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held: its process is alive
        return False
    finally:
        os.close(fd)
    return True


def remove_stale(parent: Path | None = None) -> list[Path]:
    """Remove the export folders in ``parent`` (default: the temp folder) whose processes have ended; return them."""
    root = Path(parent or tempfile.gettempdir()).resolve()
    removed = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return []
    for path in entries:
        if path.name.startswith(PREFIX) and _owned_folder(path, root) and _unlocked(path / LOCK):
            shutil.rmtree(path, ignore_errors=True)  # (rmtree never follows links inside the folder)
            if not path.exists():
                removed.append(path)
    if removed:
        log.info("askpapers: removed %d export folder(s) of ended processes", len(removed))
    return removed


class Exports:
    """Export files of the recent answers, in one folder of this process that is removed when it exits.

    Only the newest ``keep`` answers' files are kept (Gradio serves its own copies of them).
    """

    def __init__(self, keep: int = 20) -> None:
        remove_stale()
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX))
        self.keep = keep
        self._count = itertools.count(1)
        self._lock = threading.Lock()
        self._owner = self._hold()
        atexit.register(self.close)

    def _hold(self) -> IO[bytes] | None:
        """The folder's lock file, locked for as long as this process lives (it is renamed into place only once
        locked, so no other process ever sees it unlocked)."""
        if fcntl is None:
            return None
        pending = self.root / f".{LOCK}"
        owner = pending.open("wb")
        fcntl.flock(owner.fileno(), fcntl.LOCK_EX)
        pending.rename(self.root / LOCK)
        return owner

    def write(self, answer: Answer) -> list[str]:
        if not answer.citations:
            return []
        with self._lock:
            n = next(self._count)
            answers = [p for p in self.root.iterdir() if p.name.isdigit()]
            for old in sorted(answers, key=lambda p: int(p.name))[: -self.keep + 1 or None]:
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
        if self._owner is not None:
            self._owner.close()
            self._owner = None


def exit_on_sigterm(before: Callable[[], object] | None = None) -> None:
    """SIGTERM (``kill``, a service manager, a test) ends the process as a normal exit, so that atexit clean-up runs
    (the export folder goes); only from the main thread, and only where SIGTERM still has its default action.
    ``before`` runs first (the web app stops its ingests at their next batch boundary)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        if before is not None:
            before()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
