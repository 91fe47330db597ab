"""The Python client's manifest rule against the shared fixtures
(tests/fixtures/manifests/INDEX.tsv), which evidence/cases.cc, the CLI and the
server are tested against too: the same manifests accepted with the same case
ids, the same refused with an error naming the same field."""

from __future__ import annotations

import os
import pathlib
import shutil
import tempfile
import unittest

from npuperf import _manifest, _submit
from npuperf.errors import InvalidArgumentError, NotFoundError

FIXTURES = (
    pathlib.Path(os.environ.get("NPUPERF_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
    / "tests"
    / "fixtures"
    / "manifests"
)


def index():
    """(file, kind, expected) per INDEX.tsv line: kind "ids" or "error"."""
    rows = []
    for line in (FIXTURES / "INDEX.tsv").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, kind, expected = line.split("\t")
            rows.append((name, kind, expected))
    return rows


class ManifestFixturesTest(unittest.TestCase):
    def test_every_fixture_is_indexed(self):
        listed = {name for name, _, _ in index()}
        on_disk = {
            f"{d}/{p.name}" for d in ("good", "bad") for p in (FIXTURES / d).glob("*.json")
        }
        self.assertEqual(listed, on_disk)
        self.assertGreater(len([1 for _, kind, _ in index() if kind == "error"]), 20)

    def test_the_rule_of_evidence_cases(self):
        for name, kind, expected in index():
            raw = (FIXTURES / name).read_bytes()
            with self.subTest(name):
                if kind == "ids":
                    self.assertEqual(_manifest.parse_case_manifest(raw), expected.split(","))
                else:
                    with self.assertRaises(InvalidArgumentError) as e:
                        _manifest.parse_case_manifest(raw)
                    self.assertIn(expected, e.exception.message)

    def test_submit_names_the_file_and_the_field(self):
        with tempfile.TemporaryDirectory() as tmp:
            op = os.path.join(tmp, "add")
            os.mkdir(op)
            self.assertRaises(NotFoundError, _submit.manifest_case_ids, op)
            manifest = os.path.join(op, "PERFORMANCE_CASES.json")
            shutil.copy(FIXTURES / "bad" / "case_without_dtype.json", manifest)
            with self.assertRaises(InvalidArgumentError) as e:
                _submit.manifest_case_ids(op)
            self.assertEqual(
                e.exception.message,
                f"{manifest}: case manifest cases[0].dtype must be a non-empty string",
            )
            shutil.copy(FIXTURES / "good" / "ids_stripped.json", manifest)
            self.assertEqual(_submit.manifest_case_ids(op), ["padded", "b"])


if __name__ == "__main__":
    unittest.main()
