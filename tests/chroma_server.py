"""A real Chroma server (`chroma run`) on 127.0.0.1 for the server-mode tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chroma_exe() -> str:
    exe = Path(sys.executable).parent / "chroma"
    found = str(exe) if exe.exists() else shutil.which("chroma")
    if not found:
        raise RuntimeError("the `chroma` command (from the chromadb package) is not installed")
    return found


class ChromaServer:
    """`chroma run --path PATH --host 127.0.0.1 --port PORT`, which can be stopped and started again."""

    def __init__(self, path: Path, port: int | None = None) -> None:
        self.path = path
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = path.parent / f"chroma-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> ChromaServer:
        self.path.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [chroma_exe(), "run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/api/v2/heartbeat", timeout=1) as r:
                    if r.status == 200:
                        return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chroma run did not answer on {self.url} within {timeout} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
