"""npuperf.Client end to end: a real npuperf-server, npuperf-agent and msprof-sim (as
tests/integration), the issue's 5-line example as a script, typed results, errors,
bundle upload skipping, and a watch that outlives a server restart."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest
from xml.etree import ElementTree

import harness
import npuperf

BINARIES = ("npuperf", "npuperf-server", "npuperf-agent", "msprof")
ROPE = "_Z22interleave_rope_kernelPDhS_S_S_iiii"
QUICK = dict(mode="quick", repeats=7, warm_up=0, op_name_map=str(harness.OP_NAMES))


def ops_dir(root: str, *names: str) -> str:
    """A batch directory holding copies of example operators."""
    ops = os.path.join(root, "ops")
    for name in names:
        shutil.copytree(harness.EXAMPLES / name, os.path.join(ops, name))
    return ops


class CountingClient(npuperf.Client):
    """Counts the bundles actually uploaded."""

    uploads = 0

    def upload(self, bundle):
        CountingClient.uploads += 1
        return super().upload(bundle)


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_binaries(*BINARIES)
        cls.cluster = harness.started_cluster("0-3")
        cls.tmp = tempfile.mkdtemp(prefix="npuperf-client-")
        cls.ops = ops_dir(cls.tmp, "interleave_rope", "interleave_rope_v2", "grouped_matmul",
                          "grouped_matmul_v2")  # fmt: skip
        cls.client = CountingClient(cls.cluster.address, environ=harness.clean_environment())
        cls.base = cls.client.submit(batch=cls.ops, labels={"branch": "main"}, **QUICK).wait(600)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.cluster.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def rounds(self):
        return {j.operator: j.round_id for j in self.base.jobs}

    def test_five_line_example_prints_a_verdict(self):
        script = textwrap.dedent(
            f"""\
            import npuperf
            c = npuperf.Client()                                   # NPUPERF_SERVER / NPUPERF_TOKEN / config file
            base = c.submit(batch={self.ops!r}, op_name_map={str(harness.OP_NAMES)!r}, mode="quick", repeats=7, labels={{"branch": "main"}}).wait()
            cand = c.submit({self.ops + "/interleave_rope"!r}, op_name={ROPE!r}, mode="quick", repeats=7).wait(timeout=600)
            v = c.compare(base.id, cand.id); print(v.summary); raise SystemExit(v.exit_code)   # 0 / 3 / 4 as the CLI
            """
        )
        python = os.environ.get("NPUPERF_TEST_PYTHON", sys.executable)
        env = harness.clean_environment(NPUPERF_SERVER=self.cluster.address)
        r = subprocess.run([python, "-c", script], capture_output=True, text=True, env=env, timeout=900)
        self.assertEqual(len(script.strip().splitlines()), 5)
        # The same code twice: STABLE, unless the simulator's noise says otherwise; the
        # exit code must follow the printed verdict either way.
        m = re.match(
            r"^(\d) regressed, (\d) improved, (\d) stable / 1 comparable of 1 matched \(0 "
            r"insufficient, 0 not comparable, 0 errored, 3 unmatched\)\n$",
            r.stdout,
        )
        self.assertIsNotNone(m, r.stdout + r.stderr + self.cluster.logs())
        self.assertEqual(r.returncode, 3 if m.group(1) == "1" else 0, r.stderr)

    def test_the_batch_succeeded_with_typed_jobs(self):
        self.assertTrue(self.base.succeeded, self.base)
        self.assertEqual(self.base.counts.total, 4)
        self.assertEqual({j.state for j in self.base.jobs}, {"succeeded"})
        self.assertEqual(self.base.labels, {"branch": "main"})
        job = self.base.jobs[0]
        self.assertGreater(job.kernel_time_us, 0)
        self.assertGreater(job.round_id, 0)
        self.assertEqual(type(job.proto).__name__, "Job")

    def test_round_verdicts_match_the_cli(self):
        r = self.rounds()
        slower = self.client.compare(r["grouped_matmul"], r["grouped_matmul_v2"])
        self.assertEqual((slower.kind, slower.exit_code), ("rounds", 3))
        self.assertEqual(slower.regressed[0].verdict, "REGRESSED")
        self.assertGreater(slower.comparisons[0].ratio, 1)
        faster = self.client.compare(str(r["interleave_rope"]), str(r["interleave_rope_v2"]))
        self.assertEqual((faster.comparisons[0].verdict, faster.exit_code), ("IMPROVED", 0))
        cli = self.cluster.cli("compare", str(r["grouped_matmul"]), str(r["grouped_matmul_v2"]))
        self.assertEqual(cli.returncode, slower.exit_code)
        self.assertIn(b"verdict REGRESSED", cli.stdout)

    def test_implementations_match_the_cli(self):
        # Both forms of interleave_rope are in the base batch: paired by name in one collection.
        impl = self.client.compare_implementations(
            self.base.id, self.base.id, {"interleave_rope_v2": "interleave_rope"}
        )
        self.assertEqual([o.candidate_operator for o in impl.operators], ["interleave_rope_v2"])
        self.assertLess(impl.operators[0].task_duration_ratio, 0.9)
        self.assertEqual(impl.operators[0].core_cases, 0)  # quick mode: no core time
        cli = self.cluster.cli("--format", "json", "compare-impl", self.base.id, self.base.id,
                               "--pair", "interleave_rope_v2=interleave_rope")  # fmt: skip
        result = json.loads(cli.stdout)["result"]
        self.assertAlmostEqual(result["operators"][0]["task_duration_ratio"],
                               impl.operators[0].task_duration_ratio)  # fmt: skip
        with self.assertRaisesRegex(npuperf.InvalidArgumentError, "needs pairs"):
            self.client.compare_implementations(self.base.id, self.base.id)

    def test_collections_baselines_and_regressions(self):
        again = self.client.submit(batch=self.ops, labels={"branch": "dev"}, **QUICK).wait(600)
        same = self.client.compare(self.base.id, again.id)
        self.assertEqual((same.kind, same.counts.matched), ("collections", 4))
        cli = self.cluster.cli("compare", self.base.id, again.id)
        self.assertEqual(cli.returncode, same.exit_code)
        self.assertIn(same.summary, cli.stdout.decode())
        self.assertAlmostEqual(same.geomean_ratio, 1.0, delta=0.05)
        many = self.client.compare_many(self.base.id, [again.id])
        self.assertEqual([v.summary for v in many], [same.summary])
        with self.assertRaisesRegex(npuperf.InvalidArgumentError, r"candidate_collection_ids\[1\]"):
            self.client.compare_many(self.base.id, [again.id, self.base.id])
        pinned = self.client.pin_baseline({"branch": "main"}, self.base.id)
        self.assertEqual((pinned.label, pinned.collection_id), ("branch=main", self.base.id))
        listing = self.client.regressions("branch=main", collection=again.id)
        self.assertEqual(listing.kind, "regressions")
        self.assertEqual(listing.compared, listing.counts.comparable)
        cli = self.cluster.cli("regressions", "--baseline", "branch=main", "--collection", again.id)
        self.assertEqual(cli.returncode, listing.exit_code, cli.stdout + cli.stderr)
        self.assertIn(listing.summary, cli.stdout.decode())

    def test_confirmation_requests_are_checked(self):
        r = self.rounds()
        # Two operators: a confirmation reruns one operator and case.
        with self.assertRaisesRegex(npuperf.FailedPreconditionError, "one operator and case"):
            self.client.request_confirmation(r["grouped_matmul"], r["grouped_matmul_v2"])
        with self.assertRaisesRegex(npuperf.InvalidArgumentError, "pairs"):
            self.client.request_confirmation(r["grouped_matmul"], r["interleave_rope"], pairs=9)
        with self.assertRaises(npuperf.NotFoundError):
            self.client.confirmation(999999)

    def junit(self, *args):
        """The CLI's JUnit output for args, validated against tests/client/junit.xsd."""
        r = self.cluster.cli(*args, "--format", "junit")
        path = os.path.join(self.tmp, "junit.xml")
        with open(path, "wb") as f:
            f.write(r.stdout)
        if shutil.which("xmllint"):
            check = subprocess.run(
                ["xmllint", "--noout", "--schema", str(harness.SOURCE_DIR / "tests/client/junit.xsd"),
                 path], capture_output=True, text=True)  # fmt: skip
            self.assertEqual(check.returncode, 0, check.stderr + r.stdout.decode())
        root = ElementTree.fromstring(r.stdout)
        self.assertEqual(root.tag, "testsuites")
        (suite,) = root
        cases = suite.findall("testcase")
        self.assertEqual(int(suite.get("tests")), len(cases))
        for kind in ("failures", "errors", "skipped"):
            tag = kind.rstrip("s") if kind != "skipped" else "skipped"
            self.assertEqual(int(suite.get(kind)), sum(len(c.findall(tag)) for c in cases), kind)
        return r.returncode, suite

    def test_cli_junit_and_markdown_on_real_verdicts(self):
        r = self.rounds()
        code, suite = self.junit("compare", str(r["grouped_matmul"]), str(r["grouped_matmul_v2"]))
        self.assertEqual(code, 3)
        (case,) = suite.findall("testcase")
        failure = case.find("failure")
        self.assertEqual(failure.get("type"), "REGRESSED")
        self.assertEqual(case.get("classname"), "npuperf.grouped_matmul_v2")  # the candidate's
        self.assertIn("baseline ", failure.text)
        self.assertTrue(failure.get("message"))
        code, suite = self.junit("compare", self.base.id, self.base.id)
        self.assertEqual(len(suite.findall("testcase")), 4)
        self.assertEqual(code, self.client.compare(self.base.id, self.base.id).exit_code)
        self.client.pin_baseline("branch=main", self.base.id)
        code, suite = self.junit("regressions", "--baseline", "branch=main", "--collection",
                                 self.base.id, "--fail-on", "never")  # fmt: skip
        self.assertEqual(code, 0)
        self.assertEqual(suite.get("name"), f"npuperf regressions --baseline branch=main "
                                            f"--collection {self.base.id}")  # fmt: skip
        md = self.cluster.cli("compare", self.base.id, self.base.id, "--format", "markdown")
        self.assertTrue(md.stdout.startswith(b"<!-- npuperf-verdict -->\n### npuperf compare "))
        self.assertIn(b"comparable of 4 matched", md.stdout)
        missing = self.cluster.cli("--format", "json", "get", "c-000000000000")
        self.assertEqual(missing.returncode, 6)
        self.assertEqual(json.loads(missing.stdout)["error"]["code"], "NOT_FOUND")

    def test_queries(self):
        rounds = self.client.rounds(collection=self.base.id)
        self.assertEqual(len(rounds), 4)
        series = self.client.rounds("interleave_rope", metric="duration")
        self.assertGreaterEqual(len(series), 1)
        self.assertEqual(len(series.series), len(series))
        self.assertGreater(series.series[0][2], 0)
        evidence = self.client.report(self.rounds()["interleave_rope"])
        self.assertGreater(evidence.duration.aggregate_us, 0)
        golden = self.client.report(self.base.id)  # no golden references for these operators
        self.assertEqual(type(golden).__name__, "GetGoldenReportResponse")
        listed = self.client.list(labels={"branch": "main"})
        self.assertIn(self.base.id, [c.id for c in listed])
        agents = self.client.agents()
        self.assertEqual(len(agents), 1)
        self.assertEqual(len(agents[0].devices), 4)
        self.assertEqual(self.client.get(self.base.id).state, "succeeded")
        # Device health: nothing quarantined, no canary (the cluster runs without
        # --canary-interval); a bad limit names the field.
        self.assertEqual(self.client.quarantines(include_released=True), [])
        self.assertEqual(self.client.canaries(), [])
        with self.assertRaises(npuperf.InvalidArgumentError) as e:
            self.client.canaries(limit=5000)
        self.assertIn("limit", [v.field for v in e.exception.field_violations])
        with self.assertRaises(npuperf.FailedPreconditionError):
            self.client.release_device("nobody:3", "not quarantined")
        # Timelines: only of formal rounds (these are quick), and a request names its field.
        with self.assertRaisesRegex(npuperf.FailedPreconditionError, "quick round"):
            self.client.timeline([self.rounds()["interleave_rope"]])
        with self.assertRaises(npuperf.InvalidArgumentError) as e:
            self.client.timeline()
        self.assertIn("round_ids", [v.field for v in e.exception.field_violations])

    def test_calibration_measures_noise_that_comparisons_then_use(self):
        with self.assertRaisesRegex(npuperf.InvalidArgumentError, "runs"):
            self.client.start_calibration(self.base.id, runs=2)
        with self.assertRaises(npuperf.NotFoundError):
            self.client.start_calibration("c-000000000000")
        started = self.client.start_calibration(self.base.id, runs=3)
        self.assertEqual(started.runs, 3)
        self.assertEqual(len(started.collection_ids), 3)
        for cid in started.collection_ids:
            self.client.collection(cid).wait(600)
        done = self.client.get_calibration(started.id)
        self.assertEqual(done.state, npuperf._proto.query_service_pb2.CALIBRATION_STATE_SUCCEEDED,
                         done.reason)  # fmt: skip
        spreads = self.client.list_noise("grouped_matmul")
        self.assertEqual({n.operator_name for n in spreads}, {"grouped_matmul"})
        duration = [n for n in spreads if n.family == "duration"]
        self.assertEqual(len(duration), 1)
        self.assertEqual(duration[0].calibration_id, started.id)
        self.assertGreaterEqual(duration[0].threshold, 2)
        verdict = self.client.compare(self.base.id, started.collection_ids[0])
        sources = {c.proto.duration.threshold_source for c in verdict.comparisons}
        self.assertEqual(sources, {"calibrated"}, verdict.summary)

    def test_known_bundles_are_not_uploaded_again(self):
        before = CountingClient.uploads
        c = self.client.submit(self.ops + "/interleave_rope", op_name=ROPE, mode="quick", repeats=3)
        self.assertEqual(CountingClient.uploads, before)  # the batch uploaded it already
        c.cancel("test done")
        fresh = os.path.join(self.tmp, "fresh", "interleave_rope")
        shutil.copytree(harness.EXAMPLES / "interleave_rope", fresh)
        with open(os.path.join(fresh, "NOTE.txt"), "w") as f:
            f.write("a new bundle\n")
        c = self.client.submit(fresh, op_name=ROPE, mode="quick", repeats=3)
        self.assertEqual(CountingClient.uploads, before + 1)
        c.cancel("test done")

    def test_idempotency_key_returns_the_same_collection(self):
        args = dict(op_name=ROPE, mode="quick", repeats=3, idempotency_key="py-test-key-1")
        first = self.client.submit(self.ops + "/interleave_rope", **args)
        second = self.client.submit(self.ops + "/interleave_rope", **args)
        self.assertEqual((first.id, first.created, second.created), (second.id, True, False))
        first.cancel()

    def test_errors_carry_code_and_field_violations(self):
        with self.assertRaises(npuperf.NotFoundError) as e:
            self.client.get("c-000000000000")
        self.assertEqual(e.exception.exit_code, 6)
        with self.assertRaises(npuperf.InvalidArgumentError) as e:
            self.client.submit(self.ops + "/interleave_rope", op_name=ROPE, priority=99,
                               launch="first")
        fields = [v.field for v in e.exception.field_violations]
        self.assertIn("spec.priority", fields)
        self.assertIn("spec.operators[0].launch", fields)
        with self.assertRaises(npuperf.InvalidArgumentError):
            self.client.compare(12, self.base.id)  # a round id and a collection id
        with self.assertRaises(npuperf.InvalidArgumentError):
            self.client.submit()  # no operator directory
        with self.assertRaises(npuperf.NotFoundError):
            self.client.submit(batch=os.path.join(self.tmp, "missing"))

    def test_unreachable_server_is_unavailable(self):
        c = npuperf.Client("127.0.0.1:1", timeout=2, retries=1, environ={})
        with self.assertRaises(npuperf.UnavailableError) as e:
            c.agents()
        self.assertEqual(e.exception.exit_code, 5)


class WatchRestartTest(unittest.TestCase):
    """A watch goes on through a server restart (same address and database)."""

    def setUp(self):
        harness.require_binaries(*BINARIES)
        self.cluster = harness.started_cluster("0-1")
        self.tmp = tempfile.mkdtemp(prefix="npuperf-watch-")

    def tearDown(self):
        self.cluster.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_watch_resumes_after_a_server_restart(self):
        ops = ops_dir(self.tmp, "interleave_rope", "grouped_matmul", "apply_adam",
                      "moe_init_routing")  # fmt: skip
        client = npuperf.Client(self.cluster.address, environ={}, resume_for=60)
        c = client.submit(batch=ops, max_jobs=1, **QUICK)
        events = []
        restarted = threading.Event()
        for event in c.watch(timeout=600):
            events.append(event)
            if not restarted.is_set() and not event.collection.done:
                self.cluster.restart_server()
                restarted.set()
        client.close()
        self.assertTrue(restarted.is_set())
        self.assertTrue(any(e.resumed for e in events), [e.sequence for e in events])
        final = events[-1].collection
        self.assertTrue(final.done)
        self.assertEqual(final.counts.total, 4)
        self.assertTrue(re.match(r"c-[0-9a-f]{12}$", final.id))


if __name__ == "__main__":
    unittest.main()
