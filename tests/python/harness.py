"""The real binaries for the Python tests, as tests/integration/cluster.cc runs them:
npuperf-server on port 0 with SQLite in a temp dir, npuperf-agent over msprof-sim,
and the npuperf CLI. NPUPERF_BUILD_DIR and NPUPERF_SOURCE_DIR come from ctest."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import tempfile
import time
import unittest
from typing import Dict, List, Optional

SOURCE_DIR = pathlib.Path(
    os.environ.get("NPUPERF_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2])
)
BUILD_DIR = pathlib.Path(os.environ.get("NPUPERF_BUILD_DIR", SOURCE_DIR / "build"))
EXAMPLES = SOURCE_DIR / "examples" / "ops"
OP_NAMES = SOURCE_DIR / "deploy" / "demo-op-names.json"


def binary(name: str) -> pathlib.Path:
    return BUILD_DIR / ("sim-bin" if name == "msprof" else "bin") / name


def require_binaries(*names: str) -> None:
    """Skips the calling test class when a binary was not built."""
    missing = [n for n in names if not binary(n).exists()]
    if missing:
        raise unittest.SkipTest(f"not built in {BUILD_DIR}: {', '.join(missing)}")


def example_operators() -> List[pathlib.Path]:
    return sorted(p for p in EXAMPLES.iterdir() if p.is_dir())


def cli(*args: str, env: Optional[Dict[str, str]] = None, cwd=None) -> subprocess.CompletedProcess:
    """Runs the npuperf CLI; stdout and stderr as bytes."""
    return subprocess.run(
        [str(binary("npuperf")), *args], capture_output=True, env=env, cwd=cwd, timeout=600
    )


class Process:
    """A child process with its output in a log file."""

    def __init__(self, argv: List[str], log: pathlib.Path, env: Optional[Dict[str, str]] = None):
        self.log = log
        self._file = open(log, "wb")
        self.proc = subprocess.Popen(
            argv, stdout=self._file, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )

    def wait_for_line(self, pattern: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.log.read_text(errors="replace").splitlines():
                if pattern in line:
                    return line
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"no '{pattern}' in {self.log}:\n{self.log.read_text(errors='replace')}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._file.close()


def address_after(line: str, marker: str) -> str:
    rest = line[line.index(marker) + len(marker) :].lstrip(" ")
    return re.split(r"[ ,]", rest, maxsplit=1)[0]


class Cluster:
    """A server and (optionally) an agent with devices 0-3 of msprof-sim."""

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix="npuperf-py-")
        self.dir = pathlib.Path(self._dir.name)
        self.server: Optional[Process] = None
        self.agent: Optional[Process] = None
        self.address = ""
        self._starts = 0

    def _server_argv(self, listen: str) -> List[str]:
        return [
            str(binary("npuperf-server")), "--listen", listen, "--metrics-listen", "127.0.0.1:0",
            "--db", f"sqlite:{self.dir / 'server.db'}",
        ]  # fmt: skip

    def start_server(self, listen: str = "127.0.0.1:0") -> None:
        self._starts += 1
        self.server = Process(self._server_argv(listen), self.dir / f"server{self._starts}.log")
        line = self.server.wait_for_line("listening on")
        self.address = address_after(line, "listening on")

    def restart_server(self) -> None:
        """Stops the server and starts it again on the same address and database."""
        assert self.server is not None
        self.server.stop()
        self.start_server(self.address)

    def start_agent(self, devices: str = "0-3") -> None:
        env = {
            "MSPROF_SIM_STATE_DIR": str(self.dir / "sim-state"),
            "MSPROF_SIM_CONFLICT_LOG": str(self.dir / "conflicts.log"),
        }
        self.agent = Process(
            [
                str(binary("npuperf-agent")), "--server", self.address, "--devices", devices,
                "--msprof", str(binary("msprof")), "--lock-dir", str(self.dir / "locks"),
                "--work-dir", str(self.dir / "agent"), "--metrics-listen", "127.0.0.1:0",
            ],
            self.dir / "agent.log",
            env,
        )  # fmt: skip
        self.agent.wait_for_line("registered as")

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        return cli("--server", self.address, *args, env=clean_environment(), cwd=self.dir)

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}" for p in self.dir.glob("*.log")
        )

    def stop(self) -> None:
        for p in (self.agent, self.server):
            if p is not None:
                p.stop()
        self._dir.cleanup()


def started_cluster(devices: str) -> Cluster:
    """A Cluster with its server and an agent serving ``devices``."""
    cluster = Cluster()
    cluster.start_server()
    cluster.start_agent(devices)
    return cluster


def clean_environment(**extra: str) -> Dict[str, str]:
    """The environment without NPUPERF_* settings and with no per-user config file,
    plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NPUPERF_")}
    env.pop("XDG_CONFIG_HOME", None)
    env["HOME"] = tempfile.gettempdir() + "/npuperf-py-no-home"
    env.update(extra)
    return env
