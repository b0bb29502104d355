"""A real Neo4j 5.26 Community for development and tests, without Docker.

``install`` resolves ``org.neo4j:neo4j`` from Maven Central into
``var/cache/neo4j/lib`` and compiles the single-file launcher
``dev/neo4j/StrataNeo4j.java``; ``start`` runs it as a background JVM with the
Bolt connector on loopback and returns once Bolt answers a query.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from strata.devstack.procs import Proc, port_open, require_free_port, wait_until
from strata.errors import DatabaseAuthError, EnvironmentProblem, StrataError
from strata.settings import PROJECT_ROOT, Settings

LAUNCHER_DIR = PROJECT_ROOT / "dev" / "neo4j"

# From the server.jvm.additional defaults of Neo4j 5.26's own neo4j.conf.
JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-Dlog4j2.disable.jmx=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
)


@dataclass(frozen=True, slots=True)
class Neo4jPaths:
    cache: Path
    lib: Path
    classes: Path
    stamp: Path
    data: Path

    @classmethod
    def of(cls, var_dir: Path, data_name: str = "neo4j") -> Neo4jPaths:
        cache = var_dir / "cache" / "neo4j"
        return cls(
            cache=cache,
            lib=cache / "lib",
            classes=cache / "classes",
            stamp=cache / "installed.sha256",
            data=var_dir / data_name,
        )


def _source_digest() -> str:
    digest = hashlib.sha256()
    for name in ("pom.xml", "StrataNeo4j.java"):
        digest.update((LAUNCHER_DIR / name).read_bytes())
    return digest.hexdigest()


def java_major_version() -> int:
    """The major version of the `java` on PATH (clear error if missing)."""
    java = shutil.which("java")
    if java is None:
        raise EnvironmentProblem(
            "Java is not installed; Neo4j 5.26 needs Java 17",
            hint="install a JDK 17 (Debian: apt-get install openjdk-17-jdk-headless)",
        )
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        raise EnvironmentProblem(f"cannot read the Java version from: {out.stderr.strip()}")
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def install(var_dir: Path, *, quiet: bool = True) -> Neo4jPaths:
    """Resolve the Neo4j jars and compile the launcher (skipped when up to date)."""
    paths = Neo4jPaths.of(var_dir)
    digest = _source_digest()
    if paths.stamp.exists() and paths.stamp.read_text().strip() == digest:
        return paths
    major = java_major_version()
    if major < 17:
        raise EnvironmentProblem(
            f"Java {major} found; Neo4j 5.26 needs Java 17 or newer",
            hint="install openjdk-17 and put it first on PATH",
        )
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EnvironmentProblem(
            "Maven (mvn) is not installed; it fetches Neo4j from Maven Central",
            hint="install it (Debian: apt-get install maven)",
        )
    javac = shutil.which("javac")
    if javac is None:
        raise EnvironmentProblem(
            "javac is not installed (a JRE alone cannot compile the launcher)",
            hint="install a JDK (Debian: apt-get install openjdk-17-jdk-headless)",
        )
    if paths.lib.exists():
        shutil.rmtree(paths.lib)
    paths.lib.mkdir(parents=True)
    cmd = [
        mvn,
        "-B",
        "-f",
        str(LAUNCHER_DIR / "pom.xml"),
        "dependency:copy-dependencies",
        f"-DoutputDirectory={paths.lib}",
        "-DincludeScope=runtime",
    ]
    if quiet:
        cmd.insert(1, "-q")
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise EnvironmentProblem(
            "Maven could not resolve Neo4j from Maven Central:\n"
            + "\n".join((done.stdout + done.stderr).splitlines()[-15:]),
            hint="check network access to Maven Central (or a mirror in ~/.m2/settings.xml)",
        )
    if paths.classes.exists():
        shutil.rmtree(paths.classes)
    paths.classes.mkdir(parents=True)
    compiled = subprocess.run(
        [
            javac,
            "-cp",
            f"{paths.lib}/*",
            "-d",
            str(paths.classes),
            str(LAUNCHER_DIR / "StrataNeo4j.java"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if compiled.returncode != 0:
        raise EnvironmentProblem(f"javac failed on the Neo4j launcher:\n{compiled.stderr}")
    paths.stamp.write_text(digest)
    return paths


@dataclass(frozen=True, slots=True)
class Neo4jServer:
    """One local Neo4j: its process, port and data directory."""

    var_dir: Path
    port: int
    password: str
    heap_mb: int = 1024
    pagecache_mb: int = 512
    name: str = "neo4j"
    host: str = "127.0.0.1"

    @classmethod
    def from_settings(cls, settings: Settings) -> Neo4jServer:
        return cls(
            var_dir=settings.var_dir,
            port=settings.dev_neo4j_port,
            password=settings.neo4j_password.get_secret_value(),
            heap_mb=settings.dev_neo4j_heap_mb,
            pagecache_mb=settings.dev_neo4j_pagecache_mb,
        )

    @property
    def proc(self) -> Proc:
        return Proc(self.name, self.var_dir / "run", self.var_dir / "log")

    @property
    def uri(self) -> str:
        return f"bolt://{self.host}:{self.port}"

    @property
    def data_dir(self) -> Path:
        return self.var_dir / self.name

    def running(self) -> bool:
        return self.proc.pid() is not None

    def start(self, *, timeout: float = 120.0) -> bool:
        """Start unless running; return True if it was started now."""
        if self.running():
            return False
        if len(self.password) < 8:
            raise EnvironmentProblem(
                "the Neo4j password must be at least 8 characters",
                hint="set STRATA_NEO4J_PASSWORD",
            )
        paths = install(self.var_dir)
        require_free_port(self.host, self.port, what="Neo4j", setting="STRATA_DEV_NEO4J_PORT")
        java = shutil.which("java") or "java"
        argv = [
            java,
            f"-Xms{min(self.heap_mb, 512)}m",
            f"-Xmx{self.heap_mb}m",
            *JVM_FLAGS,
            "-cp",
            f"{paths.classes}:{paths.lib}/*",
            "StrataNeo4j",
        ]
        env = {
            "STRATA_NEO4J_HOME": str(self.data_dir),
            "STRATA_NEO4J_HOST": self.host,
            "STRATA_NEO4J_PORT": str(self.port),
            "STRATA_NEO4J_PASSWORD": self.password,
            "STRATA_NEO4J_PAGECACHE": str(self.pagecache_mb),
        }
        log_offset = self.proc.log_file.stat().st_size if self.proc.log_file.exists() else 0
        proc = self.proc.spawn(argv, env=env)
        try:
            ready = wait_until(
                lambda: self._launched(log_offset) and self._bolt_answers(),
                timeout=timeout,
                interval=0.5,
                alive=lambda: proc.poll() is None,
            )
        except StrataError:
            self.proc.stop(timeout=30)
            raise
        if not ready:
            code = proc.poll()
            self.proc.stop(timeout=30)
            state = (
                f"exited with code {code}" if code is not None else f"not ready in {timeout:.0f}s"
            )
            raise EnvironmentProblem(
                f"Neo4j {state}; last log lines:\n{self.proc.tail()}",
                hint=f"full log: {self.proc.log_file}",
            )
        return True

    def _launched(self, log_offset: int) -> bool:
        """The launcher printed its STARTED line (the password is set by then)."""
        with self.proc.log_file.open("rb") as log:
            log.seek(log_offset)
            text = log.read()
        if b"STRATA_NEO4J_ERROR" in text:
            line = text[text.index(b"STRATA_NEO4J_ERROR") :].split(b"\n", 1)[0]
            raise EnvironmentProblem(
                f"Neo4j failed to start: {line.decode(errors='replace')}",
                hint=f"full log: {self.proc.log_file}",
            )
        return b"STRATA_NEO4J_STARTED" in text

    def _bolt_answers(self) -> bool:
        if not port_open(self.host, self.port):
            return False
        from strata.graph.gateway import Gateway  # the driver only when needed

        with Gateway.open(
            self.uri, user="neo4j", password=self.password, query_timeout_s=5, pool_size=1
        ) as gateway:
            try:
                gateway.ping()
            except DatabaseAuthError:
                raise
            except StrataError:
                return False
        return True

    def stop(self, *, timeout: float = 60.0) -> bool:
        return self.proc.stop(timeout=timeout)
