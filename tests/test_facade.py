"""rag's facade: every name it exports resolves, and none is shadowed by a module of the package."""

from __future__ import annotations

import importlib
import pkgutil

from askpapers import rag


def test_every_facade_name_resolves_to_what_its_module_defines() -> None:
    for name, module in rag._EXPORTS.items():
        assert getattr(rag, name) is getattr(importlib.import_module(module), rag._RENAMED.get(name, name)), name
    assert sorted(rag.__all__) == sorted(rag._EXPORTS)


def test_no_facade_name_is_also_a_module_of_rag() -> None:
    """A facade name that were also a module or a room of rag (``rag.read``, say) would give the module once anything
    had imported it."""
    modules = {info.name for info in pkgutil.iter_modules(rag.__path__)}
    assert not set(rag._EXPORTS) & modules


def test_the_errors_ui_catches_are_the_ones_rag_raises() -> None:
    from askpapers.vectorstore import errors

    assert rag.QuestionError is errors.QuestionError and issubclass(rag.QuestionError, rag.AskPapersError)
    assert rag.InputError is errors.InputError
