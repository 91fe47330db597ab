#!/usr/bin/env bash
# ctest python_test: installs python/ with pip into a fresh virtualenv (system site
# packages for Debian's grpcio and protobuf, as docs/python.md says), then runs the
# Python tests (tests/python/test_*.py) against the real binaries of the build.
# Exits 77 (ctest: skipped) with the reason when no python3 has the gRPC modules.
set -euo pipefail

SRC=${NPUPERF_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${NPUPERF_BUILD_DIR:-$SRC/build}

PY=""
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c "import grpc, grpc_tools.protoc, google.protobuf, venv, ensurepip" 2>/dev/null; then
    PY=$candidate
    break
  fi
done
if [ -z "$PY" ]; then
  echo "python_test: SKIPPED: no python3 with grpc, grpc_tools, protobuf and venv" \
       "(Debian: python3-grpcio python3-grpc-tools python3-protobuf python3-venv; deploy/install-deps.sh)"
  exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/npuperf-python-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# A copy, so that the build writes nothing into the source tree.
cp -r "$SRC/python" "$SRC/proto" "$WORK/"
rm -rf "$WORK/python/build" "$WORK/python"/*.egg-info
"$PY" -m venv --system-site-packages "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check --no-build-isolation \
  --no-index "$WORK/python"

cd "$SRC/tests/python"
export NPUPERF_SOURCE_DIR="$SRC" NPUPERF_BUILD_DIR="$BUILD" NPUPERF_TEST_PYTHON="$WORK/venv/bin/python"
exec "$WORK/venv/bin/python" -m unittest discover -v -s . -p 'test_*.py'
