"""An operation counter for the project's own code, in place of a stopwatch.

While a ``Counting`` block runs, every line the interpreter executes in ``rag``, ``vectorstore`` or ``ui`` counts
one operation, and every call of a regular expression (a compiled pattern held by a module of those packages, or
``re.search``/``re.sub``/... called directly) counts the length of the text it scans: each pattern is linear in
its input (``test_linear_time`` counts their steps), so a scan costs at most a constant per character. A function
that loops over its input, or re-scans the rest of the text once per match, shows up as growing work; the count
does not depend on the machine or its load.

Work done inside C builtins (``str.replace``, ``list.index``) counts as the one line that calls it.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("askpapers.rag", "askpapers.vectorstore", "askpapers.ui")


def _package_dir(name: str) -> str:
    """The folder a package's modules are imported from (src/askpapers/rag/ in a checkout, through its symlink):
    the prefix of their code objects' file names."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations, name
    return str(Path(next(iter(spec.submodule_search_locations)))) + "/"


_DIRS = tuple(_package_dir(p) for p in PACKAGES)
_SCANNING = ("search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split")


class _CountedPattern:
    """A stand-in for a compiled pattern that adds the length of each text it is asked to scan."""

    def __init__(self, pattern: re.Pattern[str], counter: Counter) -> None:
        self._pattern = pattern
        self._counter = counter

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._pattern, name)
        if name not in _SCANNING:
            return attr

        def scan(*args: Any, **kwargs: Any) -> Any:
            text = args[1] if name in ("sub", "subn") else args[0]
            pos = args[1] if name not in ("sub", "subn") and len(args) > 1 else kwargs.get("pos", 0)
            if isinstance(text, str):
                self._counter.ops += max(len(text) - int(pos), 0) + 1
            return attr(*args, **kwargs)

        return scan


class Counter:
    def __init__(self) -> None:
        self.ops = 0


GRADIO_MODULES = frozenset({"askpapers.ui.app", "askpapers.ui.app_events", "askpapers.ui.app_tabs"})  # import gradio


def project_modules(skip: frozenset[str] = GRADIO_MODULES) -> list[ModuleType]:
    out = []
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        out.append(pkg)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg_name}."):
            if info.name not in skip and not any(info.name.startswith(s + ".") for s in skip):
                out.append(importlib.import_module(info.name))
    return out


def clear_caches(modules: list[ModuleType]) -> None:
    """Empty every memo (functools.lru_cache) of the project's text functions, so that each measured call starts
    cold: a repeated input must not be answered from the cache. Loaders of bundled data (maxsize 1) are kept."""
    for mod in modules:
        for value in vars(mod).values():
            info = getattr(value, "cache_info", None)
            if callable(info) and isinstance(value, functools._lru_cache_wrapper) and info().maxsize not in (0, 1):
                value.cache_clear()


@contextmanager
def counting(modules: list[ModuleType], also: tuple[str, ...] = ()) -> Iterator[Counter]:
    """Count the operations run inside the block (lines of the project's code, and of the files in ``also``)."""
    dirs = _DIRS + also
    counter = Counter()
    swapped: list[tuple[ModuleType, str, object]] = []
    for mod in modules:
        for name, value in list(vars(mod).items()):
            if isinstance(value, re.Pattern):
                swapped.append((mod, name, value))
                setattr(mod, name, _CountedPattern(value, counter))
    module_funcs = {name: getattr(re, name) for name in _SCANNING}

    def counted(name: str) -> Callable[..., Any]:
        original = module_funcs[name]

        def call(pattern: Any, *args: Any, **kwargs: Any) -> Any:
            text = args[1] if name in ("sub", "subn") else args[0]
            if isinstance(text, str):
                counter.ops += len(text) + 1
            if isinstance(pattern, _CountedPattern):
                pattern = pattern._pattern
            return original(pattern, *args, **kwargs)

        return call

    for name in _SCANNING:
        setattr(re, name, counted(name))

    def local(frame: FrameType, event: str, arg: object) -> object:
        if event == "line":
            counter.ops += 1
        return local

    def tracer(frame: FrameType, event: str, arg: object) -> object:
        if event == "call" and frame.f_code.co_filename.startswith(dirs):
            return local
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        yield counter
    finally:
        sys.settrace(previous)
        for name, original in module_funcs.items():
            setattr(re, name, original)
        for mod, name, value in swapped:
            setattr(mod, name, value)


def ops(fn: Callable[[], object], modules: list[ModuleType], also: tuple[str, ...] = ()) -> int:
    """The operations one cold call of ``fn`` performs."""
    clear_caches(modules)
    with counting(modules, also) as counter:
        fn()
    return counter.ops


def is_linear(counts: list[int], slack: int = 8) -> bool:
    """Whether work counted at n, 2n and 4n units grows linearly: the second doubling adds at most about twice
    what the first added. Linear work adds exactly twice as much (a·n: 2 a·n after a·n), bounded work less;
    work a·n + b·n² adds (2 + 12x) / (1 + 3x) times as much, x = b·n / a, so the bound of 2.5 fails any
    quadratic part that is a ninth of the linear part at n, and a pure quadratic (4 times) by far."""
    small, middle, large = counts
    return large - middle <= 2.5 * max(middle - small, 0) + slack
