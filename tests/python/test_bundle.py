"""pack_bundle against the C++ packer: the same bytes and sha256 as `npuperf bundle pack`
on every example operator and on trees made to find the corners of the tar format."""

from __future__ import annotations

import hashlib
import os
import pathlib
import tempfile
import unittest

import harness
import npuperf


def cpp_pack(directory) -> bytes:
    """The tar the CLI packs for directory (npuperf bundle pack --out)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bundle.tar")
        r = harness.cli("bundle", "pack", os.fsdecode(directory), "--out", out)
        if r.returncode != 0:
            raise AssertionError(f"npuperf bundle pack {directory!r}: {r.stderr!r}")
        data = pathlib.Path(out).read_bytes()
        sha, size = r.stdout.decode().split()
        assert sha == hashlib.sha256(data).hexdigest() and int(size) == len(data)
        return data


def write(root: bytes, rel: bytes, content: bytes = b"x\n", mode: int = 0o644) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)
    os.chmod(path, mode)


class BundleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_binaries("npuperf")

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="npuperf-bundle-")
        self.root = os.fsencode(self._tmp.name) + b"/op"
        os.mkdir(self.root)

    def tearDown(self):
        self._tmp.cleanup()

    def assertSameAsCpp(self, directory):
        ours = npuperf.pack_bundle(directory)
        theirs = cpp_pack(directory)
        self.assertEqual(ours.sha256, hashlib.sha256(theirs).hexdigest())
        self.assertEqual(ours.data, theirs)
        return ours

    def test_every_example_operator(self):
        ops = harness.example_operators()
        self.assertGreaterEqual(len(ops), 9)
        for op in ops:
            with self.subTest(op=op.name):
                bundle = self.assertSameAsCpp(op)
                self.assertEqual(bundle.name, op.name)

    def test_apply_adam_has_the_hash_of_the_issue(self):
        bundle = npuperf.pack_bundle(harness.EXAMPLES / "apply_adam")
        self.assertTrue(bundle.sha256.startswith("d8e60fcd"), bundle.sha256)

    def test_utf8_and_binary_names_long_paths_modes_and_skipped_folders(self):
        r = self.root
        write(r, "算子/数据.json".encode(), b'{"k": 1}\n')
        write(r, "café.py".encode(), b"print(1)\n", 0o755)
        write(r, b"bad\xff\xfename.bin", os.urandom(3000))
        write(r, b"d" * 60 + b"/" + b"e" * 60 + b"/f.txt")  # over 100, splits at a '/'
        write(r, b"n" * 120 + b".txt")  # over 100, no '/': a pax path
        write(r, ("ü" * 60).encode() + b"/" + b"g" * 90)  # long and not ASCII
        write(r, b"big/blob", os.urandom(30_000))
        write(r, b"a-b", b"1")
        write(r, b"a/b", b"2")
        write(r, b"run.sh", b"#!/bin/sh\n", 0o700)
        os.makedirs(r + b"/empty/inner")
        for skipped in (b".git/config", b"__pycache__/m.pyc", b"sub/.msprof/out.csv", b"docs/perf/r.md"):
            write(r, skipped)
        write(r, b"docs/kept.md")
        bundle = self.assertSameAsCpp(r)
        for skipped in (b".git", b"__pycache__", b".msprof", b"docs/perf"):
            self.assertNotIn(skipped, bundle.data)
        self.assertIn(b"docs/kept.md", bundle.data)
        self.assertEqual(len(bundle.data) % 10240, 0)
        self.assertEqual(npuperf.pack_bundle(r).sha256, bundle.sha256)  # deterministic

    def test_mtime_and_owner_do_not_change_the_hash(self):
        write(self.root, b"a.py")
        before = npuperf.pack_bundle(self.root).sha256
        os.utime(self.root + b"/a.py", (1, 1))
        self.assertEqual(npuperf.pack_bundle(self.root).sha256, before)
        self.assertSameAsCpp(self.root)

    def test_empty_directory(self):
        self.assertSameAsCpp(self.root)

    def test_symlinks_are_refused_with_the_cpp_message(self):
        write(self.root, b"real.py")
        os.symlink(b"real.py", self.root + b"/link.py")
        with self.assertRaises(npuperf.InvalidArgumentError) as e:
            npuperf.pack_bundle(self.root)
        r = harness.cli("bundle", "pack", os.fsdecode(self.root))
        self.assertEqual(r.returncode, 1)
        self.assertIn(e.exception.message, r.stderr.decode())
        self.assertIn("bundles hold only regular files and directories", e.exception.message)

    def test_symlink_inside_a_skipped_folder_is_fine(self):
        write(self.root, b"a.py")
        os.makedirs(self.root + b"/.git")
        os.symlink(b"../a.py", self.root + b"/.git/link")
        self.assertSameAsCpp(self.root)

    def test_missing_directory(self):
        with self.assertRaises(npuperf.NotFoundError):
            npuperf.pack_bundle(self.root + b"/nope")
        self.assertEqual(harness.cli("bundle", "pack", os.fsdecode(self.root) + "/nope").returncode, 1)

    def test_limit(self):
        write(self.root, b"blob", bytes(50_000))
        with self.assertRaises(npuperf.ResourceExhaustedError):
            npuperf.pack_bundle(self.root, max_bytes=40_000)
        self.assertEqual(npuperf.pack_bundle(self.root, max_bytes=60_000).size, 61_440)


if __name__ == "__main__":
    unittest.main()
