"""The askpapers command end to end, in fresh processes, on the bundled corpus."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CORPUS

ASKPAPERS = Path(sys.executable).parent / "askpapers"


def run(args: list[str], data_dir: Path, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASKPAPERS_DATA_DIR": str(data_dir), "ASKPAPERS_DEFAULT_CORPUS": str(CORPUS)}
    proc = subprocess.run([str(ASKPAPERS), *args], capture_output=True, text=True, env=env, timeout=300)
    assert "Traceback" not in proc.stderr
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    proc = run(["ingest", str(CORPUS), "--no-progress"], d)
    assert "38 added" in proc.stdout
    return d


def test_ingest_is_idempotent(cli_store: Path) -> None:
    proc = run(["ingest", str(CORPUS), "--json"], cli_store)
    report = json.loads(proc.stdout)
    assert (report["added"], report["unchanged"], report["chunks"]) == (0, 38, 0)


def test_ask_json(cli_store: Path) -> None:
    proc = run(["ask", "Which papers use information bottleneck?", "--json"], cli_store)
    data = json.loads(proc.stdout)
    assert set(data) >= {"question", "answer", "mode", "found", "citations"}
    assert data["mode"] == "extractive" and data["found"] is True
    assert len(data["citations"]) == 6
    for c in data["citations"]:
        assert set(c) >= {"n", "paper_id", "title", "evidence", "abstract", "score", "venue", "url", "code_urls"}
        assert c["evidence"] in c["abstract"]
        assert c["venue"] == "ICML 2026"


def test_ask_text_and_search(cli_store: Path) -> None:
    proc = run(["ask", "Which papers are about reservoir computing?"], cli_store)
    assert "Found 1 paper" in proc.stdout and "1. Parallel Echo State Network (ParalESN) [1]" in proc.stdout
    assert "\n[1] Parallel Echo State Network (ParalESN) — ICML 2026" in proc.stdout  # sources name their papers
    proc = run(["search", "contextual bandits paid observations", "--k", "3", "--json"], cli_store)
    results = json.loads(proc.stdout)["results"]
    assert len(results) == 3 and results[0]["title"] == "Near-optimal algorithm for adversarial environments"


def test_first_ask_on_empty_store_ingests_bundled_corpus(tmp_path: Path) -> None:
    proc = run(["ask", "Which papers study contextual bandits?", "--json"], tmp_path / "empty")
    assert json.loads(proc.stdout)["citations"][0]["title"] == "Near-optimal algorithm for adversarial environments"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ingest", "/no/such/file.txt"], "no such file"),
        (["ask", "   "], "question is empty"),
        (["ingest", "{latin1}"], "not UTF-8"),
        (["ingest", "{badjsonl}"], "bad.jsonl:2"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(tmp_path: Path, cli_store: Path, args: list[str], message: str) -> None:
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Caf\xe9 abstracts about na\xefve Bayes.".encode("latin-1"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"abstract": "ok"}\n{broken\n', encoding="utf-8")
    args = [a.format(latin1=latin1, badjsonl=bad) for a in args]
    proc = run(args, cli_store, ok=False)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# -- flags and errors (issue 16) ------------------------------------------------------------------------------------


def test_version_prints_the_package_version(tmp_path: Path) -> None:
    from importlib.metadata import version

    proc = run(["--version"], tmp_path)
    assert proc.stdout.strip() == f"askpapers {version('askpapers')}"


@pytest.mark.parametrize("where", ["gold", "corpus"])
def test_eval_of_a_missing_file_says_file_not_found(tmp_path: Path, where: str) -> None:
    missing = tmp_path / "no-such-file.jsonl"
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"kind": "list", "question": "q"}) + "\n", encoding="utf-8")
    args = [str(missing)] if where == "gold" else [str(gold), "--corpus", str(missing)]
    proc = run(["eval", *args], tmp_path, ok=False)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == f"askpapers: error: file not found: {missing}\n"


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_serve_on_a_busy_port_says_so_and_suggests_port(tmp_path: Path, busy_port: int) -> None:
    proc = run(["serve", "--port", str(busy_port)], tmp_path, ok=False)
    assert proc.returncode == 1 and "internal error" not in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert f"port {busy_port} on 127.0.0.1 is already in use" in proc.stderr and "--port" in proc.stderr


def test_serve_maps_gradios_busy_port_error(
    tmp_path: Path, busy_port: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The port taken between the check and Gradio's own bind: Gradio's OSError is said the same way."""
    from askpapers.ui import cli, commands

    monkeypatch.setenv("ASKPAPERS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ASKPAPERS_DEFAULT_CORPUS", str(CORPUS))
    monkeypatch.setattr(commands, "port_free", lambda host, port: True)  # the check passed a moment before
    from askpapers.rag.settings import get_settings

    get_settings.cache_clear()
    try:
        assert cli.main(["serve", "--port", str(busy_port)]) == 1
    finally:
        get_settings.cache_clear()
    err = capsys.readouterr().err
    assert f"port {busy_port} on 127.0.0.1 is already in use" in err and "internal error" not in err


def test_ingest_progress_moves_inside_the_first_batch(tmp_path: Path) -> None:
    import re

    proc = run(["ingest", str(CORPUS), "--progress"], tmp_path)
    shown = [int(n) for n in re.findall(r"\b(\d+)/38\b", proc.stderr)]
    assert shown and shown[0] == 0 and any(0 < n < 38 for n in shown), proc.stderr[-500:]


def test_ingest_rerun_says_nothing_to_do(cli_store: Path) -> None:
    proc = run(["ingest", str(CORPUS), "--no-progress"], cli_store)
    assert proc.stdout == "nothing to do: all 38 papers are already indexed; store holds 38 papers\n"


def test_ingest_of_a_csv_without_abstracts_fails_and_changes_nothing(tmp_path: Path, cli_store: Path) -> None:
    bad = tmp_path / "titles.csv"
    bad.write_text("id,title,venue\n1,A title,ICML 2024\n", encoding="utf-8")
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"id": "narwhal", "abstract": "Narwhal tusks sense salinity."}) + "\n", encoding="utf-8")
    proc = run(["ingest", str(good), str(bad), "--no-progress"], cli_store, ok=False)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"askpapers: error: {bad}: no paper found: no 'abstract' or 'text' column")
    assert proc.stderr.count("\n") == 1
    report = json.loads(run(["ingest", str(CORPUS), "--json"], cli_store).stdout)
    assert report["total_papers"] == 38, "nothing was written"
    proc = run(["ingest", str(bad), "--skip-bad", "--no-progress"], cli_store)
    assert "1 skipped" in proc.stdout and f"skipped {bad}:2: record has no abstract" in proc.stderr


# -- "Showing N of M" and how to list them all (issue 16) -------------------------------------------------------------
IB = "Which papers use information bottleneck?"


def test_ask_says_how_to_list_every_paper_and_all_lists_them(cli_store: Path) -> None:
    short = run(["ask", IB, "--k", "2"], cli_store).stdout
    assert "Showing 2 of 6 papers" in short and "[3]" not in short
    assert short.rstrip().endswith("Showing 2 of 6 papers; add --all to list all 6."), short[-300:]
    for flag in (["--all"], ["--k", "all"], ["--k", "ALL"]):
        every = run(["ask", IB, "--k", "2", *flag], cli_store).stdout
        assert "Showing" not in every and "--all" not in every, flag
        assert all(f"[{n}]" in every for n in range(1, 7)), flag
    data = json.loads(run(["ask", IB, "--all", "--json"], cli_store).stdout)
    assert len(data["citations"]) == data["total"] == 6
    help_text = run(["ask", "--help"], cli_store).stdout
    assert "--all" in help_text and "N|all" in help_text and "Showing N of M papers" in help_text


@pytest.mark.parametrize(("k", "message"), [("x", "--k takes a whole number or 'all'"),
                                            ("0", "k must be a whole number from 1 to 1000")])  # fmt: skip
def test_a_bad_k_is_refused_with_the_choices(cli_store: Path, k: str, message: str) -> None:
    proc = run(["ask", IB, "--k", k], cli_store, ok=False)
    assert proc.returncode != 0 and message in proc.stderr


def test_chat_all_lists_every_paper_of_the_last_answer(cli_store: Path) -> None:
    env = {**os.environ, "ASKPAPERS_DATA_DIR": str(cli_store), "ASKPAPERS_DEFAULT_CORPUS": str(CORPUS)}
    proc = subprocess.run([str(ASKPAPERS), "chat", "--k", "2"], input=f"{IB}\n/all\n\n", capture_output=True,
                          text=True, env=env, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.split("you> ")[1:3]
    assert "Showing 2 of 6 papers; type /all to list all 6." in first and "[3]" not in first
    assert "Showing" not in second and all(f"[{n}]" in second for n in range(1, 7))


def test_sources_name_each_paper_and_quotes_render_their_emphasis(cli_store: Path) -> None:
    """Sources read "[n] Title — Venue"; an abstract's own **emphasis** is rendered, so a pipe gets no "**"."""
    out = run(["ask", "Which papers use information bottleneck?"], cli_store).stdout
    sources = out.split("\nSources\n", 1)[1].splitlines()
    assert len(sources) == 6 and all(re.fullmatch(r"\[\d\] .+ — ICML 2026( · .*)?", line) for line in sources)
    assert any(re.fullmatch(r"\[\d\] SymSpectra: Functional group imbalance — ICML 2026", line) for line in sources)
    assert "we present SymSpectra, a Symmetric Conditional Information Bottleneck" in out
    assert "**" not in out
    data = json.loads(run(["ask", "Which papers use information bottleneck?", "--json"], cli_store).stdout)
    assert any("**SymSpectra**" in c["evidence"] for c in data["citations"]), "--json stays verbatim"


@pytest.mark.parametrize("json_flag", [["--json"], []])
def test_a_closed_pipe_ends_quietly(cli_store: Path, tmp_path: Path, json_flag: list[str]) -> None:
    """`askpapers ask … | head`: when the reader has gone, the command exits as SIGPIPE would (128 + 13), with
    nothing on stderr and no error log."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write: every write fails with EPIPE
    env = {**os.environ, "ASKPAPERS_DATA_DIR": str(cli_store), "ASKPAPERS_DEFAULT_CORPUS": str(CORPUS),
           "HOME": str(tmp_path)}  # fmt: skip
    try:
        proc = subprocess.run([str(ASKPAPERS), "ask", "Which papers use information bottleneck?", *json_flag],
                              stdout=write, stderr=subprocess.PIPE, text=True, env=env, timeout=300)  # fmt: skip
    finally:
        os.close(write)
    assert proc.stderr == ""
    assert proc.returncode == 141
    assert not (tmp_path / ".askpapers-error.log").exists()


def test_chat_slash_commands_are_commands_never_questions(cli_store: Path) -> None:
    env = {**os.environ, "ASKPAPERS_DATA_DIR": str(cli_store), "ASKPAPERS_DEFAULT_CORPUS": str(CORPUS)}
    keys = ["/help", "/frobnicate", "/Help me", IB, "/clear", "/all", "/quit", IB]
    proc = subprocess.run([str(ASKPAPERS), "chat", "--k", "2"], input="\n".join(keys) + "\n", capture_output=True,
                          text=True, env=env, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    turns = proc.stdout.split("you> ")[1:]
    assert len(turns) == 7, "nothing after /quit is read"
    assert all(c in turns[0] for c in ("/help", "/all", "/clear", "/quit")) and "Found" not in turns[0]
    assert "Unknown command /frobnicate: try /help" in turns[1] and "Found" not in turns[1]
    assert "/clear" in turns[2] and "Found" not in turns[2], "/Help with words is still the command"
    assert "Found 6 papers" in turns[3]
    assert "started afresh" in turns[4]
    assert "no answer to list in full yet" in turns[5], "/clear forgot the last answer"
    assert "matching “help”" not in proc.stdout and "frobnicate”" not in proc.stdout


ROOT = Path(__file__).resolve().parent.parent


def test_make_run_says_how_to_reach_the_cli_and_the_shim_works(cli_store: Path, tmp_path: Path, busy_port: int) -> None:
    """After `make run`, `askpapers` is not on the PATH: `make run` says how to reach it (the ./askpapers shim, or
    activating the venv) before it starts the web app, and the shim works from any directory."""
    env = {**os.environ, "ASKPAPERS_DATA_DIR": str(cli_store), "ASKPAPERS_DEFAULT_CORPUS": str(CORPUS),
           "ASKPAPERS_PORT": str(busy_port)}  # fmt: skip
    env.pop("MAKEFLAGS", None)
    proc = subprocess.run(["make", "--no-print-directory", "run"], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=600)  # fmt: skip
    assert "already in use" in proc.stderr, proc.stderr  # (the busy port stops the web app: the test ends here)
    hint = next(line for line in proc.stdout.splitlines() if line.startswith("The CLI:"))
    assert "./askpapers ask" in hint and "source .venv/bin/activate" in hint
    shim = subprocess.run([str(ROOT / "askpapers"), "ask", IB, "--json"], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=300)  # fmt: skip
    assert shim.returncode == 0, shim.stderr
    assert len(json.loads(shim.stdout)["citations"]) == 6
    first_screen = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:30])
    assert "./askpapers" in first_screen and "source .venv/bin/activate" in first_screen
