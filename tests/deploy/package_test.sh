#!/usr/bin/env bash
# ctest package_test: cpack builds the .deb from the binaries already built (no rebuild), then the
# package is checked as a host would get it: dpkg-deb --info shows the shlibdeps Depends, dpkg -x
# into a scratch root, each installed binary's --version exits 0 with the project version, the units
# point at installed binaries, the sysusers file and env examples are where the units and docs say,
# msprof-sim is not shipped, the maintainer scripts create users and start nothing, and
# systemd-analyze verify accepts the installed units. Needs cpack, dpkg-deb, dpkg-shlibdeps
# (dpkg-dev), file and systemd-analyze (systemd): deploy/install-deps.sh. Fails when one is missing.
set -euo pipefail

SRC=${NPUPERF_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BUILD=${NPUPERF_BUILD_DIR:-$SRC/build}
fail() { echo "package_test: FAIL: $*" >&2; exit 1; }

for tool in cpack dpkg-deb dpkg-shlibdeps file systemd-analyze; do
  command -v "$tool" >/dev/null || fail "$tool missing (deploy/install-deps.sh: dpkg-dev file systemd)"
done
for b in npuperf npuperf-server npuperf-agent; do
  [ -x "$BUILD/bin/$b" ] || fail "$BUILD/bin/$b missing: build npuperf npuperf-server npuperf-agent first"
done
VERSION=$(sed -n 's/^project(npuperf VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/npuperf-package-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
(cd "$BUILD" && cpack -B "$WORK/out" >"$WORK/cpack.log" 2>&1) || { cat "$WORK/cpack.log"; fail "cpack"; }
shopt -s nullglob
debs=("$WORK"/out/npuperf_*.deb)
[ ${#debs[@]} -eq 1 ] || fail "want one npuperf_*.deb in cpack's output, got ${#debs[@]}"
DEB=${debs[0]}
echo "package_test: $(basename "$DEB") $(stat -c %s "$DEB") bytes"

INFO=$(dpkg-deb --info "$DEB")
echo "$INFO" | grep -E '^ (Package|Version|Depends):'
echo "$INFO" | grep -qx " Package: npuperf" || fail "Package is not npuperf"
echo "$INFO" | grep -qx " Version: $VERSION" || fail "Version is not $VERSION"
DEPENDS=$(echo "$INFO" | sed -n 's/^ Depends: //p')
# dpkg-shlibdeps derives these from the binaries (gRPC, protobuf, SQLite, libarchive, libc).
for lib in libc6 'libgrpc\+\+' libprotobuf libsqlite3 libarchive systemd; do
  echo "$DEPENDS" | grep -qE "(^|, )$lib[0-9.a-z-]*( |,|$)" || fail "Depends lacks $lib: $DEPENDS"
done

ROOT=$WORK/root
dpkg -x "$DEB" "$ROOT"
for b in npuperf npuperf-server npuperf-agent; do
  out=$("$ROOT/usr/bin/$b" --version) || fail "$b --version exited $?"
  echo "package_test: $out"
  echo "$out" | grep -q "$VERSION" || fail "$b --version does not show $VERSION: $out"
done
[ ! -e "$ROOT/usr/bin/msprof-sim" ] || fail "msprof-sim is shipped (cmake/packaging.cmake says why not)"
if dpkg-deb --contents "$DEB" | grep -q '/usr/local/'; then fail "the package installs under /usr/local"; fi

UNITS=$ROOT/usr/lib/systemd/system
for unit in npuperf-server.service npuperf-agent.service; do
  [ -f "$UNITS/$unit" ] || fail "$unit not in /usr/lib/systemd/system"
  exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$UNITS/$unit")
  [ -x "$ROOT$exe" ] || fail "$unit runs $exe, which the package does not install"
  grep -q '/usr/local' "$UNITS/$unit" && fail "$unit names /usr/local"
done
SYSUSERS=$ROOT/usr/lib/sysusers.d/npuperf.conf
[ -f "$SYSUSERS" ] || fail "sysusers file not at /usr/lib/sysusers.d/npuperf.conf"
cmp -s "$SYSUSERS" "$SRC/deploy/systemd/npuperf.sysusers" || fail "installed sysusers differs from deploy/"
for e in server.env.example agent.env.example; do
  [ -f "$ROOT/usr/share/doc/npuperf/examples/$e" ] || fail "$e not in /usr/share/doc/npuperf/examples"
done
[ -f "$ROOT/usr/share/doc/npuperf/operations.md" ] || fail "docs not in /usr/share/doc/npuperf"

CTRL=$WORK/control
dpkg-deb -e "$DEB" "$CTRL"
for s in postinst prerm postrm; do
  [ -x "$CTRL/$s" ] || fail "maintainer script $s missing or not executable"
  sh -n "$CTRL/$s" || fail "$s: syntax"
  if grep -vE '^\s*#' "$CTRL/$s" | grep -qE 'systemctl (start|enable|restart|try-restart)|deb-systemd-invoke'; then
    fail "$s starts or enables a service"
  fi
done
grep -q '^  systemd-sysusers npuperf.conf' "$CTRL/postinst" || fail "postinst does not run systemd-sysusers"

# systemd-analyze verify on the installed units with the package root as root directory, so the
# binaries it checks are the package's; the host's targets (sysinit.target, network-online.target)
# are copied in for the dependencies. Errors exit non-zero, but an unknown key or a bad value is
# only a warning: any output fails the test.
HOST_UNITS=/lib/systemd/system
[ -f "$HOST_UNITS/sysinit.target" ] || HOST_UNITS=/usr/lib/systemd/system
cp -P "$HOST_UNITS"/*.target "$UNITS/"
rc=0
systemd-analyze verify --root="$ROOT" "$UNITS/npuperf-server.service" \
  "$UNITS/npuperf-agent.service" >"$WORK/verify.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ] || [ -s "$WORK/verify.log" ]; then
  cat "$WORK/verify.log"
  fail "systemd-analyze verify (exit $rc)"
fi
echo "package_test: ok"
