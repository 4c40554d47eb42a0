"""The scale report keeps the first-time rows of runs whose results are no longer cached (bench.scale)."""

from __future__ import annotations

from bench.scale import earlier_rows, first_time_report

SECTION = """
## First-time questions at 50k papers (issue 25)

| code | papers | questions | search p50 / p95 | ask p50 / p95 | again | first | rss | measured |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
| before-49f69a0 | 50,000 | 44 | 633.6 / 1453.9 ms | 1419.6 / 4890.2 ms | 142.1 / 787.8 ms | 11.20 s | 1,032 MB | old |
| abc1234 | 50,000 | 44 | 1.0 / 2.0 ms | 3.0 / 4.0 ms | 1.0 / 1.0 ms | 1.00 s | 1 MB | old |
"""


def _run(label: str) -> dict[str, object]:
    side = {"first_ms": [100.0, 200.0], "again_ms": [50.0], "first_ask_s": 1.5, "peak_rss_mb": 900.0}
    return {"label": label, "size": 50_000, "questions": 44, "measured": "2026-12-03 22:00", "search": side,
            "ask": side}  # fmt: skip


def test_rows_of_runs_no_longer_kept_are_written_again_before_the_kept_runs() -> None:
    kept = {"abc1234-50000": _run("abc1234")}
    earlier = earlier_rows(SECTION, kept)
    assert [row.split("|")[1].strip() for row in earlier] == ["before-49f69a0"]  # not the header, the rule, abc1234
    lines = first_time_report(kept, earlier)
    table = [line for line in lines if line.startswith("| ") and not line.startswith(("| code", "| ---"))]
    assert [row.split("|")[1].strip() for row in table] == ["before-49f69a0", "abc1234"]
    assert "150.0 / 200.0 ms" in table[1]  # the kept run is written from its results, not from the old row
    assert sum(line.startswith("| ---") for line in lines) == 1
