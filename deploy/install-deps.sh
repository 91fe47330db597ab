#!/usr/bin/env bash
# Installs exactly the Debian 12 packages npuperf needs that are missing.
# Idempotent; uses sudo when not root. Called first by `make demo` and `make test`.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ccache git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libsqlitecpp-dev libsqlite3-dev sqlite3 libpqxx-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev libarchive-dev libcli11-dev nlohmann-json3-dev libssl-dev
  postgresql-15 python3 util-linux procps curl clang-format
  clang  # deploy/check-thread-safety.py: clang's thread-safety analysis in .ci/run (syntax only)
  bubblewrap  # npuperf-agent --sandbox bwrap (and its tests)
  nftables    # deploy/nftables (tests/deploy/nftables_test.sh)
  openssl     # the throwaway CA and certificates of the TLS tests (tests/integration)
  prometheus  # promtool: checks the alert rules and the scrapes (tests/integration/metrics_contract)
  chromium zlib1g-dev  # tests/report: the HTML report pages in headless Chromium (DOM + screenshot)
  zsh groff-base  # tests/integration/cli_docs_test.cc: zsh -n on the completion, groff on the man pages
  python3-grpcio python3-protobuf python3-grpc-tools python3-venv python3-yaml libxml2-utils
  dpkg-dev file systemd  # make package (dpkg-shlibdeps) and tests/deploy (systemd-analyze verify)
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
