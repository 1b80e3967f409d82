"""deploy/ is data that must stay valid: nats-server configs, compose, Kubernetes, vLLM scripts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from engine.nats.server import find_server_binary
from engine.testing.secured_nats import role_passwords, shipped_config
from engine.testing.tls import make_tls_files

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
NATS_CONFIGS = sorted(p for p in (DEPLOY / "nats").glob("*.conf") if p.name != "auth.conf")
"""Server configs; auth.conf (the role users) is included by each of them."""
K8S_FILES = sorted((DEPLOY / "k8s").glob("*.yaml"))


@pytest.mark.parametrize("config", NATS_CONFIGS, ids=lambda p: p.name)
def test_nats_config_is_accepted_by_nats_server(config: Path, tmp_path: Path) -> None:
    """`nats-server -t -c` validates every shipped config (with auth.conf, its role passwords
    in the environment and a test CA's certificates where /etc/nats/tls/ points)."""
    copy = shipped_config(config.name, tmp_path / "conf", make_tls_files(tmp_path / "tls"))
    result = subprocess.run(
        [str(find_server_binary()), "-t", "-c", str(copy)], capture_output=True, text=True, check=False,
        env={**os.environ, **role_passwords()},
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("config", NATS_CONFIGS, ids=lambda p: p.name)
def test_nats_config_fsyncs_before_acknowledging(config: Path) -> None:
    """Every node syncs each write before the ack (the Jepsen finding on NATS 2.12)."""
    assert "sync_interval: always" in config.read_text()


def test_cluster_nodes_have_unique_names_and_route_to_each_other() -> None:
    """Three nodes, distinct server names, the same cluster and the same three routes."""
    nodes = [p for p in NATS_CONFIGS if p.name.startswith("cluster-")]
    assert len(nodes) == 3
    texts = [p.read_text() for p in nodes]
    names = {
        line.split(":")[1].split("#")[0].strip()
        for t in texts
        for line in t.splitlines()
        if line.startswith("server_name")
    }
    assert len(names) == 3
    for text in texts:
        assert all(f"nats-route://nats-{i}:6222" in text for i in (1, 2, 3))


def test_a_broken_nats_config_is_rejected(tmp_path: Path) -> None:
    """The validation above really validates (garbage fails)."""
    bad = tmp_path / "bad.conf"
    bad.write_text("jetstream { sync_interval: sometimes \n")
    result = subprocess.run([str(find_server_binary()), "-t", "-c", str(bad)], capture_output=True, check=False)
    assert result.returncode != 0


@pytest.mark.parametrize("path", K8S_FILES, ids=lambda p: p.name)
def test_kubernetes_yaml_parses(path: Path) -> None:
    """Every Kubernetes file is valid YAML."""
    assert [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def test_kubernetes_objects_have_api_version_kind_and_name() -> None:
    """Each manifest object is addressable; the workers are a scalable Deployment."""
    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "workers.yaml").read_text()) if d]
    for doc in docs:
        assert doc.get("apiVersion") and doc.get("kind") and doc.get("metadata", {}).get("name"), doc
    kinds = {doc["kind"]: doc for doc in docs}
    worker = kinds["Deployment"]
    assert worker["spec"]["replicas"] >= 1
    selector = worker["spec"]["selector"]["matchLabels"]
    labels = worker["spec"]["template"]["metadata"]["labels"]
    assert selector.items() <= labels.items()
    [container] = worker["spec"]["template"]["spec"]["containers"]
    assert "worker" in container["args"]
    assert kinds["HorizontalPodAutoscaler"]["spec"]["scaleTargetRef"]["name"] == worker["metadata"]["name"]


def test_worker_settings_in_kubernetes_are_valid_apollo_settings(tmp_path: Path) -> None:
    """The ConfigMap's config.yaml loads as apollo settings with three replicas."""
    from engine.config.settings import load_settings

    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "workers.yaml").read_text()) if d]
    [config_map] = [d for d in docs if d["kind"] == "ConfigMap"]
    path = tmp_path / "config.yaml"
    path.write_text(config_map["data"]["config.yaml"])
    settings = load_settings(path, environ={})
    assert settings.nats.replicas == 3


def test_helm_values_replicate_and_fsync() -> None:
    """The NATS chart values: 3-node cluster, JetStream on file storage, fsync always."""
    values = yaml.safe_load((DEPLOY / "k8s" / "nats-values.yaml").read_text())
    assert values["config"]["cluster"]["enabled"] is True
    assert values["config"]["cluster"]["replicas"] == 3
    assert values["config"]["jetstream"]["fileStore"]["enabled"] is True
    assert values["config"]["jetstream"]["merge"]["sync_interval"] == "always"


def test_compose_services_reference_existing_files() -> None:
    """Bind mounts, build context and Dockerfile named by compose.yaml exist."""
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert {"nats-1", "nats-2", "nats-3", "worker", "vllm"} <= services.keys()
    assert services["vllm"]["profiles"] == ["vllm"]
    named_volumes = set(compose.get("volumes", {}))
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source in named_volumes:
                continue
            if source.startswith("./tls/"):  # the operator's certificates, never committed
                assert (DEPLOY / "tls" / "README.md").is_file()
                continue
            assert (DEPLOY / source).exists(), f"{name}: {source}"
        build = service.get("build")
        if build:
            assert (DEPLOY / build["context"] / build["dockerfile"]).is_file()
        for dependency in service.get("depends_on", {}):
            assert dependency in services, f"{name} depends on unknown {dependency}"


def test_compose_worker_config_is_valid_apollo_settings() -> None:
    """deploy/config/cluster.yaml loads and keeps the stream at three replicas."""
    from engine.config.settings import load_settings

    settings = load_settings(DEPLOY / "config" / "cluster.yaml", environ={})
    assert settings.nats.replicas == 3
    assert settings.nats.url


@pytest.mark.parametrize("script", sorted((DEPLOY / "vllm").glob("*.sh")), ids=lambda p: p.name)
def test_vllm_scripts_are_valid_bash(script: Path) -> None:
    """bash -n accepts the serve scripts."""
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0


def test_vllm_serve_enables_reasoning_parser_and_token_ids() -> None:
    """One replica per GPU (data parallel), the reasoning parser and token ids are on."""
    out = subprocess.run(
        [str(DEPLOY / "vllm" / "serve.sh"), "some/model", "--gpus", "0,1,2,3", "--dry-run"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "CUDA_VISIBLE_DEVICES=0,1,2,3" in out
    assert "--data-parallel-size 4" in out
    assert "--reasoning-parser" in out
    assert "--return-tokens-as-token-ids" in out


@pytest.mark.parametrize(
    "args",
    [["m", "--gpus", "zero"], ["m", "--port", "http"], ["m", "--gpus", "0,1,2", "--tp", "2"], ["m", "--bogus"], []],
)
def test_vllm_serve_rejects_bad_arguments(args: list[str]) -> None:
    """Garbage options exit 2 with a message instead of starting a server."""
    result = subprocess.run(
        [str(DEPLOY / "vllm" / "serve.sh"), *args, "--dry-run"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2


def test_serve_many_prints_a_models_section_for_each_server() -> None:
    """The multi-model table becomes one server per line and an apollo models section."""
    out = subprocess.run(
        [str(DEPLOY / "vllm" / "serve-many.sh"), str(DEPLOY / "vllm" / "models.example.tsv"), "--dry-run"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert 'policy: {model: policy, base_url: "http://127.0.0.1:8000/v1"}' in out
    assert "--port 8001" in out and "CUDA_VISIBLE_DEVICES=2,3" in out


def test_serve_many_rejects_a_duplicate_port(tmp_path: Path) -> None:
    """Two models on one port is refused."""
    table = tmp_path / "t.tsv"
    table.write_text("a m1 8000 0\nb m2 8000 1\n")
    result = subprocess.run(
        [str(DEPLOY / "vllm" / "serve-many.sh"), str(table), "--dry-run"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 2


def test_compose_gives_each_apollo_service_its_role_and_the_ca() -> None:
    """The stream set-up runs as admin, workers as worker; both check the server against the CA;
    every NATS node gets the role passwords, its certificates and auth.conf."""
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert services["streams"]["environment"]["APOLLO_NATS_USER"] == "admin"
    assert services["worker"]["environment"]["APOLLO_NATS_USER"] == "worker"
    for name in ("streams", "worker"):
        assert services[name]["environment"]["APOLLO_NATS_CA"] == "/etc/apollo/tls/ca.pem"
    for node in ("nats-1", "nats-2", "nats-3"):
        assert {f"APOLLO_NATS_{role}_PASSWORD" for role in ("SUBMITTER", "WORKER", "TRAINER", "VIEWER", "ADMIN")} \
            <= services[node]["environment"].keys()
        assert "./nats/auth.conf:/etc/nats/auth.conf:ro" in services[node]["volumes"]
        assert "./tls:/etc/nats/tls:ro" in services[node]["volumes"]


def test_helm_values_carry_the_shipped_roles_and_tls() -> None:
    """The chart gets deploy/nats/auth.conf verbatim, TLS on client and route ports, and route authorisation."""
    values = yaml.safe_load((DEPLOY / "k8s" / "nats-values.yaml").read_text())
    assert values["configMap"]["merge"]["data"]["auth.conf"] == (DEPLOY / "nats" / "auth.conf").read_text()
    assert values["config"]["merge"]["00$include"] == "auth.conf"
    assert values["config"]["nats"]["tls"]["enabled"] is True
    cluster = values["config"]["cluster"]
    assert cluster["tls"]["enabled"] is True and cluster["tls"]["merge"]["verify_and_map"] is True
    assert cluster["merge"]["authorization"]["user"] == "CN=apollo-route"
    roles = ("SUBMITTER", "WORKER", "TRAINER", "VIEWER", "ADMIN")
    assert {f"APOLLO_NATS_{role}_PASSWORD" for role in roles} <= values["container"]["env"].keys()


def test_kubernetes_jobs_connect_with_their_role_and_the_ca() -> None:
    """The stream set-up Job is admin, the workers are worker; both mount the CA their config names."""
    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "workers.yaml").read_text()) if d]
    config = yaml.safe_load(next(d for d in docs if d["kind"] == "ConfigMap")["data"]["config.yaml"])
    roles = {}
    for doc in docs:
        if doc["kind"] not in ("Job", "Deployment"):
            continue
        [container] = doc["spec"]["template"]["spec"]["containers"]
        env = {item["name"]: item for item in container["env"]}
        roles[doc["kind"]] = env["APOLLO_NATS_USER"]["value"]
        assert env["APOLLO_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"]["key"] == roles[doc["kind"]]
        mounts = {m["mountPath"] for m in container["volumeMounts"]}
        assert str(Path(config["nats"]["ca_file"]).parent) in mounts
    assert roles == {"Job": "admin", "Deployment": "worker"}
