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


def _large(code: str, total: int) -> dict[str, object]:
    q = {"search_first": [100.0, 120.0], "ask_first": [200.0, 240.0], "search_again": [50.0], "ask_again": [90.0],
         "count_s": 0.5, "count_total": 7, "cold_s": 1.0, "peak_rss_mb": 1000.0}  # fmt: skip
    update = {"files": [{"file": "x", "seconds": 1.0, "added": 1000, "total": total, "lexical_s": 3.7}]}
    return {"size": total, "code": code, "measured": "now", "questions": q, "fts_count": 6, "server_rss_mb": 2000.0,
            "disk_mb": 1024.0, "lexical_mb": 512.0, "update": update}  # fmt: skip


def test_the_large_section_keeps_earlier_rows_and_its_notes() -> None:
    """`bench.scale --large` writes its section again from the kept runs: a run at a size kept now replaces its own
    row, the rows of other runs stay (before the kept runs'), and so do the notes under the plot."""
    from bench.scale import splice
    from bench.scale_large import LARGE_HEADING, PLOT_LINE, large_section

    old = "\n".join([
        "# Report", "", LARGE_HEADING, "", "| code | papers | more |", "| --- | --- | --- |",
        "| aaa1111 | 902,968 | an earlier run |", "| bbb2222 | 1,008,968 | this run, measured before |", "",
        PLOT_LINE, "", "**Notes.** Written by hand.", "", "## Next section", "Kept too.", ""])  # fmt: skip
    lines = large_section(old, {"1000000": _large("bbb2222", 1_008_968)})
    rows = [line for line in lines if line.startswith("| ") and not line.startswith(("| code", "| ---"))]
    assert [row.split("|")[1].strip() for row in rows] == ["aaa1111", "bbb2222"]
    assert "110 / 120 ms" in rows[1] and "measured before" not in rows[1]  # (the median of 100 and 120)
    text = splice(old, LARGE_HEADING, lines)
    assert "**Notes.** Written by hand." in text and text.count(PLOT_LINE) == 1
    assert text.endswith("## Next section\nKept too.\n") and text.count("| aaa1111 |") == 1


def test_the_speed_ratio_is_judged_on_the_medians_of_the_rounds() -> None:
    """bench.speed_ratio: each round's ask p50 of both codes, and the bound judged on the ratio of their medians
    over the rounds (one slow round of either code does not decide it)."""
    from bench.speed_ratio import report

    def run(ask: list[float]) -> dict[str, object]:
        return {"search_ms": [1.0, 2.0, 3.0], "ask_ms": ask, "cited": 7}

    base = [run([9.0, 10.0, 30.0]), run([10.0, 20.0, 40.0]), run([9.0, 11.0, 12.0])]  # p50 10, 20, 11
    fast = [run([13.0, 14.0, 99.0]), run([12.0, 15.0, 16.0]), run([1.0, 16.0, 17.0])]  # p50 14, 15, 16: 15 / 11
    slow = [run([16.0, 17.0, 18.0]), run([1.0, 40.0, 41.0]), run([17.0, 17.5, 30.0])]  # p50 17, 40, 17.5: 17.5 / 11
    loads = ["0.1/0.2/0.3"] * 3
    met = report(list(zip(base, fast, strict=True)), "5d34b5e" + "0" * 33, "abc1234", loads)
    assert "**1.36 ×**" in met and "the bound (1.5 ×) met" in met
    assert "| 2 | 0.1/0.2/0.3 | 2.0 / 20.0 ms | 2.0 / 15.0 ms | 0.75 × | 7 / 7 |" in met
    missed = report(list(zip(base, slow, strict=True)), "5d34b5e" + "0" * 33, "abc1234", loads)
    assert "**1.59 ×**" in missed and "the bound (1.5 ×) not met" in missed
