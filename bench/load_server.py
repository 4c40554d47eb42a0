"""The server side of the load test: ``askpapers serve`` as a subprocess over a store of its own, and its memory and
CPU as read from /proc."""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from bench.harness import BUNDLED, askpapers_exe, isolated_env
from bench.load_clients import HOST, NO_PROXY


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def server_env(data_dir: Path) -> dict[str, str]:
    """This environment without OPENAI_* / ASKPAPERS_* variables, plus a store of its own: extractive answers."""
    return isolated_env(data_dir, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1")


def ingest_bundled(env: dict[str, str], cwd: Path) -> str:
    """``askpapers ingest data/icml2026`` into the store of ``env``; returns its summary line."""
    proc = subprocess.run(
        [str(askpapers_exe()), "ingest", str(BUNDLED), "--no-progress"],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"askpapers ingest failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


class Server:
    """``askpapers serve`` on 127.0.0.1 and a free port, as a subprocess; output goes to a log file."""

    def __init__(self, env: dict[str, str], workdir: Path) -> None:
        self.env = env
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}/"
        self.log_path = workdir / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 300.0) -> float:
        """Start the server and wait until its API answers HTTP; returns the seconds it took."""
        t0 = time.perf_counter()
        with self.log_path.open("wb") as out:
            self.proc = subprocess.Popen(
                [str(askpapers_exe()), "serve", "--host", HOST, "--port", str(self.port)],
                env=self.env, cwd=self.workdir, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"askpapers serve exited with code {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with NO_PROXY.open(self.url + "gradio_api/info", timeout=5) as r:
                    if r.status == 200:
                        return time.perf_counter() - t0
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"askpapers serve did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)


# -- memory -----------------------------------------------------------------------------------------------------------
def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc/PID/task/TID/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for children in Path(f"/proc/{p}/task").glob("*/children"):
            with contextlib.suppress(OSError, ValueError):
                todo += [int(c) for c in children.read_text().split()]
    return out


def rss_mb(pid: int) -> float:
    """VmRSS of ``pid`` and its descendants, in MB (MiB)."""
    total = 0
    for p in process_tree(pid):
        with contextlib.suppress(OSError, ValueError, IndexError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


class RssSampler(threading.Thread):
    """Samples :func:`rss_mb` every ``interval`` seconds (the first at once) as (seconds since ``t0``, MB)."""

    def __init__(self, pid: int | Sequence[int], t0: float, interval: float = 1.0) -> None:
        super().__init__(daemon=True, name="rss-sampler")
        self.pids = [pid] if isinstance(pid, int) else list(pid)
        self.t0, self.interval = t0, interval
        self.samples: list[tuple[float, float]] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        while True:
            self.samples.append((time.perf_counter() - self.t0, self.rss()))
            if self._stop_event.wait(self.interval):
                return

    def rss(self) -> float:
        return sum(rss_mb(pid) for pid in self.pids)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
        t = time.perf_counter() - self.t0
        if not self.samples or t - self.samples[-1][0] >= self.interval / 2:
            self.samples.append((t, self.rss()))


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (/proc/PID/stat), 0 if it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def slope_mb_per_min(samples: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) points, in MB per minute (0 with fewer than two points)."""
    if len(samples) < 2:
        return 0.0
    xs = [t / 60 for t, _ in samples]
    ys = [m for _, m in samples]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0
