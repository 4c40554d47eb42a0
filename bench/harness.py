"""What the benchmarks share: paths, logging, machine and package facts, percentiles and timing, child processes,
the stores they build, and their Markdown reports.

Only the standard library is imported at module level: a benchmark's child process measures its own peak RSS, so
the project (and Chroma, LangChain) is imported inside the functions that use it.
"""

from __future__ import annotations

import fcntl
import importlib.metadata
import json
import multiprocessing
import os
import platform
import resource
import shlex
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from askpapers.vectorstore.config import StoreSettings
    from askpapers.vectorstore.embed import Embedder

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # Chroma telemetry off, for askpapers and the recipe

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"  # read, never written
BUNDLED = ROOT / "data" / "icml2026"
CONFERENCE = SHARED / "datasets" / "conference"
BENCH_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "askpapers" / "bench"
PACKAGES = ("askpapers", "chromadb", "langchain-core", "langchain-chroma", "onnxruntime")


# -- logging and formatting -----------------------------------------------------------------------------------------
def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def mean(values: Sequence[float]) -> float:
    return statistics.mean(values) if values else 0.0


def pct(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def f3(x: float) -> str:
    return f"{x:.3f}"


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "—"


def mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def signed(x: float) -> str:
    return f"{x:+.3f}"


# -- the machine, the packages, memory and disk ---------------------------------------------------------------------
def versions(extra: Sequence[str] = ()) -> dict[str, str]:
    out = {}
    for name in (*PACKAGES, *extra):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine() -> str:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu or platform.processor() or 'unknown CPU'}), {ram:.0f} GiB RAM, " + (
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def load_average() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def dir_size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


def peak_rss_mb() -> float:
    """Peak RSS of this process (resource.getrusage; KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vm_hwm_mb(pid: int | str = "self") -> float | None:
    """VmHWM (peak RSS) of a process from /proc, in MB; None without such a line. Raises OSError if unreadable."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def own_peak_rss_mb() -> float:
    """Peak RSS of this process's own address space (VmHWM).

    A child's ru_maxrss starts at its parent's RSS at the fork, even after exec, so a child started by a big
    parent would report the parent's size; VmHWM belongs to the memory map made by exec.
    """
    try:
        hwm = vm_hwm_mb()
    except (OSError, ValueError, IndexError):
        hwm = None
    return hwm if hwm is not None else peak_rss_mb()


# -- timing ---------------------------------------------------------------------------------------------------------
def time_queries(app: Any, questions: Sequence[str]) -> tuple[list[float], list[float], int]:
    """Warm ``search`` then extractive ``ask`` latencies (ms) over ``questions``, and the citations given."""
    search_ms, ask_ms, cited = [], [], 0
    for q in questions:
        t = time.perf_counter()
        app.search(q)
        search_ms.append((time.perf_counter() - t) * 1000)
    for q in questions:
        t = time.perf_counter()
        answer = app.ask(q, mode="extractive")
        ask_ms.append((time.perf_counter() - t) * 1000)
        cited += len(answer.citations)
    return search_ms, ask_ms, cited


def _child_main(fn: Callable[..., dict[str, Any]], kwargs: dict[str, Any], conn: Connection) -> None:
    try:
        result = fn(**kwargs)
        result["peak_rss_mb"] = own_peak_rss_mb()
        conn.send(("ok", result))
    except BaseException:
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def in_child(fn: Callable[..., dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    """Run ``fn(**kwargs)`` in a fresh (spawned) Python process; its result gains the child's peak RSS."""
    ctx = multiprocessing.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(fn, kwargs, send))
    proc.start()
    send.close()
    try:
        status, payload = recv.recv()
    except EOFError:
        proc.join()
        raise RuntimeError(f"{fn.__name__} died in its child process (exit code {proc.exitcode})") from None
    proc.join()
    if status != "ok":
        raise RuntimeError(f"{fn.__name__} failed in its child process:\n{payload}")
    result: dict[str, Any] = payload
    return result


# -- stores ---------------------------------------------------------------------------------------------------------
def store_settings(**update: Any) -> StoreSettings:
    """The store section of the settings (from the environment, as the app reads it), with ``update`` applied."""
    from askpapers.rag.settings import get_settings

    return get_settings().store.model_copy(update=update)


def embedder_threads() -> int:
    """The onnxruntime threads the settings ask for (``ASKPAPERS_EMBED_THREADS``; 0 = all cores)."""
    from askpapers.rag.settings import get_settings

    return get_settings().embedder.threads


def warm_embedder(threads: int = 0) -> Embedder:
    """The ONNX embedder, loaded and run once (so a clock started after this measures no model loading)."""
    from askpapers.vectorstore.embed import get_embedder

    emb = get_embedder(threads)
    emb.embed(["warm-up"])
    return emb


def write_jsonl(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    return path


def wait_for_other_builds(cache: Path, name: str) -> None:
    """Wait while another process (e.g. ``askpapers eval``) is building an eval store of this kind.

    ``eval_store`` writes and later deletes the store's corpus file around its ingest, so two builders of the same
    store at once would trip over each other.
    """
    for d in cache.glob(f"{name}-*"):
        lock = d / ".eval.ingest.lock"
        if (d / "COMPLETE").exists() or not lock.exists():
            continue
        with lock.open("a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fh, fcntl.LOCK_UN)
                continue  # nobody holds it: an interrupted build, which eval_store resumes
            except BlockingIOError:
                log(f"another process is building {d.name}; waiting for it")
            fcntl.flock(fh, fcntl.LOCK_EX)
            fcntl.flock(fh, fcntl.LOCK_UN)
        for _ in range(100):  # the builder marks the store complete just after releasing the lock
            if (d / "COMPLETE").exists():
                break
            time.sleep(0.1)


# -- the installed command ------------------------------------------------------------------------------------------
def askpapers_exe() -> Path:
    exe = Path(sys.executable).parent / "askpapers"
    return exe if exe.exists() else ROOT / ".venv" / "bin" / "askpapers"


def isolated_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """This environment without OPENAI_* / ASKPAPERS_* variables, plus a store of its own: extractive answers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ASKPAPERS_"))}
    env.update({"ASKPAPERS_DATA_DIR": str(data_dir), "ASKPAPERS_DEFAULT_CORPUS": str(BUNDLED),
                "ANONYMIZED_TELEMETRY": "False", **extra})  # fmt: skip
    return env


# -- reports --------------------------------------------------------------------------------------------------------
@dataclass
class Section:
    """One ``##`` section of a report: its Markdown lines and how long it took to measure."""

    title: str
    lines: list[str] = field(default_factory=list)
    seconds: float = 0.0


def command_line(module: str, argv: Sequence[str] | None) -> str:
    """How the benchmark was run, for its report: ``.venv/bin/python -m bench.MODULE ARGS``."""
    return shlex.join([".venv/bin/python", "-m", f"bench.{module}", *(argv if argv is not None else sys.argv[1:])])


def write_report(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
