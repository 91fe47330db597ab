"""npuperf.config against the CLI: the same files and environments give the settings
`npuperf config show` prints, and the same refusals give the same messages."""

from __future__ import annotations

import json
import os
import tempfile
import unittest

import harness
from npuperf import config
from npuperf.errors import ConfigError, NotFoundError


class ConfigTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.require_binaries("npuperf")

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="npuperf-config-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def file(self, text: str, name: str = "config") -> str:
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def both(self, env, flags=(), **arguments):
        """(CLI exit code, CLI JSON or stderr, Python describe() or error message)."""
        environ = harness.clean_environment(**env)
        r = harness.cli(*flags, "config", "show", env=environ)
        try:
            ours = config.load(**arguments, environ=environ).describe()
        except (ConfigError, NotFoundError) as e:
            ours = e.message
        if r.returncode == 0:
            return 0, json.loads(r.stdout), ours
        return r.returncode, r.stderr.decode(), ours

    def assertSame(self, env, flags=(), **arguments):
        code, theirs, ours = self.both(env, flags, **arguments)
        self.assertEqual(code, 0, theirs)
        self.assertEqual(ours, theirs)
        return ours

    def assertSameRefusal(self, env, flags=(), **arguments):
        code, theirs, ours = self.both(env, flags, **arguments)
        self.assertEqual(code, 2, theirs)
        self.assertIsInstance(ours, str)
        self.assertEqual(theirs, f"npuperf: {ours}\n")

    def test_defaults(self):
        got = self.assertSame({})
        self.assertEqual(got["server"], "127.0.0.1:50051")
        self.assertEqual(got["timeout_seconds"], 30)

    def test_environment(self):
        got = self.assertSame(
            {"NPUPERF_SERVER": "h:1", "NPUPERF_TOKEN": "t0k", "NPUPERF_TLS_CA": "/ca.pem",
             "NPUPERF_TIMEOUT": " 12 "}  # fmt: skip
        )
        self.assertEqual((got["server"], got["tls_ca"], got["timeout_seconds"]), ("h:1", "/ca.pem", 12))
        self.assertNotEqual(got["token_sha256"], "")

    def test_file_then_environment_then_arguments(self):
        path = self.file('# comment\nserver = "file:1"  # trailing\n\ntoken=ft\ntimeout = 7\n')
        got = self.assertSame({"NPUPERF_CONFIG": path})
        self.assertEqual((got["server"], got["config_file"]), ("file:1", path))
        got = self.assertSame({"NPUPERF_CONFIG": path, "NPUPERF_SERVER": "env:2"})
        self.assertEqual(got["server"], "env:2")
        got = self.assertSame(
            {"NPUPERF_CONFIG": path, "NPUPERF_SERVER": "env:2"},
            ("--server", "arg:3", "--token", "at"),
            server="arg:3",
            token="at",
        )
        self.assertEqual(got["server"], "arg:3")

    def test_xdg_config_home_and_explicit_file(self):
        self.file("server = xdg:1\n", "npuperf/config")
        got = self.assertSame({"XDG_CONFIG_HOME": self.dir})
        self.assertEqual(got["server"], "xdg:1")
        other = self.file("server = explicit:2\n", "other")
        got = self.assertSame({"XDG_CONFIG_HOME": self.dir}, ("--config", other), config_file=other)
        self.assertEqual(got["server"], "explicit:2")

    def test_empty_environment_values_are_ignored(self):
        path = self.file("server = file:1\n")
        got = self.assertSame({"NPUPERF_CONFIG": path, "NPUPERF_SERVER": ""})
        self.assertEqual(got["server"], "file:1")

    def test_refusals_match(self):
        for text in ("colour = red\n", "just words\n", "timeout = 0\n", "timeout = 9x\n",
                     "format = yaml\n", "timeout = 86401\n"):  # fmt: skip
            with self.subTest(text=text):
                self.assertSameRefusal({"NPUPERF_CONFIG": self.file(text)})
        self.assertSameRefusal({"NPUPERF_TIMEOUT": "-5"})
        self.assertSameRefusal({"NPUPERF_CONFIG": os.path.join(self.dir, "missing")})


if __name__ == "__main__":
    unittest.main()
