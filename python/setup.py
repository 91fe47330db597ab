"""Build step of the npuperf package: generates the protobuf and gRPC modules.

pyproject.toml holds the metadata; this file only adds the step that runs
grpc_tools.protoc (Debian's python3-grpc-tools) over proto/ into the build tree:

  npuperf/v1/*_pb2.py, *_pb2_grpc.py   from proto/npuperf/v1/*.proto
  npuperf/_rpc_status.desc             google.rpc.Status and BadRequest, a descriptor set

Nothing generated is committed or edited by hand. The protos are found in
$NPUPERF_PROTO_DIR, else ./proto (an sdist), else ../proto (the repository).
"""

import os
import pathlib
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent


def proto_dir() -> pathlib.Path:
    for candidate in (os.environ.get("NPUPERF_PROTO_DIR"), HERE / "proto", HERE.parent / "proto"):
        if candidate and (pathlib.Path(candidate) / "npuperf" / "v1").is_dir():
            return pathlib.Path(candidate)
    sys.exit("npuperf build: no proto/npuperf/v1 (set NPUPERF_PROTO_DIR)")


def protoc(args) -> None:
    try:
        import grpc_tools
        from grpc_tools import protoc as grpc_protoc
    except ImportError:
        sys.exit(
            "npuperf build: grpc_tools is missing (Debian: apt-get install python3-grpc-tools; "
            "build with --no-build-isolation so that the build sees it)"
        )
    well_known = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    argv = ["grpc_tools.protoc", f"-I{well_known}"] + [str(a) for a in args]
    if grpc_protoc.main(argv) != 0:
        sys.exit("npuperf build: protoc failed: " + " ".join(argv))


def generate(out: pathlib.Path) -> None:
    protos = proto_dir()
    sources = sorted((protos / "npuperf" / "v1").glob("*.proto"))
    (out / "npuperf" / "v1").mkdir(parents=True, exist_ok=True)
    protoc([f"-I{protos}", f"--python_out={out}", f"--grpc_python_out={out}", *sources])
    (out / "npuperf" / "v1" / "__init__.py").write_text(
        '"""Generated from proto/npuperf/v1 by the package build (setup.py). Do not edit."""\n'
    )
    protoc(
        [
            f"-I{protos}",
            "--include_imports",
            f"--descriptor_set_out={out / 'npuperf' / '_rpc_status.desc'}",
            protos / "google" / "rpc" / "status.proto",
            protos / "google" / "rpc" / "error_details.proto",
        ]
    )


class BuildWithStubs(build_py):
    """build_py, then the generated modules next to the package in build_lib."""

    def run(self):
        super().run()
        generate(pathlib.Path(self.build_lib))


setup(cmdclass={"build_py": BuildWithStubs})
