"""The deployment files agree with the code: every KASHGAR_ variable they set is one the service
reads, every command is a `kashgar` subcommand, every probe path is a route, and the Kubernetes
probes wait longer than a synchronous search may hold a web worker."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import yaml

from kashgar_cli.main import build_parser
from service import create_app
from service.config import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
# read by service/gunicorn_conf.py and service/gunicorn_worker.py, not Settings fields
SERVER_VARS = {"KASHGAR_BIND", "KASHGAR_WEB_WORKERS", "KASHGAR_HEALTH_BIND"}


def k8s_docs() -> list[dict[str, Any]]:
    return [d for p in sorted((DEPLOY / "k8s").glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d]


def containers() -> list[dict[str, Any]]:
    out = []
    for d in k8s_docs():
        spec = d.get("spec", {}).get("template", {}).get("spec", {})
        out += spec.get("containers", [])
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    out += list(compose["services"].values())
    return out


def test_every_kashgar_variable_set_is_read() -> None:
    known = {"KASHGAR_" + f.name.upper() for f in fields(Settings)} | SERVER_VARS
    text = "\n".join(p.read_text() for p in DEPLOY.rglob("*") if p.is_file())
    used = set(re.findall(r"\bKASHGAR_[A-Z_]+", text))
    assert used, "no KASHGAR_ variables found"
    assert used <= known, sorted(used - known)


def test_every_command_is_a_kashgar_subcommand_and_every_probe_a_route() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    names = set(sub.choices)  # type: ignore[arg-type]
    commands: list[list[str]] = [c["command"] for c in containers() if isinstance(c.get("command"), list)]
    kashgar = [c for c in commands if c[0] == "kashgar"]
    assert {c[1] for c in kashgar} == {"serve", "worker"} and {c[1] for c in kashgar} <= names
    routes = {r.rule for r in create_app({"TESTING": True, "log_level": "WARNING"}).url_map.iter_rules()}
    probes = [c[k]["httpGet"]["path"] for c in containers() for k in ("livenessProbe", "readinessProbe")
              if "httpGet" in c.get(k, {})]
    assert probes and set(probes) <= routes, probes


def test_the_deploy_gunicorn_config_takes_every_setting_and_hook_of_the_service_s(tmp_path: Path) -> None:
    """`gunicorn -c deploy/gunicorn.conf.py` (the documented command) must run as `kashgar serve`
    does: it lacked `post_worker_init`, so the embedded reaper started only on a first request.
    (In a child process: the config sets up a server's environment when it loads.)"""
    script = f"""
import json, runpy
from gunicorn.config import KNOWN_SETTINGS
import service.gunicorn_conf as ours
names = {{s.name for s in KNOWN_SETTINGS}}
wanted = sorted(n for n in vars(ours) if n in names)
deploy = runpy.run_path({str(DEPLOY / "gunicorn.conf.py")!r})
print(json.dumps({{"wanted": wanted, "missing": sorted(set(wanted) - set(deploy))}}))
"""
    env = {**os.environ, "KASHGAR_JOBS_DB": str(tmp_path / "jobs.sqlite"),
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60,
                         check=True)
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"post_worker_init", "child_exit", "on_exit", "workers"} <= set(found["wanted"])
    assert found["missing"] == []


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: str(e["value"]) for e in container.get("env", []) if "value" in e}


def test_k8s_probes_go_to_the_health_port_or_wait_longer_than_a_search() -> None:
    """Each web worker serves one request at a time: a probe on the API port can queue behind a
    sync search on every worker, so a probe timeout under that time (the default is 1 s) fails, or
    restarts, busy pods. A probe on the port gunicorn's master answers (KASHGAR_HEALTH_BIND) does
    not queue; the web pods use it."""
    config = next(d for d in k8s_docs() if d.get("kind") == "ConfigMap")["data"]
    sync_s = int(config.get("KASHGAR_SYNC_MAX_MS", Settings().sync_max_ms)) / 1000
    web = [c for c in containers() if "httpGet" in c.get("readinessProbe", {})]
    assert web
    for c in web:
        ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
        bind = _env(c).get("KASHGAR_HEALTH_BIND")
        for kind in ("livenessProbe", "readinessProbe"):
            probe = c[kind]
            where = probe.get("httpGet", probe.get("tcpSocket", {})).get("port")
            if bind is not None and ports.get(where) == int(bind.rsplit(":", 1)[1]):
                assert "httpGet" in probe, probe  # the master's answer, not only a TCP connect
                continue
            # on the API port: a TCP connect (the listen backlog answers it), or a wait longer than a search
            assert "tcpSocket" in probe or probe.get("timeoutSeconds", 1) > sync_s, probe
    assert any(_env(c).get("KASHGAR_HEALTH_BIND") for c in web)  # the web pods use the health port


def test_kustomization_lists_every_manifest() -> None:
    """A manifest left out of kustomization.yaml is silently not deployed."""
    kust = yaml.safe_load((DEPLOY / "k8s" / "kustomization.yaml").read_text())
    files = {p.name for p in (DEPLOY / "k8s").glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kust["resources"]) == files


# ---------------------------------------------------------------------------- network policies
# A pod selected by some NetworkPolicy of type Ingress takes only what one of their rules allows;
# a pod no policy selects takes everything (Kubernetes' semantics; traffic from the pod's own node,
# the kubelet's probes, is always allowed and is not modelled here).


def _matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, selector  # the only form the manifests use
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def _pods() -> dict[str, dict[str, Any]]:
    """Deployment name -> its pod's labels and named container ports."""
    out = {}
    for d in k8s_docs():
        if d.get("kind") == "Deployment":
            spec = d["spec"]["template"]
            ports = {p["name"]: p["containerPort"] for c in spec["spec"]["containers"]
                     for p in c.get("ports", []) if "name" in p}
            out[d["metadata"]["name"]] = {"labels": spec["metadata"]["labels"], "ports": ports}
    return out


def _allowed(policies: list[dict[str, Any]], source: dict[str, str], target: dict[str, Any], port: int) -> bool:
    """May a pod in the namespace with labels `source` open `port` on pod `target`?"""
    selecting = [p["spec"] for p in policies if _matches(p["spec"]["podSelector"], target["labels"])
                 and "Ingress" in p["spec"].get("policyTypes", ["Ingress"])]
    if not selecting:
        return True
    for spec in selecting:
        for rule in spec.get("ingress", []):
            froms, ports = rule.get("from"), rule.get("ports")  # missing or empty: every source, every port
            assert all(set(f) == {"podSelector"} for f in froms or []), froms  # the forms the manifests use
            assert all("port" in p for p in ports or []), ports
            ok_from = not froms or any(_matches(f["podSelector"], source) for f in froms)
            ok_port = not ports or any(target["ports"].get(p["port"], p["port"]) == port for p in ports)
            if ok_from and ok_port:
                return True
    return False


def test_network_policies_keep_the_health_port_and_redis_to_those_that_need_them() -> None:
    """The health port's few answer slots are for the kubelet, and Redis (no password) is for the
    web pods and the workers; the API port stays open to every client."""
    policies = [d for d in k8s_docs() if d.get("kind") == "NetworkPolicy"]
    pods = _pods()
    web, worker, redis = pods["kashgar-web"], pods["kashgar-worker"], pods["kashgar-redis"]
    stranger = {"app": "other"}
    for p in policies:  # every policy selects pods that exist
        assert any(_matches(p["spec"]["podSelector"], x["labels"]) for x in pods.values()), p["metadata"]
    health = int(next(v for c in containers() for k, v in _env(c).items() if k == "KASHGAR_HEALTH_BIND")
                 .rsplit(":", 1)[1])
    assert web["ports"]["health"] == health
    assert _allowed(policies, stranger, web, web["ports"]["http"])
    for source in (stranger, worker["labels"], redis["labels"]):
        assert not _allowed(policies, source, web, health)
    redis_port = int(next(d for d in k8s_docs() if d.get("kind") == "ConfigMap")["data"]["KASHGAR_REDIS_URL"]
                     .rsplit(":", 1)[1].split("/")[0])
    assert _allowed(policies, web["labels"], redis, redis_port)
    assert _allowed(policies, worker["labels"], redis, redis_port)
    assert _allowed(policies, pods["kashgar-worker-express"]["labels"], redis, redis_port)
    assert not _allowed(policies, stranger, redis, redis_port)
    assert not _allowed(policies, web["labels"], worker, 8000)  # workers listen on nothing
    assert _allowed([], stranger, redis, redis_port)  # no policy: open (the model's base case)
    open_rule = [{"spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": [], "ports": []}]}}]
    assert _allowed(open_rule, stranger, web, health)  # empty lists allow all, as Kubernetes reads them


# ---------------------------------------------------------------------------- pods, secrets, volumes


def _deployments() -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in k8s_docs() if d.get("kind") == "Deployment"}


def test_every_pod_runs_unprivileged() -> None:
    """Every pod runs as a user other than root, with the default seccomp profile; every container
    without privilege escalation or capabilities, the Kashgar ones on a read-only root (a /tmp of
    their own for gunicorn's heartbeat files and the metrics directory)."""
    for name, d in _deployments().items():
        pod = d["spec"]["template"]["spec"]
        ctx = pod["securityContext"]
        assert ctx["runAsNonRoot"] is True and ctx["runAsUser"] != 0, name
        assert ctx["seccompProfile"] == {"type": "RuntimeDefault"}, name
        for c in pod["containers"]:
            sc = c["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"] == {"drop": ["ALL"]}, name
            if c["image"] == "kashgar-ai":
                assert sc["readOnlyRootFilesystem"] is True, name
                tmp = next(m for m in c["volumeMounts"] if m["mountPath"] == "/tmp")
                assert any(v["name"] == tmp["name"] and "emptyDir" in v for v in pod["volumes"]), name
    assert "USER kashgar" in (DEPLOY / "Dockerfile").read_text()  # uid 1000, as the pods say


def test_web_and_workers_have_disruption_budgets_and_redis_a_volume_of_its_own() -> None:
    budgets = [d for d in k8s_docs() if d.get("kind") == "PodDisruptionBudget"]
    for name in ("kashgar-web", "kashgar-worker"):
        labels = _deployments()[name]["spec"]["template"]["metadata"]["labels"]
        assert any(_matches(b["spec"]["selector"], labels) for b in budgets), name
    web_budget = next(b for b in budgets if b["metadata"]["name"] == "kashgar-web")
    assert web_budget["spec"]["minAvailable"] < _deployments()["kashgar-web"]["spec"]["replicas"]
    redis = _deployments()["kashgar-redis"]
    volumes = {v["name"]: v for v in redis["spec"]["template"]["spec"]["volumes"]}
    claim = volumes["data"]["persistentVolumeClaim"]["claimName"]
    assert any(d.get("kind") == "PersistentVolumeClaim" and d["metadata"]["name"] == claim for d in k8s_docs())
    assert redis["spec"]["strategy"] == {"type": "Recreate"}  # a ReadWriteOnce volume: one pod at a time


def test_every_web_replica_takes_the_table_key_from_one_secret() -> None:
    """The web pods read KASHGAR_TABLE_KEY (and KASHGAR_API_KEYS) from the Secret the docs create,
    never from a value of their own; two app instances given that one key open each other's tokens."""
    from cryptography.fernet import Fernet

    web = _deployments()["kashgar-web"]
    assert web["spec"]["replicas"] >= 2
    (container,) = web["spec"]["template"]["spec"]["containers"]
    assert {"secretRef": {"name": "kashgar-secrets"}} in container["envFrom"]
    assert "KASHGAR_TABLE_KEY" not in _env(container)
    config = next(d for d in k8s_docs() if d.get("kind") == "ConfigMap")["data"]
    assert "KASHGAR_TABLE_KEY" not in config and "KASHGAR_API_KEYS" not in config
    scaling = (DEPLOY.parent / "docs" / "scaling.md").read_text()
    assert "create secret generic kashgar-secrets" in scaling and "KASHGAR_TABLE_KEY" in scaling
    key = Fernet.generate_key().decode()
    pods = [create_app({"TESTING": True, "log_level": "WARNING", "table_key": key}).test_client() for _ in range(2)]
    body = pods[0].post("/table/new", json={"levels": ["novice"], "seed": 3}).get_json()
    moved = pods[1].post("/table/move", json={"token": body["token"], "decision": body["legal"][0]["text"]})
    assert moved.status_code == 200, moved.get_json()
