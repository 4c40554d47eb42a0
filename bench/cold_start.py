"""Cold starts: a new process per question, askpapers' CLI against the recipe, each timed from a small launcher."""

from __future__ import annotations

import json
import shlex
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.harness import BUNDLED, askpapers_exe, isolated_env, log, store_settings
from bench.recipe import RECIPE_COLD, recipe_store

COLD_QUESTION = "Which papers use information bottleneck?"
ROUNDS = 3

# Starts a command from a small process and reports its wall time and peak RSS: measured from the big benchmark
# process, a child's ru_maxrss would start at the benchmark's own RSS.
LAUNCHER = """
import json, os, sys, time
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - t
with open(sys.argv[1], "w") as fh:
    json.dump({"seconds": seconds, "maxrss_kb": usage.ru_maxrss, "rc": os.waitstatus_to_exitcode(status)}, fh)
"""


@dataclass
class ColdStarts:
    """Median wall time (s) and the largest peak RSS (MB) of each system's cold process."""

    ours_s: float
    theirs_s: float
    ours_rss_mb: float
    theirs_rss_mb: float


def run_cold(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """Wall time (s), peak RSS (MB) and stdout of ``cmd`` run as a new process."""
    with tempfile.TemporaryDirectory() as d:
        out, err, result = Path(d) / "out", Path(d) / "err", Path(d) / "result.json"
        with out.open("wb") as fo, err.open("wb") as fe:
            subprocess.run([sys.executable, "-S", "-c", LAUNCHER, str(result), *cmd],
                           env=env, cwd=cwd, stdout=fo, stderr=fe, check=False)  # fmt: skip
        if not result.exists():
            raise RuntimeError(f"could not run {shlex.join(cmd)}: {err.read_text(errors='replace')}")
        r = json.loads(result.read_text())
        if r["rc"] != 0:
            raise RuntimeError(f"{shlex.join(cmd)} exited with {r['rc']}:\n{err.read_text(errors='replace')}")
        return float(r["seconds"]), r["maxrss_kb"] / 1024, out.read_text(errors="replace")


def cold_starts(tmp: Path) -> ColdStarts:
    """``askpapers ask "…"`` against a new Python process that opens the recipe's persisted store, both over
    stores of the bundled corpus, interleaved ``ROUNDS`` times so both see the same background load."""
    from askpapers.vectorstore import ingest
    from askpapers.vectorstore.embed import get_embedder
    from askpapers.vectorstore.parse import parse_paths

    cold_ours_dir, cold_recipe_dir = tmp / "cold-askpapers", tmp / "cold-recipe"
    ingest([BUNDLED], store_settings(data_dir=cold_ours_dir, default_corpus=BUNDLED), progress=False)
    recipe_store(parse_paths([BUNDLED]).papers, cold_recipe_dir, get_embedder())
    env = isolated_env(cold_ours_dir)
    exe = askpapers_exe()
    cold: dict[str, list[tuple[float, float]]] = {"askpapers": [], "recipe": []}
    outputs = {}
    for _ in range(ROUNDS):
        s, m, outputs["askpapers"] = run_cold([str(exe), "ask", COLD_QUESTION], env, tmp)
        cold["askpapers"].append((s, m))
        s, m, outputs["recipe"] = run_cold([sys.executable, "-c", RECIPE_COLD, str(cold_recipe_dir), COLD_QUESTION],
                                           env, tmp)  # fmt: skip
        cold["recipe"].append((s, m))
    if "Found" not in outputs["askpapers"]:
        log("warning: the cold askpapers ask printed no 'Found …' line:\n" + outputs["askpapers"][:500])
    return ColdStarts(
        ours_s=statistics.median(s for s, _ in cold["askpapers"]),
        theirs_s=statistics.median(s for s, _ in cold["recipe"]),
        ours_rss_mb=max(m for _, m in cold["askpapers"]),
        theirs_rss_mb=max(m for _, m in cold["recipe"]),
    )
