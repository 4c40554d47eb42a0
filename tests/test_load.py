"""A short load test of the web app's HTTP API: 5 concurrent chat sessions, each asking its three questions.

Runs the machinery of ``bench.load`` (``make bench-load`` is the 60 s version, with latency and memory figures):
``askpapers serve`` as a subprocess on 127.0.0.1 over a fresh store, reference answers asked one at a time, then the
sessions at once. Only correctness is asserted here: every request answered, no session seeing another's history
or citations. The sessions ask a fixed number of questions, not for a fixed time, so a slow machine asks the same.
"""

from __future__ import annotations

from pathlib import Path

from bench import load

SESSIONS = 5
TURNS = 3  # each session's whole conversation: a question and two follow-ups


def test_concurrent_sessions_are_all_answered_and_isolated(tmp_path: Path) -> None:
    assert len({c[0] for c in load.CONVERSATIONS[:SESSIONS]}) == SESSIONS, "every session asks its own question"
    # sessions take turns: plain HTTP with a session hash, the simple /call API, gradio_client
    result = load.run_load(SESSIONS, 1.0, client="mixed", turns=TURNS, progress=lambda msg: print(msg, flush=True))

    assert result.errors == [], result.errors[:5]
    assert result.violations == [], result.violations[:5]
    assert len(result.requests) == SESSIONS * TURNS
    assert all(r.ok for r in result.requests)
    assert {r.session for r in result.requests} == set(range(SESSIONS)), "every session was answered"
    assert {r.turn for r in result.requests} == {0, 1, 2}, "follow-ups were asked"
    assert result.references == 3 * SESSIONS
    report = load.render_report(result, "pytest tests/test_load.py")
    assert "| failed requests | **0** |" in report and "| isolation violations | **0**" in report


def test_isolation_check_catches_a_foreign_answer() -> None:
    mine = ((1, "p-mine", "Mine", "Evidence."),)
    other = ((1, "p-other", "Other", "Other evidence."),)
    result = {"question": "Which of them use mutual information?", "citations": []}
    q = "Which of them use mutual information?"
    assert load.check_isolation(0, 1, q, result, mine, mine, {"p-mine"}) == []
    problems = load.check_isolation(0, 1, q, result, other, mine, {"p-mine"})
    assert len(problems) == 2 and "asked alone" in problems[0] and "previous answer" in problems[1]
    assert "another question" in load.check_isolation(0, 0, "Which papers use X?", result, mine, mine, None)[0]
    # a follow-up may cite papers the previous answer did not list when it says so
    said = {**result, "answer": f"Of the 1 papers in the previous answer, none matches; 1 paper {load.BEYOND} does:"}
    assert load.check_isolation(0, 1, q, said, other, other, {"p-mine"}) == []


def test_two_replicas_on_one_chroma_server_answer_alike() -> None:
    """Two `askpapers serve` processes, each with a BM25 index of its own, share a store on a `chroma run` server.
    Odd sessions talk to the second replica; their answers are checked against the first replica's reference
    answers, so a replica that answers differently (a stale or empty index of its own) shows as a violation."""
    sessions = 4
    result = load.run_load(sessions, 1.0, client="session", turns=TURNS, replicas=2,
                           progress=lambda msg: print(msg, flush=True))  # fmt: skip

    assert result.chroma_server and result.replicas == 2
    assert result.errors == [], result.errors[:5]
    assert result.violations == [], result.violations[:5]
    assert len(result.requests) == sessions * TURNS and all(r.ok for r in result.requests)
    assert {r.session for r in result.requests} == set(range(sessions)), "both replicas' sessions were answered"
    report = load.render_report(result, "pytest tests/test_load.py")
    assert "**2 `askpapers serve` processes**" in report and "| isolation violations | **0**" in report
