"""Background processes of the local stack: spawn, pid files, ports, stop."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from strata.errors import EnvironmentProblem


@dataclass(frozen=True, slots=True)
class Proc:
    """A named background process whose pid lives in ``run_dir/<name>.pid``."""

    name: str
    run_dir: Path
    log_dir: Path

    @property
    def pid_file(self) -> Path:
        return self.run_dir / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.log_dir / f"{self.name}.log"

    def pid(self) -> int | None:
        """The pid if the process is alive, else None (stale pid files are removed)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        if pid_alive(pid):
            return pid
        self.pid_file.unlink(missing_ok=True)
        return None

    def spawn(
        self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.Popen[bytes]:
        """Start detached (own session), output appended to the log file."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        with self.log_file.open("ab") as log:
            log.write(f"\n--- {time.strftime('%Y-%m-%dT%H:%M:%S')} starting {self.name}\n".encode())
            log.flush()
            try:
                proc = subprocess.Popen(
                    list(argv),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=full_env,
                    cwd=cwd,
                    start_new_session=True,
                )
            except FileNotFoundError as exc:
                raise EnvironmentProblem(
                    f"cannot start {self.name}: {argv[0]} not found", hint="run scripts/bootstrap"
                ) from exc
        self.pid_file.write_text(str(proc.pid))
        return proc

    def stop(self, *, timeout: float = 60.0) -> bool:
        """SIGTERM, wait, then SIGKILL. Returns True if something was running."""
        pid = self.pid()
        if pid is None:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and pid_alive(pid):
            time.sleep(0.1)
        if pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            time.sleep(0.2)
        self.pid_file.unlink(missing_ok=True)
        return True

    def tail(self, lines: int = 20) -> str:
        """The last lines of the log, for error messages."""
        try:
            text = self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, or a child of this process that ended, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of this process is dead for our purposes.
    try:
        waited, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        waited = 0
    if waited == pid:
        return False
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError, IndexError):
        if stat.read_text().split(")")[-1].split()[0] == "Z":
            return False
    return True


def port_open(host: str, port: int, *, timeout: float = 0.2) -> bool:
    """True if something accepts TCP connections on host:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        return sock.connect_ex((host, port)) == 0


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port the OS reports free right now (for throwaway test and bench servers)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def require_free_port(host: str, port: int, *, what: str, setting: str) -> None:
    """Fail with a clear message if the port is already taken."""
    if port_open(host, port):
        raise EnvironmentProblem(
            f"cannot start {what}: port {port} on {host} is already in use",
            hint=f"stop whatever listens there, or choose another port with {setting}",
            port=port,
        )


def wait_until(
    check: Callable[[], bool],
    *,
    timeout: float,
    interval: float = 0.25,
    alive: Callable[[], bool] | None = None,
) -> bool:
    """Poll ``check`` until it is true, the timeout passes, or ``alive`` turns false."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        if alive is not None and not alive():
            return False
        time.sleep(interval)
    return check()
