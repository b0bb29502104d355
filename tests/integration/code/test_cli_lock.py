"""`strata index` takes the code worker's repository lock: never two writers at once."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import redis

from strata import locks
from strata.code.reads import CodeReads
from strata.code.service import CodeService
from strata.devstack.redis import RedisServer
from strata.graph.gateway import Gateway
from strata.ontology import Ontology
from strata.settings import Settings
from strata.temporal import AsOf
from tests.gitrepo import GitRepo

C1 = datetime(2025, 3, 1, tzinfo=UTC)


class TestIndexWaitsForTheWorker:
    """While a worker holds the code lock of a repository, the CLI index waits for it."""

    def test_blocked_until_released(
        self,
        settings: Settings,
        gateway: Gateway,
        ontology: Ontology,
        redis_server: RedisServer,
        tmp_path: Path,
        unique: str,
    ) -> None:
        name = f"lock-{unique}"
        repo = GitRepo(tmp_path / name)
        repo.write("app/m.py", "def f():\n    return 1\n")
        repo.commit("one", C1)
        client = redis.Redis.from_url(settings.redis_url)
        service = CodeService(settings, gateway, ontology)
        reads = CodeReads(gateway, ontology)
        done: list[object] = []
        key = locks.lock_key("code", name, "main")
        with locks.repository_lock(client, key, "a worker's reindex", lease_s=30):
            runner = threading.Thread(
                target=lambda: done.append(service.index_path(repo.path, repo=name, ref="main"))
            )
            runner.start()
            time.sleep(1.5)
            assert runner.is_alive()  # waiting for the lock, not writing
            assert reads.branches(name, AsOf.at()) == []
        runner.join(timeout=120)
        assert not runner.is_alive()
        assert done
        assert [b.ref for b in reads.branches(name, AsOf.at())] == ["main"]
