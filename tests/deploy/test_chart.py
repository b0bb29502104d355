"""The Helm chart, rendered with the cached helm: the properties operators rely on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from strata.settings import Settings
from tests.deploy.conftest import (
    CHART,
    PROCESS_VARIABLES,
    Chart,
    Manifests,
    secret_variables,
    setting_variables,
)

SCENARIOS = sorted((CHART / "ci").glob("*-values.yaml"))
TASK_TIME_LIMIT_S = Settings.model_fields["task_time_limit_s"].default
READY_FILE = "/tmp/strata-worker.ready"


def _pod(workload: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def _env(container: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in container.get("env", [])}


def _egress_ports(policy: dict[str, Any]) -> set[int | str]:
    return {port["port"] for rule in policy["spec"].get("egress", []) for port in rule["ports"]}


class TestScenarios:
    """Every ci scenario renders, and contradictory values fail with a clear message."""

    @pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
    def test_scenario_renders(self, chart: Chart, scenario: Path) -> None:
        manifests = chart.render(None, scenario, minimal=False)
        assert manifests.kind("Deployment")
        assert len(manifests.kind("ConfigMap")) == 1

    def test_no_secret_resource_is_ever_rendered(self, chart: Chart) -> None:
        for scenario in SCENARIOS:
            assert not chart.render(None, scenario, minimal=False).kind("Secret")

    def test_missing_existing_secret_is_refused(self, chart: Chart) -> None:
        message = chart.refusal({"secrets": {"existingSecret": ""}})
        assert "secrets.existingSecret is required" in message

    def test_missing_image_is_refused(self, chart: Chart) -> None:
        assert "image.repository is required" in chart.refusal({"image": {"repository": ""}})

    def test_missing_neo4j_uri_is_refused(self, chart: Chart) -> None:
        message = chart.refusal({"config": {"neo4j": {"uri": ""}}})
        assert "config.neo4j.uri is required" in message

    def test_no_workers_is_refused(self, chart: Chart) -> None:
        message = chart.refusal({"workers": {"code": None, "knowledge": None, "trace": None}})
        assert "workers is empty" in message

    def test_queue_without_worker_is_refused(self, chart: Chart) -> None:
        message = chart.refusal({"workers": {"trace": None}})
        assert 'queue "trace" (layer trace) has no worker' in message

    def test_worker_on_unknown_queue_is_refused(self, chart: Chart) -> None:
        message = chart.refusal({"workers": {"extra": {"queue": "nowhere"}}})
        assert 'workers.extra.queue "nowhere" is not one of config.queues' in message

    def test_grace_period_shorter_than_a_task_is_refused(self, chart: Chart) -> None:
        message = chart.refusal({"workers": {"code": {"terminationGracePeriodSeconds": 600}}})
        assert "must exceed config.taskTimeLimitS" in message

    def test_visibility_timeout_not_above_task_limit_is_refused(self, chart: Chart) -> None:
        message = chart.refusal({"config": {"visibilityTimeoutS": 3600}})
        assert "config.visibilityTimeoutS (3600) must exceed" in message

    def test_credentials_in_a_url_are_refused(self, chart: Chart) -> None:
        message = chart.refusal({"config": {"redis": {"url": "redis://:hunter2@redis:6379/0"}}})
        assert "config.redis.url carries credentials" in message

    @pytest.mark.parametrize("name", sorted(secret_variables()))
    def test_secret_setting_in_extra_is_refused(self, chart: Chart, name: str) -> None:
        message = chart.refusal({"config": {"extra": {name: "hunter2"}}})
        assert f"config.extra.{name} is a secret setting" in message

    def test_every_other_setting_is_accepted_in_extra(
        self, chart: Chart, defaults: Manifests
    ) -> None:
        structured = set(defaults.kind("ConfigMap")[0]["data"])
        others = setting_variables() - secret_variables() - structured - {"STRATA_REDIS_URL"}
        manifests = chart.render({"config": {"extra": dict.fromkeys(others, "x")}})
        assert others <= set(manifests.kind("ConfigMap")[0]["data"])

    def test_unknown_value_is_refused_by_the_schema(self, chart: Chart) -> None:
        message = chart.refusal({"replicaCount": 3})
        assert "replicaCount" in message


class TestSettingsContract:
    """Every STRATA_* variable the chart sets is a setting; secrets come only from the Secret."""

    @pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
    def test_every_variable_is_a_setting(self, chart: Chart, scenario: Path) -> None:
        manifests = chart.render(None, scenario, minimal=False)
        names = set(manifests.kind("ConfigMap")[0]["data"])
        for _, container in manifests.containers():
            names |= set(_env(container))
        unknown = {n for n in names if n.startswith("STRATA_")} - setting_variables()
        assert unknown <= set(PROCESS_VARIABLES), f"not fields of Settings: {unknown}"

    @pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
    def test_no_secret_in_the_config_map(self, chart: Chart, scenario: Path) -> None:
        manifests = chart.render(None, scenario, minimal=False)
        data = manifests.kind("ConfigMap")[0]["data"]
        assert not set(data) & secret_variables()

    @pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
    def test_secrets_come_from_the_existing_secret(self, chart: Chart, scenario: Path) -> None:
        manifests = chart.render(None, scenario, minimal=False)
        for workload, container in manifests.containers():
            env = _env(container)
            for name in ("STRATA_NEO4J_PASSWORD", "STRATA_SECRET_KEY"):
                assert "secretKeyRef" in env[name]["valueFrom"], (workload, name)
            for name in secret_variables() & set(env):
                assert "value" not in env[name], (workload, name)

    def test_redis_url_with_a_password_comes_from_the_secret(self, chart: Chart) -> None:
        manifests = chart.render({"secrets": {"keys": {"redisUrl": "redis-url"}}})
        assert "STRATA_REDIS_URL" not in manifests.kind("ConfigMap")[0]["data"]
        for _, container in manifests.containers():
            ref = _env(container)["STRATA_REDIS_URL"]["valueFrom"]["secretKeyRef"]
            assert ref == {"name": "strata-secrets", "key": "redis-url"}

    def test_production_by_default(self, defaults: Manifests) -> None:
        assert defaults.kind("ConfigMap")[0]["data"]["STRATA_ENVIRONMENT"] == "production"


class TestProbes:
    """Every long-running container has startup, liveness and readiness probes that fit it."""

    def test_every_deployment_container_has_probes(self, defaults: Manifests) -> None:
        for deployment in defaults.kind("Deployment"):
            for container in _pod(deployment)["containers"]:
                for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                    assert probe in container, (deployment["metadata"]["name"], probe)

    def test_api_liveness_is_healthz_and_readiness_is_readyz(self, defaults: Manifests) -> None:
        api = _pod(defaults.get("Deployment", "strata-api"))["containers"][0]
        assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert api["startupProbe"]["httpGet"]["path"] == "/healthz"
        assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
        assert api["readinessProbe"]["httpGet"]["port"] == "http"

    def test_workers_probe_the_ready_file_they_are_told_to_write(self, defaults: Manifests) -> None:
        for deployment in defaults.kind("Deployment"):
            if deployment["metadata"]["name"] == "strata-api":
                continue
            container = _pod(deployment)["containers"][0]
            ready_file = _env(container)["STRATA_WORKER_READY_FILE"]["value"]
            assert ready_file.startswith("/tmp/")  # the writable emptyDir
            for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                assert container[probe]["exec"]["command"] == ["test", "-f", ready_file]


class TestWorkers:
    """Every worker in values gets a Deployment on its queue, with a warm-shutdown grace period."""

    def test_one_deployment_per_default_queue(self, defaults: Manifests) -> None:
        names = {d["metadata"]["name"] for d in defaults.kind("Deployment")}
        queues = Settings.model_fields
        expected = {
            f"strata-worker-{queues[f'queue_{layer}'].default}"
            for layer in ("code", "knowledge", "trace")
        }
        assert expected <= names

    def test_every_worker_entry_has_its_deployment(self, chart: Chart) -> None:
        workers: dict[str, dict[str, Any]] = {
            "code": {"queue": "code"},
            "code-bulk": {"queue": "code", "replicas": 3, "concurrency": 8},
            "knowledge": {"queue": "knowledge"},
            "trace": {"queue": "trace"},
        }
        manifests = chart.render({"workers": workers})
        for name, worker in workers.items():
            deployment = manifests.get("Deployment", f"strata-worker-{name}")
            args = _pod(deployment)["containers"][0]["args"]
            assert args[args.index("-Q") + 1] == worker["queue"]
            assert args[args.index("-n") + 1] == f"{name}@%h"
            assert args[args.index("--concurrency") + 1] == str(worker.get("concurrency", 2))
            assert deployment["spec"]["replicas"] == worker.get("replicas", 1)

    def test_grace_period_outlasts_the_longest_task(self, chart: Chart) -> None:
        for limit in (TASK_TIME_LIMIT_S, 600):
            manifests = chart.render({"config": {"taskTimeLimitS": limit}})
            for deployment in manifests.kind("Deployment"):
                if deployment["metadata"]["name"] != "strata-api":
                    grace = _pod(deployment)["terminationGracePeriodSeconds"]
                    assert grace > limit

    def test_task_limits_reach_the_workers(self, defaults: Manifests) -> None:
        data = defaults.kind("ConfigMap")[0]["data"]
        assert int(data["STRATA_TASK_TIME_LIMIT_S"]) < int(data["STRATA_VISIBILITY_TIMEOUT_S"])

    def test_rollout_keeps_a_consumer(self, defaults: Manifests) -> None:
        for deployment in defaults.kind("Deployment"):
            assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0

    def test_every_workload_has_a_disruption_budget(self, defaults: Manifests) -> None:
        budgets = {
            pdb["metadata"]["name"]: pdb["spec"]["selector"]["matchLabels"]
            for pdb in defaults.kind("PodDisruptionBudget")
        }
        for deployment in defaults.kind("Deployment"):
            name = deployment["metadata"]["name"]
            assert budgets[name] == deployment["spec"]["selector"]["matchLabels"]

    def test_autoscaling_hands_replicas_to_the_hpa(self, chart: Chart) -> None:
        manifests = chart.render(None, CHART / "ci" / "hpa-values.yaml", minimal=False)
        targets = {
            hpa["spec"]["scaleTargetRef"]["name"]
            for hpa in manifests.kind("HorizontalPodAutoscaler")
        }
        deployments = manifests.kind("Deployment")
        assert targets == {d["metadata"]["name"] for d in deployments}
        assert all("replicas" not in d["spec"] for d in deployments)


class TestMigrations:
    """The migrations Job is a pre-install/pre-upgrade hook: it runs before any Deployment rolls."""

    def test_job_is_a_pre_install_and_pre_upgrade_hook(self, defaults: Manifests) -> None:
        job = defaults.get("Job", "strata-migrations")
        hooks = set(job["metadata"]["annotations"]["helm.sh/hook"].split(","))
        assert hooks == {"pre-install", "pre-upgrade"}
        assert _pod(job)["containers"][0]["args"] == ["strata", "migrate"]
        assert _pod(job)["restartPolicy"] == "Never"

    def test_deployments_are_not_hooks(self, defaults: Manifests) -> None:
        for deployment in defaults.kind("Deployment"):
            assert "helm.sh/hook" not in deployment["metadata"].get("annotations", {})

    def test_job_needs_nothing_created_after_it(self, defaults: Manifests) -> None:
        """Hooks run before the release's resources: the Job inlines its settings."""
        job = defaults.get("Job", "strata-migrations")
        container = _pod(job)["containers"][0]
        assert "envFrom" not in container
        config = defaults.kind("ConfigMap")[0]["data"]
        env = _env(container)
        assert {name: env[name]["value"] for name in config} == config
        account = defaults.get("ServiceAccount", _pod(job)["serviceAccountName"])
        annotations = account["metadata"]["annotations"]
        assert annotations["helm.sh/hook"] == "pre-install,pre-upgrade"
        job_weight = int(job["metadata"]["annotations"]["helm.sh/hook-weight"])
        assert int(annotations["helm.sh/hook-weight"]) < job_weight


class TestSecurity:
    """Every pod runs non-root, read-only, without privileges, capabilities or a token."""

    @pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda path: path.stem)
    def test_pod_and_container_security_contexts(self, chart: Chart, scenario: Path) -> None:
        manifests = chart.render(None, scenario, minimal=False)
        for workload in manifests.workloads():
            pod = _pod(workload)
            assert pod["securityContext"]["runAsNonRoot"] is True
            assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
            assert pod["automountServiceAccountToken"] is False
            for container in pod["containers"]:
                context = container["securityContext"]
                assert context["runAsNonRoot"] is True
                assert context["readOnlyRootFilesystem"] is True
                assert context["allowPrivilegeEscalation"] is False
                assert context["capabilities"]["drop"] == ["ALL"]
                assert context["seccompProfile"] == {"type": "RuntimeDefault"}

    def test_tmp_is_a_writable_empty_dir(self, defaults: Manifests) -> None:
        for workload in defaults.workloads():
            pod = _pod(workload)
            volumes = {v["name"]: v for v in pod["volumes"]}
            for container in pod["containers"]:
                mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
                assert "emptyDir" in volumes[mounts["/tmp"]]

    def test_every_container_has_requests_and_limits(self, defaults: Manifests) -> None:
        for workload, container in defaults.containers():
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(container["resources"][kind]), (workload, kind)

    def test_service_accounts_mount_no_token(self, defaults: Manifests) -> None:
        for account in defaults.kind("ServiceAccount"):
            assert account["automountServiceAccountToken"] is False


class TestNetworkPolicy:
    """A default-deny policy covers every pod; each component gets only its own traffic."""

    def test_default_deny_selects_every_pod(self, defaults: Manifests) -> None:
        deny = defaults.get("NetworkPolicy", "strata-default-deny")
        assert set(deny["spec"]["policyTypes"]) == {"Ingress", "Egress"}
        assert "ingress" not in deny["spec"]
        assert "egress" not in deny["spec"]
        selector = deny["spec"]["podSelector"]["matchLabels"]
        for workload in defaults.workloads():
            labels = workload["spec"]["template"]["metadata"]["labels"]
            assert selector.items() <= labels.items(), workload["metadata"]["name"]

    def test_only_the_api_accepts_connections(self, defaults: Manifests) -> None:
        api = defaults.get("NetworkPolicy", "strata-api")
        assert [p["port"] for p in api["spec"]["ingress"][0]["ports"]] == ["http"]
        for name in ("strata-workers", "strata-migrations"):
            assert "ingress" not in defaults.get("NetworkPolicy", name)["spec"]

    def test_egress_is_dns_neo4j_and_redis_only(self, defaults: Manifests) -> None:
        assert _egress_ports(defaults.get("NetworkPolicy", "strata-api")) == {53, 7687, 6379}
        assert _egress_ports(defaults.get("NetworkPolicy", "strata-workers")) == {53, 7687, 6379}
        assert _egress_ports(defaults.get("NetworkPolicy", "strata-migrations")) == {53, 7687}

    def test_llm_endpoint_port_is_opened_when_configured(self, chart: Chart) -> None:
        manifests = chart.render({"config": {"llm": {"baseUrl": "http://vllm.llm:8001/v1"}}})
        assert 8001 in _egress_ports(manifests.get("NetworkPolicy", "strata-workers"))

    def test_worker_policy_selects_every_worker(self, defaults: Manifests) -> None:
        policy = defaults.get("NetworkPolicy", "strata-workers")
        components = set(policy["spec"]["podSelector"]["matchExpressions"][0]["values"])
        workers = {
            d["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"]
            for d in defaults.kind("Deployment")
            if d["metadata"]["name"] != "strata-api"
        }
        assert components == workers

    def test_policies_can_be_turned_off(self, chart: Chart) -> None:
        assert not chart.render({"networkPolicy": {"enabled": False}}).kind("NetworkPolicy")


class TestService:
    """The Service and the optional Ingress reach the API's named port."""

    def test_service_targets_the_api_pods(self, defaults: Manifests) -> None:
        service = defaults.get("Service", "strata-api")
        deployment = defaults.get("Deployment", "strata-api")
        assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
        assert service["spec"]["ports"][0]["targetPort"] == "http"

    def test_ingress_routes_to_the_service(self, chart: Chart) -> None:
        manifests = chart.render(None, CHART / "ci" / "ingress-values.yaml", minimal=False)
        rule = manifests.get("Ingress", "strata-api")["spec"]["rules"][0]
        backend = rule["http"]["paths"][0]["backend"]["service"]
        assert backend == {"name": "strata-api", "port": {"name": "http"}}

    def test_no_ingress_by_default(self, defaults: Manifests) -> None:
        assert not defaults.kind("Ingress")
