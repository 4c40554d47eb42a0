"""What `ask`, `search` and `chat` print: on a terminal (a real pseudo-terminal here) wrapped, styled, inert text;
through a pipe plain text; quotes verbatim either way; search snippets whole sentences, weak results marked."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import selectors
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from askpapers.vectorstore.text import sentences
from tests.conftest import CORPUS, make_settings
from tests.fake_openai import FakeOpenAI, Reply

ASKPAPERS = Path(sys.executable).parent / "askpapers"
SGR = re.compile(r"\x1b\[[0-9;]*m")
CODE_LINE = "Our code is available at: https://github.com/capy/grooming."
CAPY = {
    "id": "capy",
    "title": "Capybara grooming networks with [bold]markup[/bold] & **stars**",
    "authors": "Ana Ruiz; Bo Li",
    "url": "https://openreview.net/forum?id=capy",
    "abstract": (
        f"{CODE_LINE} Capybara grooming networks are studied with a $4\\times$ faster sampler and "
        "\\textbf{bold} claims, *stars*, [bold]rich markup[/bold], &amp; entities, <b>tags</b> and `ticks`. "
        "The grooming graph of \x1b]52;c;ZXZpbA==\x07 wild capybaras is measured over many long field seasons by "
        "careful volunteers who record every single grooming bout between every pair of animals in the herd. "
        "They note the firstwords and secondwords each bout arrive with."  # (the LLM test's marker words: stated, so
    ),  # the support check, which flags a claim's words that no cited abstract has, leaves them alone)
}
QUESTION = "Which papers study capybara grooming networks?"
COLUMNS = 80


def cli_env(d: Path, record: dict[str, Any], embedder: Any, *, bundled: bool) -> dict[str, str]:
    """The environment of a CLI run against a store of its own: ``record`` (and the bundled corpus)."""
    from askpapers.vectorstore.pipeline import ingest

    f = d / f"{record['id']}.jsonl"
    f.write_text(json.dumps(record) + "\n", encoding="utf-8")
    settings = make_settings(d / "store")
    if settings.store.mode != "embedded":
        pytest.skip("the CLI runs against the embedded store here")
    ingest([CORPUS, f] if bundled else [f], settings.store, progress=False, embedder=embedder)
    return {**os.environ, "ASKPAPERS_DATA_DIR": str(settings.store.data_dir),
            "ASKPAPERS_COLLECTION": settings.store.collection, "COLUMNS": str(COLUMNS)}  # fmt: skip


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, str]:
    return cli_env(tmp_path_factory.mktemp("terminal"), CAPY, embedder, bundled=True)


def piped(args: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run([str(ASKPAPERS), *args], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def in_terminal(
    args: list[str], env: dict[str, str], keys: list[bytes] = (), prompt: bytes = b"you> ",  # type: ignore[assignment]
    when: tuple[bytes, Callable[[bytes], None]] | None = None,
) -> str:  # fmt: skip
    """Run the command on a pseudo-terminal COLUMNS wide; type each of ``keys`` after each ``prompt``; once the
    output holds ``when[0]``, call ``when[1]`` with the output so far."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, COLUMNS, 0, 0))
    proc = subprocess.Popen([str(ASKPAPERS), *args], stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = b""
    todo = list(keys)
    deadline = time.monotonic() + 300
    watch = selectors.DefaultSelector()  # (epoll: select() fails on descriptors above 1023 in a long test run)
    watch.register(master, selectors.EVENT_READ)
    try:
        while time.monotonic() < deadline:
            ready = watch.select(1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            if todo and out.count(prompt) > len(keys) - len(todo):
                os.write(master, todo.pop(0))
            if when and when[0] in out:
                when[1](out)
                when = None
            if proc.poll() is not None and not ready:
                break
    finally:
        watch.close()
        os.close(master)
        proc.wait(timeout=60)
    assert proc.returncode == 0, out.decode("utf-8", "replace")[-2000:]
    return out.decode("utf-8")


def _evidence(env: dict[str, str]) -> list[dict[str, Any]]:
    data = json.loads(piped(["ask", QUESTION, "--json"], env))
    assert data["citations"] and data["citations"][0]["paper_id"] == "capy"
    return list(data["citations"])


def shown(evidence: str) -> str:
    """A quote as printed: its Markdown emphasis (``*stars*``) rendered, so without the asterisks."""
    return re.sub(r"(\*{1,2})(\w[^*]*?)\1", r"\2", evidence)


def _check_inert(text: str) -> None:
    rest = SGR.sub("", text)
    for bad in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert bad not in rest, repr(bad)


def test_piped_ask_is_plain_text_with_verbatim_quotes_and_urls(env: dict[str, str]) -> None:
    out = piped(["ask", QUESTION], env)
    _check_inert(out)
    assert "\x1b" not in out, "no styling through a pipe"
    for c in _evidence(env):  # exactly as in the abstract, its own *emphasis* rendered (as the web app does)
        assert shown(c["evidence"]).replace("\x1b]52;c;ZXZpbA==\x07", "") in out, c["evidence"]
    assert "$4\\times$" in out and "\\\\" not in out
    assert "**" not in out.replace("**stars**", ""), "Markdown emphasis is rendered, not printed"
    assert "*stars*, [bold]" not in out and "stars, [bold]" in out
    assert "[bold]rich markup[/bold]" in out and "&amp;" in out  # shown as text, never interpreted
    assert f"\n[1] {CAPY['title']} · {CAPY['url']}" in out, "the sources name each paper, its title as stored"
    assert "1. Capybara grooming networks with [bold]markup[/bold] & stars [1]" in out  # (its emphasis rendered)
    assert CAPY["url"] in out


def test_terminal_ask_is_wrapped_bold_and_inert(env: dict[str, str]) -> None:
    out = in_terminal(["ask", QUESTION, "--k", "3"], env)
    _check_inert(out)
    assert "\x1b[1m" in out, "titles in bold"
    assert "\x1b]8;" not in out, "links as text, no terminal hyperlinks"
    lines = SGR.sub("", out).replace("\r\n", "\n").split("\n")
    assert max(len(line.rstrip()) for line in lines) <= COLUMNS
    flat = " ".join(SGR.sub("", out).split())
    for c in _evidence(env)[:3]:
        assert " ".join(shown(c["evidence"]).replace("\x1b]52;c;ZXZpbA==\x07", "").split()) in flat
    assert "[bold]rich markup[/bold]" in flat and CAPY["url"] in flat
    assert "*stars*, [bold]" not in flat and "stars, [bold]" in flat  # the abstract's emphasis, rendered


def test_search_snippets_are_content_sentences_cut_at_words(env: dict[str, str]) -> None:
    data = json.loads(piped(["search", "capybara grooming", "--k", "10", "--json"], env))
    results = data["results"]
    top = results[0]
    assert top["paper_id"] == "capy" and top["weak"] is False
    assert top["snippet"] != CODE_LINE and top["snippet"] in sentences(top["abstract"])
    for r in results:
        assert r["snippet"] in r["abstract"]
        end = r["abstract"].index(r["snippet"]) + len(r["snippet"])
        assert end == len(r["abstract"]) or not r["abstract"][end].isalnum(), "cut at a word boundary"
    out = piped(["search", "capybara grooming", "--k", "10"], env)
    for line in out.splitlines():
        if line.endswith("…"):
            assert line[-2] != " " and line.rstrip("…").split()[-1] in top["abstract"] + out


def test_search_marks_weak_results(env: dict[str, str]) -> None:
    data = json.loads(piped(["search", "quantum error correction", "--json"], env))
    assert data["results"] and all(r["weak"] for r in data["results"])
    out = piped(["search", "quantum error correction"], env)
    assert out.startswith("No paper states “quantum error correction”") and out.count(", weak match)") == 10
    strong = json.loads(piped(["search", "reservoir computing", "--json"], env))["results"]
    assert strong[0]["title"].startswith("Parallel Echo State Network") and not strong[0]["weak"]


def test_chat_recalls_the_last_question_with_the_up_arrow(env: dict[str, str]) -> None:
    out = in_terminal(["chat", "--mode", "extractive"], env, [QUESTION.encode() + b"\r", b"\x1b[A\r", b"\r"])
    assert "^[[A" not in out
    shown = SGR.sub("", out)
    assert shown.count(f"you> {QUESTION}") == 2, "the up arrow brought the question back"
    assert shown.count("Sources") == 2, "and it was answered again"


# -- an LLM's answer streams live on a terminal, then the checked answer replaces it ----------------------------
HOSTILE = "\x1b]52;c;ZXZpbA==\x07 \x1b[2J\x1b[31mred \u202eevil \x9b31m"
DRAFT = (
    "Capybara grooming networks are measured over long field seasons [1]. firstwords arrive first "
    f"{HOSTILE} and the draft goes on, secondwords arrive later [1]. It ends here [1]."
)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


def test_llm_answer_streams_live_then_the_checked_answer_replaces_it(env: dict[str, str], fake: FakeOpenAI) -> None:
    import threading

    fake.reset()
    fake.quiet_steps()
    gate = threading.Event()
    fake.on("answer", Reply(DRAFT, pause=gate))  # half the words, then a wait until the test has seen them
    seen: list[bytes] = []

    def release(out: bytes) -> None:
        seen.append(out)
        gate.set()

    llm = {**env, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake.url, "ASKPAPERS_LLM_MAX_RETRIES": "0"}
    try:
        out = in_terminal(["ask", QUESTION, "--mode", "llm"], llm, when=(b"firstwords", release))
    finally:
        gate.set()
    assert seen, "the first half of the model's text was shown while the rest was still being written"
    early = seen[0].decode("utf-8", "replace")
    assert "writing the answer" in early and "secondwords" not in early
    assert fake.of("answer"), "the answer came from the model"
    for bad in ("\x1b]52", "\x1b[2J", "\x1b[31m", "\x9b", "\u202e", "\x07"):
        assert bad not in out, f"the model's {bad!r} reached the terminal"
    shown = " ".join(screen_of(out).split())
    assert "writing the answer" not in shown, "the draft is erased"
    assert shown.count("firstwords arrive first") == 1 and shown.count("secondwords arrive later") == 1
    assert "Sources" in shown and "LLM (" in shown and shown.index("secondwords") < shown.index("Sources")


CONTROL = re.compile(r"\x1b\[[0-9;]*m|\x1b\[\?25[lh]|\x1b\[1A|\x1b\[2K|\r|\n|\x1b")


def screen_of(out: str) -> str:
    """What a terminal shows after ``out``: styles, line moves and line erases are played; any other escape
    sequence fails the test (only rich's own redraws may reach the terminal)."""
    rows, row, col = [""], 0, 0
    pos = 0
    for m in [*CONTROL.finditer(out), None]:
        text = out[pos : m.start() if m else len(out)]
        line = rows[row].ljust(col)
        rows[row] = line[:col] + text + line[col + len(text) :]
        col += len(text)
        if m is None:
            break
        pos, code = m.end(), m.group(0)
        assert code != "\x1b", f"an escape sequence other than rich's: {out[m.start() : m.start() + 12]!r}"
        if code == "\r":
            col = 0
        elif code == "\n":
            row, col = row + 1, 0
            rows += [""] * (row + 1 - len(rows))
        elif code == "\x1b[1A":
            row = max(0, row - 1)
        elif code == "\x1b[2K":
            rows[row] = ""
    return "\n".join(rows)


# -- titles' LaTeX as text; quotes exactly as the abstract has them ---------------------------------------------
WOMBAT = {
    "id": "wombat",
    "title": "$\\ell_2$-Regularised Wombat Burrows with $\\mathcal{O}(n^2)$ Tunnels",
    "abstract": "We study wombat burrow geometry with an $\\ell_2$ penalty and a $4\\times$ faster survey. "
    "Wombat burrows are mapped over two long field seasons by careful volunteers.",
}


@pytest.fixture(scope="module")
def wombat_env(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> dict[str, str]:
    return cli_env(tmp_path_factory.mktemp("wombat"), WOMBAT, embedder, bundled=False)


def test_titles_show_their_latex_as_text_and_quotes_stay_verbatim(wombat_env: dict[str, str]) -> None:
    title = "ℓ₂-Regularised Wombat Burrows with O(n²) Tunnels"
    out = piped(["ask", "Which papers study wombat burrows?"], wombat_env)
    assert f"1. {title} [1]" in out, out
    assert "$\\ell_2$ penalty and a $4\\times$ faster survey" in out, "the quote is the abstract's exact text"
    assert "$\\ell_2$-Regularised" not in out
    flat = " ".join(SGR.sub("", in_terminal(["ask", "Which papers study wombat burrows?"], wombat_env)).split())
    assert title in flat and "$\\ell_2$ penalty" in flat
    found = piped(["search", "wombat burrows", "--k", "1"], wombat_env)
    assert found.startswith(f"1. {title}  (score") and "$\\ell_2$ penalty" in found
    data = json.loads(piped(["ask", "Which papers study wombat burrows?", "--json"], wombat_env))
    assert data["citations"][0]["title"] == WOMBAT["title"], "--json is unchanged"
