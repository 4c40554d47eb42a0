"""Issue 24's speed bound, measured on one machine in one run: warm extractive ``ask`` p50 on ICML 2024 of the issue's
starting code and of this checkout, in turn.

The bound (``ask`` p50 at most 1.5 × the starting code's) compares two codes, and a 2-core VM's speed drifts by more
than that between runs, so a figure from another day or machine says little. Here each round times both codes, one
after the other (which goes first alternates from round to round), each in a fresh process (``python -c`` over the
code's own root) on a store of its own, with the loop of ``make bench-speed`` (:func:`bench.harness.time_queries`: a
warm ``search`` pass over the 50 questions, then an extractive ``ask`` of each). The starting code is read with
``git archive`` (this checkout's history must hold it), its store built by its own ingest; both stores are cached in
``$XDG_CACHE_HOME/askpapers/bench/ratio`` (about two minutes each the first time)::

    .venv/bin/python -m bench.speed_ratio [--base 5d34b5e] [--rounds 7] [--out docs/benchmarks-ratio.md]

``make bench-ratio`` runs it. The report gives each round's p50s and ratio, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import statistics
import subprocess
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.harness import BENCH_CACHE, ROOT, isolated_env, load_average, log, machine
from bench.speed import QUESTIONS, SPEED_CORPUS, WARMUP_QUESTION

BASE = "5d34b5e"  # issue 24's starting code: set, count and overview answers did not run the reranker
ROUNDS = 7
BOUND = 1.5  # issue 24: warm ``ask`` p50 at most this many times the starting code's
CACHE = BENCH_CACHE / "ratio"

# Run in a fresh process with the code's root as the working directory: builds the store once (its own ingest), then
# times the questions (given as JSON: the corpus, the warm-up question, the 50 questions). The starting code had
# top-level packages (``rag``, ``vectorstore``); this one has ``askpapers``.
CHILD = """
import json, sys
from pathlib import Path
root, data_dir = Path(sys.argv[1]), Path(sys.argv[2])
corpus, warm_up, questions = json.loads(sys.argv[3])
sys.path[:0] = [str(root / "src"), str(root)]
if (root / "src" / "askpapers").is_dir():
    import askpapers
    from askpapers.rag import AskPapers
    from askpapers.rag.settings import get_settings
    from askpapers.vectorstore import ingest
    assert Path(askpapers.__file__).resolve().is_relative_to(root.resolve()), askpapers.__file__
else:
    from rag.api import AskPapers
    from rag.settings import get_settings
    from vectorstore.pipeline import ingest
from bench.harness import BUNDLED, store_settings, time_queries
store = store_settings(data_dir=data_dir, default_corpus=BUNDLED)
done = data_dir / "askpapers-ratio-complete"
if not done.exists():
    ingest([corpus], store, progress=False)
    done.write_text("ok")
app = AskPapers(get_settings().model_copy(update={"store": store}))
app.search(warm_up)
app.ask(warm_up, mode="extractive")
search_ms, ask_ms, cited = time_queries(app, questions)
print(json.dumps({"search_ms": search_ms, "ask_ms": ask_ms, "cited": cited}))
"""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--base", default=BASE, help="the commit to compare with (default: issue 24's starting code)")
    ap.add_argument("--rounds", type=int, default=ROUNDS, help="rounds, each timing both codes in turn")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks-ratio.md", help="the Markdown report")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    return args


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()


def base_code(rev: str) -> tuple[Path, str]:
    """The starting code's files (``git archive`` of ``rev``, unpacked once into the cache) and its full commit."""
    try:
        commit = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"bench.speed_ratio: no commit {rev} in this checkout ({e.stderr.strip()})") from e
    root = CACHE / f"code-{commit[:12]}"
    if not (root / ".complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        data = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(root, filter="data")
        (root / ".complete").write_text(commit)
    return root, commit


def timed(root: Path, store: Path) -> dict[str, Any]:
    """One timing run of the code at ``root`` on ``store`` (built first if it is not complete), in a fresh process:
    this checkout's questions and corpus for both codes."""
    env = isolated_env(store, PYTHONPATH="")
    asked = json.dumps([str(SPEED_CORPUS), WARMUP_QUESTION, list(QUESTIONS)])
    run = subprocess.run([sys.executable, "-c", CHILD, str(root), str(store), asked], cwd=root, env=env,
                         capture_output=True, text=True)  # fmt: skip
    if run.returncode != 0:
        raise SystemExit(f"bench.speed_ratio: the run of {root} failed:\n{run.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


def p50(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def report(rows: list[tuple[dict[str, Any], dict[str, Any]]], base: str, head: str, loads: list[str]) -> str:
    lines = [
        "# Issue 24's speed bound: warm `ask` p50 against the starting code",
        "",
        f"Written by `python -m bench.speed_ratio` (`make bench-ratio`) on {machine()}. Each round times the starting "
        f"code ({base[:7]}) and this checkout ({head}) one after the other (the starting code first in odd rounds), "
        "each in a fresh process on a store of its own: the 50 questions of `bench.speed` on ICML 2024 (2,610 "
        f"papers), a warm `search` pass, then an extractive `ask` of each. The bound is {BOUND} ×.",
        "",
        "| round | load average | starting code `search` / `ask` p50 | this code `search` / `ask` p50 | `ask` ratio "
        "| citations (start / this) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for i, ((b, h), load) in enumerate(zip(rows, loads, strict=True), 1):
        lines.append(
            f"| {i} | {load} | {p50(b['search_ms']):.1f} / {p50(b['ask_ms']):.1f} ms "
            f"| {p50(h['search_ms']):.1f} / {p50(h['ask_ms']):.1f} ms "
            f"| {p50(h['ask_ms']) / p50(b['ask_ms']):.2f} × | {b['cited']} / {h['cited']} |"
        )
    base_ask = statistics.median(p50(b["ask_ms"]) for b, _ in rows)
    head_ask = statistics.median(p50(h["ask_ms"]) for _, h in rows)
    verdict = "met" if head_ask <= BOUND * base_ask else "not met"
    lines += [
        "",
        f"Median of the rounds: the starting code {base_ask:.1f} ms, this code {head_ask:.1f} ms: "
        f"**{head_ask / base_ask:.2f} ×**, the bound ({BOUND} ×) {verdict}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    base_root, base = base_code(args.base)
    head = git("rev-parse", "--short", "HEAD") + (" with changes" if git("status", "--porcelain", "-uno") else "")
    # (this code's store is built again only when the code that builds it changes)
    head_store = CACHE / f"store-vectorstore-{git('rev-parse', 'HEAD:vectorstore')[:12]}"
    base_store = CACHE / f"store-{base[:12]}"
    rows, loads = [], []
    codes = {"base": (f"the starting code ({base[:7]})", base_root, base_store),
             "head": (f"this code ({head})", ROOT, head_store)}  # fmt: skip
    for r in range(1, args.rounds + 1):
        loads.append(load_average())
        got = {}
        for key in ("base", "head") if r % 2 else ("head", "base"):  # (the first to run alternates: the VM drifts)
            name, root, store = codes[key]
            log(f"round {r}/{args.rounds}: {name}")
            got[key] = timed(root, store)
        b, h = got["base"], got["head"]
        log(f"  ask p50 {p50(b['ask_ms']):.1f} ms against {p50(h['ask_ms']):.1f} ms")
        rows.append((b, h))
    text = report(rows, base, head, loads)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
