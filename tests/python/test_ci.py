"""The CI examples of docs/ci.md (examples/ci/): they parse as YAML with the structure
GitHub Actions and GitLab CI expect, and every npuperf command in them is accepted by
the real CLI's parser (run against an unreachable server: exit 5 or 6, never the usage
error 2)."""

from __future__ import annotations

import re
import shlex
import unittest

import harness

try:
    import yaml
except ImportError:  # pragma: no cover
    yaml = None

EXAMPLES = harness.SOURCE_DIR / "examples" / "ci"


def flatten(items):
    for item in items:
        if isinstance(item, list):
            yield from flatten(item)
        else:
            yield item


def npuperf_commands(script: str):
    """Each `npuperf ...` command of a shell script, with its variables replaced by
    harmless words and its redirections and `|| ...` tails dropped."""
    script = script.replace("\\\n", " ")
    script = re.sub(r"\$\{\{[^}]*\}\}", "x", script)  # GitHub expressions
    script = re.sub(r"\$\(cat collection-id\)", "c-000000000000", script)
    script = re.sub(r"\$\{[A-Za-z_:\-]+\}|\$[A-Za-z_]+", "x", script)
    for line in script.splitlines():
        line = line.strip()
        if not line.startswith("npuperf "):
            continue
        line = re.split(r"\s\|\|\s|\s>\s", line)[0]
        yield shlex.split(line)[1:]


@unittest.skipIf(yaml is None, "python3-yaml is missing (deploy/install-deps.sh installs it)")
class CiExamplesTest(unittest.TestCase):
    def load(self, name):
        with open(EXAMPLES / name) as f:
            return yaml.safe_load(f)

    def assertCliAccepts(self, args):
        r = harness.cli("--server", "127.0.0.1:1", "--timeout", "2", *args,
                        env=harness.clean_environment())  # fmt: skip
        self.assertIn(r.returncode, (5, 6), f"npuperf {' '.join(args)}: {r.stderr.decode()}")

    def test_github_actions(self):
        harness.require_binaries("npuperf")
        wf = self.load("github-actions.yml")
        triggers = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
        self.assertEqual(set(triggers), {"push", "pull_request"})
        self.assertEqual(wf["permissions"]["pull-requests"], "write")
        steps = wf["jobs"]["perf"]["steps"]
        self.assertTrue(all("run" in s or "uses" in s for s in steps))
        runs = "\n".join(s["run"] for s in steps if "run" in s)
        commands = list(npuperf_commands(runs))
        self.assertGreaterEqual(len(commands), 5)
        for args in commands:
            self.assertCliAccepts(args)
        self.assertIn("--format junit", runs)
        self.assertIn("--format markdown", runs)
        self.assertIn("baseline pin branch=main", runs)
        artifact = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
        self.assertEqual(artifact["with"]["path"], "npuperf-junit.xml")

    def test_gitlab_ci(self):
        harness.require_binaries("npuperf")
        ci = self.load("gitlab-ci.yml")
        self.assertEqual(ci["stages"], ["perf"])
        verdict = ci["npuperf-verdict"]
        self.assertEqual(verdict["artifacts"]["reports"]["junit"], "npuperf-junit.xml")
        self.assertIn("merge_request_event", verdict["rules"][0]["if"])
        self.assertIn("CI_DEFAULT_BRANCH", ci["npuperf-baseline"]["rules"][0]["if"])
        scripts = list(flatten(verdict["script"])) + list(flatten(ci["npuperf-baseline"]["script"]))
        commands = list(npuperf_commands("\n".join(scripts)))
        self.assertGreaterEqual(len(commands), 6)
        for args in commands:
            self.assertCliAccepts(args)
        self.assertTrue(any("notes" in s for s in scripts))


if __name__ == "__main__":
    unittest.main()
