#!/usr/bin/env bash
# Layering rules of style.md R1, enforced on the source tree:
#  - server/: only *_service.*, service_util.h and main.cc include <grpcpp/...>;
#    only the store backends include SQLiteCpp or pqxx.
#  - agent/: only server_channel.* and main.cc include <grpcpp/...>.
#  - evidence/: never gRPC; SQLite only in the sample-db reader.
#  - server/ and agent/ never include each other.
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
violations '#include "grpcpp/|#include <grpcpp/' server '/(.*_service\.(h|cc)|service_util\.h|main\.cc)$' \
  "gRPC outside the server's service adapters"
violations '#include "SQLiteCpp/|#include <SQLiteCpp/|#include <pqxx/|#include "pqxx/' server \
  '/(sqlite_.*|postgres_.*|store_errors.*)$' "SQL library outside the store backends"
violations '#include "grpcpp/|#include <grpcpp/|\.grpc\.pb\.h' agent '/(server_channel\.(h|cc)|main\.cc)$' \
  "gRPC outside agent/server_channel"
violations '#include "grpcpp/|#include <grpcpp/|\.grpc\.pb\.h' evidence '^$' "gRPC in evidence/"
violations '#include "server/' agent '^$' "agent/ includes server/"
violations '#include "agent/' server '^$' "server/ includes agent/"
violations '#include "server/|#include "agent/|#include "client/' evidence '^$' "evidence/ includes a binary's code"
if [ $fail -eq 0 ]; then echo "layering: ok"; fi
exit $fail
