"""The built wheel works outside the checkout: installed into a fresh venv in a temporary directory, it answers
from its bundled corpus (first-run ingest), in LLM mode through a real OpenAI-compatible server, and as a web app.

It installs one package, ``askpapers``, and nothing else at the top of site-packages: the same venv also gets the
unrelated ``rag`` and ``vectorstore`` distributions of the package index, and both keep working beside it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ROOT
from tests.fake_openai import FakeOpenAI, Reply

UV = Path(sys.executable).parent / "uv"
IB = "Which papers use information bottleneck?"
# Unrelated distributions of the package index that own the top-level names our folders have in the checkout: a
# Django-based framework and an empty package. rag's own pins (celery 5.0 wants click 7, and more) cannot share a
# venv with askpapers' locked dependencies, so it is installed without them, plus what importing it loads (Django
# 4.1, channels 3.0, django-extensions 3.0), resolved within requirements.lock: nothing of askpapers' changes.
NEIGHBOURS = ["rag==0.1.0", "vectorstore==0.0.0"]
RAG_IMPORTS = ["django>=4.1.3,<4.2", "channels>=3.0.2,<3.1", "django-extensions>=3.0.9,<3.1"]


def _run(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=900, **kw)  # type: ignore[call-overload,no-any-return]


@dataclass
class Installed:
    exe: Path  # the fresh venv's askpapers
    env: dict[str, str]  # an environment without the checkout
    work: Path  # a working directory outside it
    wheel: Path
    neighbours: str  # "" when rag and vectorstore from the package index were installed beside it, else why not

    def __iter__(self) -> Iterator[Any]:
        return iter((self.exe, self.env, self.work))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    files = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT).stdout.split("\0")
    for name in filter(None, files):  # a copy of the tracked files: building never writes into the checkout
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_symlink():  # src/askpapers/rag -> ../../rag, …: copied as the links they are
            os.symlink(os.readlink(ROOT / name), src / name)
        elif (ROOT / name).is_file():
            shutil.copy2(ROOT / name, src / name)
    built = _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp / "dist"), str(src)])
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((tmp / "dist").glob("askpapers-*.whl"))
    venv = tmp / "venv"
    assert _run([str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)]).returncode == 0
    inst = _run([str(UV), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), str(wheel),
                 "-c", str(ROOT / "requirements.lock")])  # fmt: skip
    assert inst.returncode == 0, inst.stderr[-2000:]
    # from the package index, with the network the test machine has; without it, only their test is skipped
    pypi = _run([str(UV), "pip", "install", "--quiet", "--no-deps", "--python", str(venv / "bin" / "python"),
                 *NEIGHBOURS])  # fmt: skip
    if pypi.returncode == 0:
        pypi = _run([str(UV), "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), *RAG_IMPORTS,
                     "-c", str(ROOT / "requirements.lock")])  # fmt: skip
    neighbours = (
        ""
        if pypi.returncode == 0
        else f"could not install {NEIGHBOURS} from the package index: "
        + (pypi.stderr.strip().splitlines() or ["?"])[-1]
    )
    work = tmp / "elsewhere"
    work.mkdir()
    (tmp / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ASKPAPERS_", "OPENAI_", "PYTHON"))}
    env.update({"ASKPAPERS_DATA_DIR": str(tmp / "data"), "HOME": str(tmp / "home"), "VIRTUAL_ENV": str(venv)})
    yield Installed(venv / "bin" / "askpapers", env, work, wheel, neighbours)


def test_the_wheel_carries_prompts_and_the_bundled_corpus(installed: Installed) -> None:
    exe, env, work = installed
    python = exe.parent / "python"
    probe = _run([str(python), "-c", "import askpapers, askpapers.vectorstore.resources as r, "
                  "askpapers.rag.answerers.chain as c; print(askpapers.__file__); print(r.bundled_corpus()); "
                  "print(len(c.load_prompt('answer')))"],
                 cwd=work, env=env)  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    module, corpus, prompt = probe.stdout.split("\n")[:3]
    assert str(ROOT) not in module and str(ROOT) not in corpus, "imported from the installed wheel, not the checkout"
    assert sorted(p.name for p in Path(corpus).glob("*.txt")) == sorted(
        p.name for p in (ROOT / "data" / "icml2026").glob("*.txt")
    )
    assert int(prompt) > 200


def test_the_wheel_carries_the_trained_models_its_rooms_load(installed: Installed) -> None:
    """rag/ranker/ is shared by three rooms (read, retrieve, decide); each loads its model from the installed wheel."""
    exe, env, work = installed
    code = ("import askpapers.rag.read.topicality as t, askpapers.rag.retrieve.rerank as r, "
            "askpapers.rag.decide.membership as m; "
            "t.Model.load(); r.Forest.load(r.model_path()); m.Membership.load(); "
            "print(t.model_path()); print(r.model_path()); print(m.model_path())")  # fmt: skip
    probe = _run([str(exe.parent / "python"), "-c", code], cwd=work, env=env)
    assert probe.returncode == 0, probe.stderr
    paths = [Path(line) for line in probe.stdout.split("\n")[:3]]
    assert [p.name for p in paths] == ["topicality.txt", "reranker.txt", "membership.txt"]
    assert all(p.is_file() and str(ROOT) not in str(p) for p in paths), paths


def test_ask_ingests_the_bundled_corpus_on_first_use(installed: Installed) -> None:
    exe, env, work = installed
    proc = _run([str(exe), "ask", IB, "--mode", "extractive"], cwd=work, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Found 6 papers" in proc.stdout


def test_ask_in_llm_mode_against_a_real_http_server(installed: Installed) -> None:
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


def test_serve_answers_ask(installed: Installed) -> None:
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


def test_the_wheel_installs_one_package_named_askpapers(installed: Installed) -> None:
    """Nothing generic at the top of site-packages: every file of the wheel (its RECORD) is under askpapers/,
    with the packages rag, ui and vectorstore, the prompts and the bundled corpus inside it."""
    with zipfile.ZipFile(installed.wheel) as whl:
        record = next(n for n in whl.namelist() if n.endswith(".dist-info/RECORD"))
        paths = [line.split(",")[0] for line in whl.read(record).decode().splitlines() if line]
    assert {p.split("/")[0] for p in paths} == {"askpapers", record.split("/")[0]}
    for inside in ("askpapers/__init__.py", "askpapers/__main__.py", "askpapers/rag/api.py", "askpapers/ui/cli.py",
                   "askpapers/vectorstore/store.py", "askpapers/prompts/answer.md",
                   "askpapers/rag/ranker/reranker.txt", "askpapers/vectorstore/model/tokenizer.json"):  # fmt: skip
        assert inside in paths, inside
    corpus = [p for p in paths if p.startswith("askpapers/bundled/icml2026/")]
    assert len(corpus) == len(list((ROOT / "data" / "icml2026").glob("*.txt"))) > 0
    top_level = ("rag", "ui", "vectorstore", "prompts", "data", "tests")  # namespace_rewrite: keep
    assert not [p for p in paths if p.split("/")[0] in top_level]


def test_pypi_rag_and_vectorstore_keep_working_beside_it(installed: Installed) -> None:
    """The unrelated rag and vectorstore of the package index, installed in the same venv: their names give their
    own files, askpapers' facade and CLI answer, and importing askpapers loads nothing under those names."""
    if installed.neighbours:
        pytest.skip(installed.neighbours)
    exe, env, work = installed
    python = exe.parent / "python"
    program = (
        "import importlib.metadata as md, json, sys, sysconfig\n"
        "from askpapers import ask\n"
        "import askpapers.rag, askpapers.ui.cli, askpapers.vectorstore.store\n"
        "loaded_before = sorted(m for m in sys.modules if m.split('.')[0] in ('rag', 'ui', 'vectorstore'))\n"
        "import rag, vectorstore\n"  # namespace_rewrite: keep (the package index's rag and vectorstore)
        "site = sysconfig.get_paths()['purelib']\n"
        "def owner(d): return [str(f) for f in md.distribution(d).files or [] if str(f).endswith('__init__.py')]\n"
        "answer = ask('Which papers use information bottleneck?', mode='extractive')\n"
        "print(json.dumps({'site': site, 'vectorstore': vectorstore.__file__, 'rag': rag.__file__,\n"
        "    'rag_app': rag.Application.__module__,\n"
        "    'rag_files': owner('rag'), 'vectorstore_files': owner('vectorstore'), 'loaded_before': loaded_before,\n"
        "    'askpapers_rag': askpapers.rag.__file__, 'cited': len(answer.citations)}))\n"
    )
    proc = _run([str(python), "-c", program], cwd=work, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    site = Path(out["site"])
    assert out["loaded_before"] == [], "askpapers imported something under a top-level name it does not own"
    assert Path(out["vectorstore"]) == site / "vectorstore" / "__init__.py"
    assert Path(out["rag"]) == site / "rag" / "__init__.py"
    assert "rag/__init__.py" in out["rag_files"] and "vectorstore/__init__.py" in out["vectorstore_files"]
    assert out["rag_app"] == "rag.core.application", "PyPI's rag imports, and is the Django framework"
    assert "rag/core/application.py" in [  # the Django framework's own file, not one of ours
        str(p.relative_to(site)) for p in (site / "rag").rglob("*.py")
    ]
    assert not (site / "rag" / "api.py").exists() and not (site / "vectorstore" / "store.py").exists()
    assert Path(out["askpapers_rag"]) == site / "askpapers" / "rag" / "__init__.py"
    assert out["cited"] == 6
    cli = _run([str(python), "-m", "askpapers", "ask", IB, "--mode", "extractive"], cwd=work, env=env)
    assert cli.returncode == 0, cli.stderr[-2000:]
    assert "Found 6 papers" in cli.stdout
