#!/usr/bin/env bash
# Checks that every tracked C++ file (*.h, *.cc) is formatted as .clang-format says, with
# Debian 12's clang-format 14 (`apt-get install clang-format`), without changing anything.
# Generated code (*.pb.h, *.pb.cc, *.grpc.pb.*: built under build/, listed here in case one is
# ever committed) and tests/evidence/testdata/ are skipped.
# Exits 0 when everything is formatted; 1 listing the files that differ (see one with
# `clang-format --style=file <file> | diff <file> -`); 2 when clang-format 14 is missing.
# Usage: deploy/check-format.sh [file...]   (default: every tracked *.h / *.cc)
set -euo pipefail
cd "$(dirname "$0")/.."

CLANG_FORMAT=${CLANG_FORMAT:-}
if [ -z "$CLANG_FORMAT" ]; then
  for c in clang-format-14 clang-format; do
    if command -v "$c" >/dev/null; then CLANG_FORMAT=$c; break; fi
  done
fi
if [ -z "$CLANG_FORMAT" ]; then
  echo "check-format: clang-format not found (Debian 12: apt-get install clang-format)" >&2
  exit 2
fi
version=$("$CLANG_FORMAT" --version 2>/dev/null | sed -nE 's/.*version ([0-9]+)\..*/\1/p' || true)
if [ "$version" != 14 ]; then
  echo "check-format: $CLANG_FORMAT is version ${version:-unknown}; the style is pinned to 14" \
       "(Debian 12). Set CLANG_FORMAT to a clang-format 14." >&2
  exit 2
fi

if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files -- '*.h' '*.cc' |
                       grep -vE '(\.pb\.(h|cc)|\.grpc\.pb\.(h|cc)|_mock\.grpc\.pb\.h)$' |
                       grep -v '^tests/evidence/testdata/')
fi

differ=()
for f in "${files[@]}"; do
  if ! "$CLANG_FORMAT" --style=file:.clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then differ+=("$f"); fi
done

if [ ${#differ[@]} -gt 0 ]; then
  echo "check-format: ${#differ[@]} of ${#files[@]} files are not formatted (clang-format -i <file>):" >&2
  printf '  %s\n' "${differ[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
