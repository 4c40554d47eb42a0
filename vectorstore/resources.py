"""Files that ship inside the package: the bundled corpus and the prompts.

In a checkout they are the top-level ``data/`` and ``prompts/`` folders; a wheel installs them as the packages
``askpapers.bundled`` and ``askpapers.prompts`` (see pyproject.toml). :func:`package_dir` finds them either way:
through :mod:`importlib.resources`, or, when Python imports the packages straight from a checkout (a script run
from its root), in the checkout itself.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


def package_dir(package: str, checkout_folder: str) -> Path:
    """The folder of a data package, installed or in the checkout."""
    try:
        return Path(str(files(package)))
    except ModuleNotFoundError:
        return CHECKOUT / checkout_folder


def bundled_corpus() -> Path:
    """The bundled ICML 2026 abstracts (``data/icml2026`` in a checkout)."""
    return package_dir("askpapers.bundled", "data") / "icml2026"
