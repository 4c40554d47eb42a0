"""The built wheel works outside the checkout: installed into a fresh venv in a temporary directory, it answers
from its bundled corpus (first-run ingest), in LLM mode through a real OpenAI-compatible server, and as a web app."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI, Reply

UV = Path(sys.executable).parent / "uv"
IB = "Which papers use information bottleneck?"


def _run(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=900, **kw)  # type: ignore[call-overload,no-any-return]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str], Path]]:
    """(the fresh venv's askpapers, an environment without the checkout, a working directory outside it)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    files = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT).stdout.split("\0")
    for name in filter(None, files):  # a copy of the tracked files: building never writes into the checkout
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    built = _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp / "dist"), str(src)])
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((tmp / "dist").glob("askpapers-*.whl"))
    venv = tmp / "venv"
    assert _run([str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)]).returncode == 0
    inst = _run([str(UV), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheel),
                 "-c", str(ROOT / "requirements.lock")])  # fmt: skip
    assert inst.returncode == 0, inst.stderr[-2000:]
    work = tmp / "elsewhere"
    work.mkdir()
    (tmp / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASKPAPERS_", "OPENAI_", "PYTHON"))}
    env.update({"ASKPAPERS_DATA_DIR": str(tmp / "data"), "HOME": str(tmp / "home"), "VIRTUAL_ENV": str(venv)})
    yield venv / "bin" / "askpapers", env, work


def test_the_wheel_carries_prompts_and_the_bundled_corpus(installed: tuple[Path, dict[str, str], Path]) -> None:
    exe, env, work = installed
    python = exe.parent / "python"
    probe = _run([str(python), "-c", "import rag, vectorstore.resources as r, rag.answerers.chain as c; "
                  "print(rag.__file__); print(r.bundled_corpus()); print(len(c.load_prompt('answer')))"],
                 cwd=work, env=env)  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    module, corpus, prompt = probe.stdout.split("\n")[:3]
    assert str(ROOT) not in module and str(ROOT) not in corpus, "imported from the installed wheel, not the checkout"
    assert sorted(p.name for p in Path(corpus).glob("*.txt")) == sorted(
        p.name for p in (ROOT / "data" / "icml2026").glob("*.txt")
    )
    assert int(prompt) > 200


def test_the_wheel_carries_the_trained_models_its_rooms_load(installed: tuple[Path, dict[str, str], Path]) -> None:
    """rag/ranker/ is shared by three rooms (read, retrieve, decide); each loads its model from the installed wheel."""
    exe, env, work = installed
    code = ("import rag.read.topicality as t, rag.retrieve.rerank as r, rag.decide.membership as m; "
            "t.Model.load(); r.Forest.load(r.model_path()); m.Membership.load(); "
            "print(t.model_path()); print(r.model_path()); print(m.model_path())")  # fmt: skip
    probe = _run([str(exe.parent / "python"), "-c", code], cwd=work, env=env)
    assert probe.returncode == 0, probe.stderr
    paths = [Path(line) for line in probe.stdout.split("\n")[:3]]
    assert [p.name for p in paths] == ["topicality.json", "reranker.txt", "membership.txt"]
    assert all(p.is_file() and str(ROOT) not in str(p) for p in paths), paths


def test_ask_ingests_the_bundled_corpus_on_first_use(installed: tuple[Path, dict[str, str], Path]) -> None:
    exe, env, work = installed
    proc = _run([str(exe), "ask", IB, "--mode", "extractive"], cwd=work, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Found 6 papers" in proc.stdout


def test_ask_in_llm_mode_against_a_real_http_server(installed: tuple[Path, dict[str, str], Path]) -> None:
    exe, env, work = installed
    fake = FakeOpenAI().start()
    try:
        fake.quiet_steps().on("answer", Reply("The information bottleneck appears in several papers [1][2]."))
        proc = _run([str(exe), "ask", IB, "--mode", "llm", "--json"], cwd=work,
                    env={**env, "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-wheel"})  # fmt: skip
    finally:
        fake.stop()
    assert proc.returncode == 0, proc.stderr
    import json

    data = json.loads(proc.stdout)
    assert data["mode"] == "llm" and len(data["citations"]) == 6  # every matching paper, in LLM mode too
    assert "condense" in fake.steps, "the prompt files of every step ship in the wheel"
    assert len(fake.of("answer")) == 1 and "<abstract" in json.dumps(fake.of("answer")[0])


def test_serve_answers_ask(installed: tuple[Path, dict[str, str], Path]) -> None:
    exe, env, work = installed
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(exe), "serve", "--port", str(port)], cwd=work, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(1)
        else:
            pytest.fail("askpapers serve did not start")
        from tests.test_hardening import call

        event, out = call(url, "ask", [IB, None, "extractive", None, None, None, None])
        assert event == "complete" and len(out[0]["citations"]) == 6
    finally:
        proc.terminate()
        proc.wait(timeout=60)
