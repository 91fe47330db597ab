"""ctest deploy_files_test: the deployment files of deploy/ agree with each other and with the binaries.

systemd units (deploy/systemd): ExecStart names an installed binary and only flags its --help lists; every ${VAR}
is set in the env example; User/Group come from the sysusers file, which has the agent's whole run-as pool;
LoadCredential ids are the %d/ paths used. Kubernetes (deploy/k8s): kinds and required fields, probe (/healthz on
the metrics port, the gRPC port requiring client certificates), container and
Service ports against --listen/--metrics-listen, one image named after the project version, every Secret in the
README's kubectl lines, the agent's lock, work and token paths mounted. Containerfile: multi-stage on debian:12
variants, every COPY source exists. Needs python3-yaml (deploy/install-deps.sh) and the built binaries.
"""

import os
import re
import subprocess
import sys
import unittest

import yaml

SRC = os.environ.get("NPUPERF_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("NPUPERF_BUILD_DIR", os.path.join(SRC, "build"))
DEPLOY = os.path.join(SRC, "deploy")


def read(*parts):
    with open(os.path.join(*parts), encoding="utf-8") as f:
        return f.read()


def project_version():
    m = re.search(r"project\(npuperf VERSION ([0-9.]+)", read(SRC, "CMakeLists.txt"))
    return m.group(1)


def unit_entries(text):
    """[(section, key, value)] of a systemd unit (no continuation lines in ours)."""
    out, section = [], None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        out.append((section, key, value))
    return out


def env_example(name):
    env = {}
    for line in read(DEPLOY, name).splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = value
    return env


def help_flags(binary):
    path = os.path.join(BUILD, "bin", binary)
    if not os.access(path, os.X_OK):
        raise AssertionError(f"{path} missing: build {binary} first")
    text = subprocess.run([path, "--help"], capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", text))


def sysusers():
    users, groups, members = set(), set(), {}
    for line in read(DEPLOY, "systemd", "npuperf.sysusers").splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if fields[0] == "u":
            users.add(fields[1])
            groups.add(fields[1])
        elif fields[0] == "g":
            groups.add(fields[1])
        elif fields[0] == "m":
            members.setdefault(fields[1], set()).add(fields[2])
            groups.add(fields[2])
    return users, groups, members


def expand_pool(pool):
    m = re.fullmatch(r"(.*?)(\d+)\.\.(\d+)", pool)
    if not m:
        return pool.split(",")
    return [f"{m.group(1)}{i}" for i in range(int(m.group(2)), int(m.group(3)) + 1)]


class UnitsTest(unittest.TestCase):
    UNITS = {"npuperf-server.service": ("npuperf-server", "server.env.example"),
             "npuperf-agent.service": ("npuperf-agent", "agent.env.example")}

    def test_exec_start_flags_and_variables(self):
        for unit, (binary, example) in self.UNITS.items():
            entries = unit_entries(read(DEPLOY, "systemd", unit))
            service = {k: v for s, k, v in entries if s == "Service"}
            words = service["ExecStart"].split()
            self.assertEqual(words[0], f"/usr/bin/{binary}", unit)
            flags = {w for w in words[1:] if w.startswith("--")}
            self.assertTrue(flags, unit)
            self.assertLessEqual(flags, help_flags(binary), f"{unit}: flags {binary} --help lacks")
            env = env_example(example)
            used = set(re.findall(r"\$\{?([A-Z_]+)\}?", service["ExecStart"]))
            self.assertLessEqual(used, set(env), f"{unit}: variables deploy/{example} does not set")
            self.assertEqual(service["EnvironmentFile"], "/etc/npuperf/" + example[:-len(".example")])
            creds = {v.split(":")[0] for s, k, v in entries if k == "LoadCredential"}
            self.assertEqual(creds, set(re.findall(r"%d/([\w.-]+)", service["ExecStart"])), unit)

    def test_users_and_groups_come_from_sysusers(self):
        users, groups, members = sysusers()
        for unit in self.UNITS:
            service = {k: v for s, k, v in unit_entries(read(DEPLOY, "systemd", unit)) if s == "Service"}
            if service["User"] != "root":
                self.assertIn(service["User"], users, unit)
            self.assertIn(service["Group"], groups, unit)
        pool = expand_pool(env_example("agent.env.example")["NPUPERF_RUN_AS_POOL"])
        self.assertEqual(len(pool), 8)
        for user in pool:
            self.assertIn(user, users)
            self.assertIn("HwHiAiUser", members.get(user, set()), user)
        self.assertNotIn("npuperf", {g for m in members.values() for g in m})


def k8s_docs():
    docs = []
    for name in ("server.yaml", "agent.yaml"):
        for doc in yaml.safe_load_all(read(DEPLOY, "k8s", name)):
            docs.append(doc)
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def flag_value(args, flag):
    return args[args.index(flag) + 1]


def port_of(address):
    return int(address.rsplit(":", 1)[1])


class KubernetesTest(unittest.TestCase):
    def setUp(self):
        self.docs = k8s_docs()

    def test_kinds_and_required_fields(self):
        self.assertEqual(set(self.docs), {("Deployment", "npuperf-server"), ("Service", "npuperf-server"),
                                          ("DaemonSet", "npuperf-agent")})
        for (kind, name), doc in self.docs.items():
            self.assertIn("apiVersion", doc, name)
            if kind == "Service":
                continue
            labels = doc["spec"]["template"]["metadata"]["labels"]
            self.assertLessEqual(doc["spec"]["selector"]["matchLabels"].items(), labels.items(), name)
            for c in doc["spec"]["template"]["spec"]["containers"]:
                for field in ("name", "image", "command", "args"):
                    self.assertIn(field, c, f"{name}: container {field}")

    def containers(self):
        for (kind, name), doc in self.docs.items():
            if kind != "Service":
                pod = doc["spec"]["template"]["spec"]
                for c in pod.get("initContainers", []) + pod["containers"]:
                    yield name, pod, c

    def test_one_image_of_the_project_version(self):
        images = {c["image"] for _, _, c in self.containers()}
        self.assertEqual(images, {f"npuperf:{project_version()}"})
        self.assertIn(f"-t npuperf:{project_version()}", read(DEPLOY, "container", "Containerfile"))

    def test_flags_exist(self):
        for name, _, c in self.containers():
            binary = os.path.basename(c["command"][0])
            flags = {a for a in c["args"] if a.startswith("--")}
            self.assertLessEqual(flags, help_flags(binary), name)

    def test_server_probes_and_ports_match_the_flags(self):
        dep = self.docs[("Deployment", "npuperf-server")]
        (c,) = dep["spec"]["template"]["spec"]["containers"]
        grpc_port = port_of(flag_value(c["args"], "--listen"))
        metrics_port = port_of(flag_value(c["args"], "--metrics-listen"))
        # TLS with client certificates on the gRPC port: kubelet probes /healthz on the metrics port.
        for probe in ("readinessProbe", "livenessProbe"):
            self.assertEqual(c[probe]["httpGet"], {"path": "/healthz", "port": metrics_port}, probe)
        self.assertIn("--require-agent-cert", c["args"])
        mounts = self.mounts(dep["spec"]["template"]["spec"], c)
        for flag in ("--tls-cert", "--tls-key", "--tls-client-ca"):
            self.assertIn(os.path.dirname(flag_value(c["args"], flag)), mounts, flag)
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        self.assertEqual(ports, {"grpc": grpc_port, "metrics": metrics_port})
        svc = self.docs[("Service", "npuperf-server")]
        self.assertEqual(svc["spec"]["selector"], dep["spec"]["selector"]["matchLabels"])
        for p in svc["spec"]["ports"]:
            self.assertIn(p["targetPort"], ports)
        agent = self.docs[("DaemonSet", "npuperf-agent")]["spec"]["template"]["spec"]["containers"][0]
        host, port = flag_value(agent["args"], "--server").rsplit(":", 1)
        self.assertEqual(host, svc["metadata"]["name"])
        self.assertIn(int(port), [p["port"] for p in svc["spec"]["ports"] if p["targetPort"] == "grpc"])

    def mounts(self, pod, c):
        volumes = {v["name"]: v for v in pod["volumes"]}
        return {m["mountPath"]: volumes[m["name"]] for m in c["volumeMounts"]}

    def test_agent_mounts_locks_work_devices_and_token(self):
        pod = self.docs[("DaemonSet", "npuperf-agent")]["spec"]["template"]["spec"]
        (c,) = pod["containers"]
        mounts = self.mounts(pod, c)
        for flag in ("--lock-dir", "--work-dir"):
            path = flag_value(c["args"], flag)
            self.assertEqual(mounts[path]["hostPath"]["path"], path, flag)
        metrics_port = port_of(flag_value(c["args"], "--metrics-listen"))
        self.assertEqual(c["readinessProbe"]["httpGet"], {"path": "/healthz", "port": metrics_port})
        devices = [p for p, v in mounts.items() if p.startswith("/dev/")]
        first, last = map(int, flag_value(c["args"], "--devices").split("-"))
        expected = {f"/dev/davinci{i}" for i in range(first, last + 1)}
        expected |= {"/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"}
        self.assertEqual(set(devices), expected)
        for path in devices:
            self.assertEqual(mounts[path]["hostPath"], {"path": path, "type": "CharDevice"})
        for flag in ("--token-file", "--tls-key"):
            secret_dir = os.path.dirname(flag_value(c["args"], flag))
            self.assertEqual(mounts[secret_dir]["secret"]["defaultMode"], 0o400, flag)
        env = {e["name"] for e in c["env"]}
        self.assertIn("NODE_NAME", env)
        self.assertEqual(flag_value(c["args"], "--host"), "$(NODE_NAME)")

    def test_every_secret_is_documented(self):
        readme = read(DEPLOY, "k8s", "README.md")
        created = {}
        for m in re.finditer(r"kubectl create secret generic ([\w-]+)((?:\\\n|[^\n])*)", readme):
            created[m.group(1)] = set(re.findall(r"--from-(?:literal|file)=([\w-]+)=", m.group(2)))
        for name, pod, c in self.containers():
            for e in c.get("env", []):
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    self.assertIn(ref["key"], created.get(ref["name"], set()), f"{name}: {ref}")
            for v in pod["volumes"]:
                if "secret" in v:
                    self.assertIn(v["secret"]["secretName"], created, name)


class ContainerfileTest(unittest.TestCase):
    def test_stages_and_copy_sources(self):
        text = read(DEPLOY, "container", "Containerfile")
        lines = [l for l in text.replace("\\\n", " ").splitlines() if l and not l.startswith("#")]
        froms = [l.split() for l in lines if l.startswith("FROM ")]
        self.assertGreaterEqual(len(froms), 2, "multi-stage")
        stages = set()
        for f in froms:
            self.assertRegex(f[1], r"^debian:(12|bookworm)(-slim)?$")
            if len(f) == 4 and f[2].upper() == "AS":
                stages.add(f[3])
        for l in lines:
            if not l.startswith("COPY "):
                continue
            words = l.split()[1:]
            opts = [w for w in words if w.startswith("--")]
            sources = [w for w in words if not w.startswith("--")][:-1]
            if any(o.startswith("--from=") for o in opts):
                self.assertIn(opts[0].split("=", 1)[1], stages, l)
                continue
            for s in sources:
                self.assertTrue(os.path.exists(os.path.join(SRC, s)), f"COPY source {s} missing")


if __name__ == "__main__":
    sys.exit(unittest.main())
