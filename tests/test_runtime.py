"""The collector of a long-running server (rag.runtime): settled once the store is open, by a blocking launch only."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from askpapers.rag import settle
from askpapers.rag.runtime import OLDER, YOUNG


@pytest.fixture()
def restored_gc() -> Iterator[None]:
    before = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


def test_settle_freezes_what_is_alive_and_collects_less_often(restored_gc: None) -> None:
    gc.unfreeze()
    kept = [object() for _ in range(10)]  # noqa: F841  (alive while settle runs)
    assert gc.get_freeze_count() == 0
    settle()
    assert gc.get_freeze_count() > 0  # everything alive left the generations the collector walks
    assert gc.get_threshold() == (YOUNG, OLDER, OLDER)
    assert YOUNG > 700  # rarer than CPython's default young collections
    # cycles made afterwards are still found and freed
    a: list[Any] = []
    a.append(a)
    del a
    assert gc.collect() >= 1


class _Demo:
    def queue(self, **_: Any) -> _Demo:
        return self

    def launch(self, **_: Any) -> str:
        return "launched"


@pytest.mark.parametrize("block", [True, False])
def test_only_a_blocking_launch_settles_the_collector(
    block: bool, monkeypatch: pytest.MonkeyPatch, fresh_settings: Any, restored_gc: None
) -> None:
    import askpapers.ui.app as web

    calls: list[str] = []

    class _App:
        settings = fresh_settings
        index = None

    monkeypatch.setattr(web, "settle", lambda: calls.append("settle"))
    monkeypatch.setattr(web, "build", lambda app: _Demo())
    monkeypatch.setattr(web, "exit_on_sigterm", lambda before: calls.append("sigterm"))
    monkeypatch.setattr(web.corpus_view, "warm_map", lambda app: None)
    assert web.launch(fresh_settings, app=_App(), block=block) == "launched"  # type: ignore[arg-type]
    assert calls == (["sigterm", "settle"] if block else [])
