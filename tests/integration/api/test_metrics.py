"""/metrics: latency per route and per operation, webhook outcomes, queue depth at scrape time."""

from __future__ import annotations

import json
from typing import Any

from tests.integration.api.conftest import SHA_A, SHA_B, Api, sign


class TestMetrics:
    """The exposition carries the series operators alert on, with bounded labels."""

    def test_series_after_traffic(self, api: Api, unique: str) -> None:
        name = f"m-{unique}"
        api.register(name)
        body = json.dumps({"ref": "refs/heads/main", "before": SHA_A, "after": SHA_B}).encode()
        headers = {"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign(body)}
        assert api.push("github", name, body, headers).status_code == 202
        assert (
            api.push("github", name, body, headers | {"X-Hub-Signature-256": "x"}).status_code
            == 401
        )
        token = api.key()
        api.client.post(
            "/graphql",
            json={"query": "query AgentLookup { version }", "operationName": "AgentLookup"},
            headers={"Authorization": f"Bearer {token}"},
        )
        text = api.client.get("/metrics").text
        assert (
            'strata_graphql_operation_duration_seconds_count{operation="AgentLookup"} 1.0' in text
        )
        assert 'route="/webhooks/{provider}/{repo}"' in text
        assert 'route="/graphql",status="200"' in text
        assert 'strata_webhook_deliveries_total{provider="github",result="accepted"} 1.0' in text
        assert (
            'strata_webhook_deliveries_total{provider="github",result="bad_signature"} 1.0' in text
        )
        assert f'strata_queue_depth{{queue="{api.settings.queue_code}"}} 1.0' in text

    def test_operation_names_are_bounded(self, api: Api) -> None:
        token = api.key()
        for name in ("x" * 200, "bad-name"):
            api.client.post(
                "/graphql",
                json={"query": "{ version }", "operationName": name},
                headers={"Authorization": f"Bearer {token}"},
            )
        text = api.client.get("/metrics").text
        assert "x" * 100 not in text
        assert "bad-name" not in text

    def test_token_protects_metrics_when_set(self, make_api: Any) -> None:
        with make_api(metrics_token="a-metrics-token-0123456789") as api:
            assert api.client.get("/metrics").status_code == 401
            ok = api.client.get(
                "/metrics", headers={"Authorization": "Bearer a-metrics-token-0123456789"}
            )
            assert ok.status_code == 200
            assert "strata_queue_depth" in ok.text

    def test_health_endpoints_are_unchanged(self, api: Api) -> None:
        assert api.client.get("/healthz").json() == {"status": "alive"}
        assert api.client.get("/readyz").status_code == 200
