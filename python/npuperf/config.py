"""Client settings, read exactly as the CLI reads them (client/config.cc).

Precedence: explicit arguments, then the environment (``NPUPERF_SERVER``,
``NPUPERF_TOKEN``, ``NPUPERF_TLS_CA``, ``NPUPERF_TIMEOUT``, ``NPUPERF_FORMAT``; empty
ones ignored), then the config file: ``config_file`` when given, else
``$NPUPERF_CONFIG``, else ``$XDG_CONFIG_HOME/npuperf/config`` (or
``~/.config/npuperf/config``) when it exists. The file holds ``key = value`` lines,
``#`` starts a comment, a value in double quotes loses them; keys ``server``,
``token``, ``tls_ca``, ``timeout`` (1..86400 seconds) and ``format`` (text|json).
An unknown key or a line without ``=`` is an error naming the file, line and key.

``tests/python/test_config.py`` runs ``npuperf config show`` on the same files and
environments and requires the same settings and the same error messages.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from typing import Dict, Mapping, Optional

from npuperf.errors import ConfigError, NotFoundError

DEFAULT_SERVER = "127.0.0.1:50051"
DEFAULT_TIMEOUT_SECONDS = 30

#: Setting name -> environment variable, as client/config.cc Known().
ENVIRONMENT = {
    "format": "NPUPERF_FORMAT",
    "server": "NPUPERF_SERVER",
    "timeout": "NPUPERF_TIMEOUT",
    "tls_ca": "NPUPERF_TLS_CA",
    "token": "NPUPERF_TOKEN",
}

_ASCII_SPACE = " \t\n\v\f\r"


@dataclasses.dataclass(frozen=True)
class Settings:
    """The resolved settings. ``config_file`` is the file read ("" for none)."""

    server: str = DEFAULT_SERVER
    token: str = ""
    tls_ca: str = ""
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS
    format: str = "text"
    config_file: str = ""

    def describe(self) -> Dict[str, object]:
        """The JSON object ``npuperf config show`` prints for the same settings."""
        return {
            "config_file": self.config_file,
            "format": self.format,
            "server": self.server,
            "timeout_seconds": self.timeout_seconds,
            "tls_ca": self.tls_ca,
            "token_sha256": hashlib.sha256(self.token.encode()).hexdigest() if self.token else "",
        }


def read_config_file(path: str) -> Dict[str, str]:
    """Parses one config file (ReadConfigFile)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:
        raise NotFoundError(f"config file {path}: cannot be read") from None
    out: Dict[str, str] = {}
    # std::getline splits on '\n' only and leaves a final line without one.
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for n, line_bytes in enumerate(lines, start=1):
        line = line_bytes.decode("utf-8", "surrogateescape")
        hash_at = line.find("#")
        if hash_at >= 0:
            line = line[:hash_at]
        text = line.strip(_ASCII_SPACE)
        if not text:
            continue
        eq = text.find("=")
        if eq < 0:
            raise ConfigError(f"{path}:{n}: want key = value")
        key = text[:eq].strip(_ASCII_SPACE)
        value = text[eq + 1 :].strip(_ASCII_SPACE)
        if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
            value = value[1:-1]
        if key not in ENVIRONMENT:
            raise ConfigError(
                f"{path}:{n}: unknown key '{key}' (server, token, tls_ca, timeout, format)"
            )
        out[key] = value
    return out


def config_file_path(explicit: Optional[str] = None, environ: Mapping[str, str] = os.environ) -> str:
    """The config file to read, or "" for none (ConfigFilePath)."""
    if explicit:
        return explicit
    if environ.get("NPUPERF_CONFIG"):
        return environ["NPUPERF_CONFIG"]
    if environ.get("XDG_CONFIG_HOME"):
        directory = environ["XDG_CONFIG_HOME"]
    elif environ.get("HOME"):
        directory = os.path.join(environ["HOME"], ".config")
    else:
        return ""
    path = os.path.join(directory, "npuperf", "config")
    return path if os.path.exists(path) else ""


def settings_from_environment(environ: Mapping[str, str] = os.environ) -> Dict[str, str]:
    return {key: environ[var] for key, var in ENVIRONMENT.items() if environ.get(var)}


def _parse_timeout(value: str) -> int:
    """absl::SimpleAtoi: optional ASCII whitespace around an optional sign and decimal digits."""
    text = value.strip(_ASCII_SPACE)
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not all("0" <= ch <= "9" for ch in digits):
        return 0
    seconds = int(text)
    return seconds if -(2**31) <= seconds < 2**31 else 0


def resolve(
    arguments: Mapping[str, Optional[str]],
    environment: Mapping[str, str],
    file: Mapping[str, str],
    config_file: str = "",
) -> Settings:
    """Arguments, then environment, then file (ResolveConfig); None arguments are unset."""

    def pick(key: str) -> Optional[str]:
        for source in (arguments, environment, file):
            if source.get(key) is not None:
                return source[key]
        return None

    values: Dict[str, object] = {"config_file": config_file}
    for key in ("server", "token", "tls_ca"):
        if pick(key) is not None:
            values[key] = pick(key)
    fmt = pick("format")
    if fmt is not None:
        if fmt not in ("text", "json"):
            raise ConfigError(f"format '{fmt}': want text or json")
        values["format"] = fmt
    timeout = pick("timeout")
    if timeout is not None:
        seconds = _parse_timeout(timeout)
        if seconds <= 0 or seconds > 86400:
            raise ConfigError(f"timeout '{timeout}': want 1..86400 seconds")
        values["timeout_seconds"] = seconds
    return Settings(**values)  # type: ignore[arg-type]


def load(
    server: Optional[str] = None,
    token: Optional[str] = None,
    tls_ca: Optional[str] = None,
    config_file: Optional[str] = None,
    environ: Mapping[str, str] = os.environ,
) -> Settings:
    """The whole lookup (LoadConfig), the arguments in the role of the CLI's flags."""
    path = config_file_path(config_file, environ)
    file = read_config_file(path) if path else {}
    arguments = {"server": server, "token": token, "tls_ca": tls_ca}
    return resolve(arguments, settings_from_environment(environ), file, path)
