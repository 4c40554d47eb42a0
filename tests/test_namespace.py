"""One namespace (issue 27): the project is the package ``askpapers``; its folders rag/, ui/ and vectorstore/ are
never imported under their own names, so no module is ever loaded twice (two classes of every error, two caches).

In a checkout the folders are reached through the symlinks in src/askpapers/. Run from the checkout's root, Python
could still find ``rag/`` as a top-level package: each package's ``__init__.py`` refuses that at run time, and
ruff's banned-api rule (TID251, pyproject.toml) refuses the import in the code."""

# namespace_rewrite: keep-file (this file is about the old names: the rewrite of the imports leaves it)
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

RUFF = Path(sys.executable).parent / "ruff"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter in the checkout's root, where the folders are importable by their bare names."""
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", ["rag", "ui", "vectorstore", "rag.api", "vectorstore.text", "ui.cli"])
def test_an_old_top_level_import_fails_and_names_the_new_one(name: str) -> None:
    proc = _python(f"import {name}")
    assert proc.returncode != 0
    top = name.split(".")[0]
    assert f"ImportError: {top}: import askpapers.{top}" in proc.stderr, proc.stderr[-1000:]


def test_every_module_loads_once_under_askpapers() -> None:
    """Every module of the package and every name of the facade, imported in a fresh interpreter from the
    checkout's root: nothing is loaded under a top-level rag, ui or vectorstore, and every module is under
    askpapers (so a string such as a lazy export's module name that still said "rag.api" would fail here)."""
    proc = _python(
        "import importlib, json, pkgutil, sys\n"
        "import askpapers\n"
        "names = [info.name for info in pkgutil.walk_packages(askpapers.__path__, 'askpapers.')]\n"
        "for n in names: importlib.import_module(n)\n"
        "facade = {n: getattr(askpapers, n).__module__ if hasattr(getattr(askpapers, n), '__module__') else ''\n"
        "          for n in askpapers.__all__}\n"
        "ours = sorted(m for m in sys.modules if m.split('.')[0] in ('rag', 'ui', 'vectorstore', 'askpapers'))\n"
        "print(json.dumps({'modules': names, 'loaded': ours, 'facade': facade}))"
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {"askpapers.rag.api", "askpapers.ui.cli", "askpapers.vectorstore.store", "askpapers.prompts",
            "askpapers.bundled"} <= set(out["modules"])  # fmt: skip
    assert [m for m in out["loaded"] if not m.startswith("askpapers")] == []
    assert (
        out["facade"]["ask"] == "askpapers.rag.api" and out["facade"]["QuestionError"] == "askpapers.vectorstore.errors"
    )


def test_the_facade_at_the_top_is_rags() -> None:
    import askpapers
    from askpapers import rag

    assert askpapers.__all__ == rag.__all__
    for name in askpapers.__all__:
        assert getattr(askpapers, name) is getattr(rag, name), name
    with pytest.raises(AttributeError):
        _ = askpapers.no_such_name  # type: ignore[attr-defined]


def test_python_m_askpapers_is_the_cli() -> None:
    proc = subprocess.run([sys.executable, "-m", "askpapers", "--help"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-1000:]
    assert "ask" in proc.stdout and "ingest" in proc.stdout


@pytest.mark.skipif(not RUFF.exists(), reason="ruff is not installed in this venv")
@pytest.mark.parametrize(
    ("path", "code", "refused"),
    [
        ("ui/probe.py", "from rag import ask\n", True),
        ("tests/probe.py", "import vectorstore.text\n", True),
        ("bench/probe.py", "from ui.cli import main\n", True),
        ("rag/probe.py", "from .types import Answer\n", True),  # a relative import in rag/ is one of rag.…
        ("rag/probe.py", "from askpapers.rag.types import Answer\n", False),
        ("ui/probe.py", "from askpapers import ask\n", False),
    ],
)
def test_ruff_refuses_the_old_names(path: str, code: str, refused: bool) -> None:
    proc = subprocess.run([str(RUFF), "check", "--no-cache", "--select", "TID251", "--stdin-filename", path, "-"],
                          input=code, cwd=ROOT, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert (proc.returncode == 1 and "TID251" in proc.stdout) is refused, proc.stdout + proc.stderr
    assert proc.returncode == (1 if refused else 0), proc.stdout + proc.stderr
