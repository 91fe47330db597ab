#!/usr/bin/env python3
"""Clang's thread-safety analysis over npuperf's own code: a syntax-only pass.

The ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations (style.md R7) are checked by
nothing when the build uses g++. This runs Debian's clang++ with -fsyntax-only and only the
thread-safety warnings, as errors, over every project translation unit of a configured build
directory's compile_commands.json that declares or takes an absl::Mutex or a thread-safety
annotation (in the .cc or its own header; generated code and tests skipped, except tests/fakes/,
whose fakes carry annotations too). It compiles nothing, so it costs a fraction of a build; it needs
the build's generated headers (the protos), so run it after the build.

Usage: deploy/check-thread-safety.py BUILD_DIR [-j N] [file-regex]
Exit: 0 clean; 1 a thread-safety error (printed with its file and line); 2 no clang++ or no
compile_commands.json.
"""
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

SOURCE_DIRS = ("agent/", "client/", "common/", "evidence/", "report/", "server/", "sim/",
               "tests/fakes/")
# Flags of the g++ command line that a syntax-only clang run must not get (outputs, dependency
# files, optimisation and debug info) or that clang does not know.
DROP_WITH_ARG = {"-o", "-MF", "-MT", "-MQ"}
DROP = {"-c", "-MD", "-MMD", "-g", "-O2", "-O3", "-Werror"}
CHECK = ["-fsyntax-only", "-Wno-everything", "-Wthread-safety", "-Wthread-safety-beta",
         "-Werror=thread-safety", "-Werror=thread-safety-beta"]


def clang_command(entry, clang):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    # Drop the launcher (ccache) and the compiler itself.
    while args and not args[0].startswith("-") and not args[0].endswith(".cc"):
        args = args[1:]
    out, skip = [clang], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in DROP_WITH_ARG:
            skip = True
            continue
        if a in DROP or a.startswith("-fdiagnostics-color"):
            continue
        out.append(a)
    return out + CHECK


def uses_locks(root, rel):
    """Whether the unit or its own header declares or takes an absl::Mutex or an annotation:
    the units where the analysis has something to check."""
    for path in (rel, rel[:-3] + ".h"):
        try:
            with open(os.path.join(root, path), errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        if "absl::Mutex" in text or "ABSL_GUARDED_BY" in text or "LOCKS_REQUIRED" in text:
            return True
    return False


def project_units(build_dir, root, pattern):
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    seen = set()
    for e in entries:
        path = os.path.realpath(os.path.join(e["directory"], e["file"]))
        rel = os.path.relpath(path, root)
        if rel.startswith("..") or ".pb." in rel or not rel.startswith(SOURCE_DIRS):
            continue
        if rel.startswith("tests/") and not rel.startswith("tests/fakes/"):
            continue
        if pattern and not re.search(pattern, rel):
            continue
        if not uses_locks(root, rel):
            continue
        if rel in seen:
            continue
        seen.add(rel)
        yield rel, e


# The self-test: the flags must reject a guarded member read without its lock and accept it
# read with the lock held, or a clean result above would mean nothing.
SELF_TEST = r"""
#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
class Counter {
 public:
  int Read() { %s return n_; }
 private:
  absl::Mutex mu_;
  int n_ ABSL_GUARDED_BY(mu_) = 0;
};
int main() { return Counter().Read(); }
"""


def self_test(clang):
    results = []
    for body in ("", "absl::MutexLock l(&mu_);"):
        p = subprocess.run([clang, "-x", "c++", "-std=c++20", "-"] + CHECK, input=SELF_TEST % body,
                           capture_output=True, text=True)
        results.append(p.returncode)
    if results[0] == 0 or results[1] != 0:
        print(f"check-thread-safety: self-test failed (unlocked read exit {results[0]}, locked "
              f"read exit {results[1]}): the flags do not check what they claim", file=sys.stderr)
        return False
    return True


def source_dir(build_dir):
    """The source tree the build directory was configured from (CMakeCache.txt)."""
    with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith("CMAKE_HOME_DIRECTORY:"):
                return os.path.realpath(line.split("=", 1)[1].strip())
    return os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))


def main():
    argv = sys.argv[1:]
    jobs = 2
    if "-j" in argv:
        i = argv.index("-j")
        jobs = int(argv[i + 1])
        del argv[i:i + 2]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    build_dir = os.path.abspath(argv[0])
    pattern = argv[1] if len(argv) > 1 else ""
    root = source_dir(build_dir)
    clang = os.environ.get("CLANGXX") or shutil.which("clang++") or shutil.which("clang++-14")
    if not clang:
        print("check-thread-safety: clang++ not found (Debian 12: apt-get install clang)",
              file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(build_dir, "compile_commands.json")):
        print(f"check-thread-safety: no compile_commands.json in {build_dir} (configure first)",
              file=sys.stderr)
        return 2
    if not self_test(clang):
        return 1
    units = list(project_units(build_dir, root, pattern))

    def run(unit):
        rel, entry = unit
        p = subprocess.run(clang_command(entry, clang), cwd=entry["directory"],
                           capture_output=True, text=True)
        return rel, p.returncode, p.stderr

    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for rel, code, err in pool.map(run, units):
            if code != 0:
                failed.append(rel)
                sys.stdout.write(err)
    if failed:
        print(f"check-thread-safety: {len(failed)} of {len(units)} files fail clang's "
              f"thread-safety analysis: {' '.join(failed)}")
        return 1
    print(f"check-thread-safety: {len(units)} files, clang's thread-safety analysis clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
