"""A real Redis 7 for development and tests: Debian's redis-server on loopback."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from strata.devstack.procs import Proc, require_free_port, wait_until
from strata.errors import EnvironmentProblem
from strata.settings import Settings


def ensure_installed() -> str:
    """Path of redis-server, installing Debian's package when root can."""
    found = shutil.which("redis-server")
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        raise EnvironmentProblem(
            "redis-server is not installed",
            hint="install Redis 7 (Debian: sudo apt-get install redis-server)",
        )
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (
        [apt, "update", "-qq"],
        [apt, "install", "-y", "-qq", "--no-install-recommends", "redis-server"],
    ):
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise EnvironmentProblem(
                f"`{' '.join(cmd)}` failed:\n{done.stderr[-2000:]}",
                hint="install redis-server by hand",
            )
    found = shutil.which("redis-server")
    if not found:
        raise EnvironmentProblem("redis-server still not on PATH after apt-get install")
    return found


@dataclass(frozen=True, slots=True)
class RedisServer:
    """One local Redis with append-only persistence under var/."""

    var_dir: Path
    port: int
    name: str = "redis"
    host: str = "127.0.0.1"

    @classmethod
    def from_settings(cls, settings: Settings) -> RedisServer:
        return cls(var_dir=settings.var_dir, port=settings.dev_redis_port)

    @property
    def proc(self) -> Proc:
        return Proc(self.name, self.var_dir / "run", self.var_dir / "log")

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def running(self) -> bool:
        return self.proc.pid() is not None

    def ping(self) -> bool:
        import redis

        client = redis.Redis(host=self.host, port=self.port, socket_connect_timeout=0.5)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def start(self, *, timeout: float = 20.0) -> bool:
        """Start unless running; return True if it was started now."""
        if self.running():
            return False
        binary = ensure_installed()
        require_free_port(self.host, self.port, what="Redis", setting="STRATA_DEV_REDIS_PORT")
        data = self.var_dir / self.name
        data.mkdir(parents=True, exist_ok=True)
        argv = [
            binary,
            "--bind",
            self.host,
            "--port",
            str(self.port),
            "--dir",
            str(data),
            "--daemonize",
            "no",
            "--appendonly",
            "yes",
            "--save",
            "",
            "--maxmemory-policy",
            "noeviction",
            "--protected-mode",
            "yes",
        ]
        proc = self.proc.spawn(argv)
        if not wait_until(self.ping, timeout=timeout, alive=lambda: proc.poll() is None):
            self.proc.stop(timeout=5)
            raise EnvironmentProblem(
                f"Redis did not answer PING within {timeout:.0f}s; last log lines:\n"
                f"{self.proc.tail()}",
                hint=f"full log: {self.proc.log_file}",
            )
        return True

    def stop(self, *, timeout: float = 20.0) -> bool:
        return self.proc.stop(timeout=timeout)
