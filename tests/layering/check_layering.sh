#!/usr/bin/env bash
# Layering rules of style.md R1 for the rooms of docs/architecture.md, enforced on the source tree:
#  - server/: only service/ and main.cc include <grpcpp/...>; only backends/sqlite/ and
#    backends/postgres/ include SQLiteCpp or pqxx, and pqxx never leaves backends/postgres/'s .cc
#    files and its internal headers (postgres_store.h is a pimpl); store/ (the seam: store.h,
#    records.h, the migrator, the deadline) is the ground floor and includes nothing else of
#    server/; core/ and compare/ include no backend and no service; service/ reaches the store
#    only through core/ (serve.h alone includes store/db_deadline.h, to carry the call deadline
#    into the database); only main.cc includes the backends' factory.
#  - agent/: only server_channel.* and main.cc include <grpcpp/...>.
#  - evidence/: never gRPC; SQLite only in the three db readers: per_core.cc (the sample-based
#    aicore.db), unified_db.cc (the PROF root's msprof_<ts>.db) and timeline_capture.cc (an
#    instruction profile's biu_perf.db and ascend_task.db); every other file reads them through
#    those files' headers, which include no SQLite.
#  - server/ and agent/ never include each other.
#  - report/ (the HTML pages) is pure: the generated messages and evidence/ only; no gRPC, no
#    database, no binary's code, no common/, no file or stream I/O; only client/ and the server's
#    web pages (server/ui/, which include no backend and no service) include it.
#  - time: only common/clock.* reads a clock (std::chrono::*_clock::now, absl::Now) or sleeps, in
#    production code and tests alike (tests take a FakeClock, or a RealClock where real processes run).
set -u
root=${1:?source dir}
fail=0
violations() {  # pattern, folder, allowed-files regex, message
  local hits
  hits=$(grep -rlE "$1" "$root/$2" --include='*.h' --include='*.cc' 2>/dev/null | grep -vE "$3" || true)
  if [ -n "$hits" ]; then
    echo "layering: $4:"
    echo "$hits" | sed "s|$root/|  |"
    fail=1
  fi
}
grpc='#include "grpcpp/|#include <grpcpp/|\.grpc\.pb\.h'
sql='#include "SQLiteCpp/|#include <SQLiteCpp/|#include <pqxx/|#include "pqxx/|#include <sqlite3.h>'
violations "$grpc" server '/server/(service/.*|main\.cc|server_wiring\.(h|cc))$' \
  "gRPC outside the server's service adapters and its wiring"
violations "$sql" server '/server/backends/(sqlite|postgres)/' "SQL library outside the store backends"
violations '#include "server/(core|compare|service|ui|backends)/' server/store '^$' \
  "server/store (the seam, on the ground floor) includes a room above it"
violations '#include "server/backends/' server '/server/(backends/.*|main\.cc)$' \
  "a backend or the factory included outside server/backends and main.cc"
violations '#include <pqxx/|#include "pqxx/' server/backends/postgres '\.cc$|/(pool|rows|statements|listener)\.h$' \
  "pqxx in the PostgreSQL backend's public header (postgres_store.h is a pimpl)"
violations '#include "server/(backends|service)' server/core '^$' \
  "server/core includes a backend or a service"
violations '#include "server/(backends|service)' server/compare '^$' \
  "server/compare includes a backend or a service"
violations '#include "server/store/' server/service '/serve\.h$' \
  "a service adapter reaches the store past core/ (serve.h may carry the call's deadline into it)"
violations "$grpc" agent '/agent/(server_channel\.(h|cc)|main\.cc)$' "gRPC outside agent/server_channel"
violations "$grpc" evidence '^$' "gRPC in evidence/"
violations "$sql" evidence '/evidence/(per_core|unified_db|timeline_capture)\.cc$' \
  "SQLite in evidence/ outside the db readers (per_core.cc, unified_db.cc, timeline_capture.cc)"
violations '#include "server/' agent '^$' "agent/ includes server/"
violations '#include "agent/' server '^$' "server/ includes agent/"
violations '#include "server/|#include "agent/|#include "client/' evidence '^$' "evidence/ includes a binary's code"
violations "$grpc|$sql" report '^$' "gRPC or a database in report/"
violations '#include "(server|agent|client|common|sim)/' report '^$' \
  "report/ includes a binary's code or common/ (it renders messages; the caller fetches them)"
violations 'std::(cout|cerr|ofstream|ifstream|fstream)|fopen\(|#include <(fstream|iostream)>' report '^$' \
  "I/O in report/ (it returns strings)"
violations '#include "report/' server '/server/ui/' \
  "server/ includes report/ outside server/ui/ (the CLI and the web pages render the pages)"
violations '#include "server/(backends|service)' server/ui '^$' \
  "server/ui includes a backend or a service"
violations '#include "report/' evidence '^$' "evidence/ includes report/"
clock='[a-z_]*clock::now|[A-Z][A-Za-z]*::now\(\)|absl::Now\(|absl::SleepFor|sleep_for\(|usleep\(|[^_a-z]sleep\('
for dir in common server agent client evidence report sim tests; do
  violations "$clock" "$dir" '/common/clock\.(h|cc)$' "a clock read or sleep outside common/clock"
done
# The Python client compiles proto/ with Debian 12's python3-grpc-tools, whose protoc
# predates proto3 `optional` (use a one-field oneof: same wire format and has_*()).
hits=$(grep -nE '^[[:space:]]*optional[[:space:]]' "$root"/proto/npuperf/v1/*.proto || true)
if [ -n "$hits" ]; then
  echo "layering: proto3 'optional' (Debian's python3-grpc-tools cannot compile it):"
  echo "$hits" | sed "s|$root/|  |"
  fail=1
fi
if [ $fail -eq 0 ]; then echo "layering: ok"; fi
exit $fail
