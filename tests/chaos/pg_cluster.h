#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace npuperf::chaos {

// A throwaway PostgreSQL cluster of the chaos soak's own (the way
// deploy/with-postgres.sh makes one: initdb in a directory, a free loopback
// port, trust auth, fsync off), so that the soak can restart it with
// `pg_ctl restart -m immediate` (a crash: no checkpoint, WAL replay on start).
// Runs as the postgres user when the soak runs as root. Not thread-safe; the
// destructor stops the server.
class PgCluster {
 public:
  explicit PgCluster(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~PgCluster();
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;

  // initdb, start, createdb npuperf_chaos.
  absl::Status Start();
  // pg_ctl restart -m immediate -w: the server is killed and started again.
  absl::Status RestartImmediate();
  void Stop();
  // postgresql://USER@127.0.0.1:PORT/npuperf_chaos
  std::string url() const;

 private:
  // Runs a PostgreSQL binary (as postgres when root); its exit code.
  int Run(const std::string& binary, const std::vector<std::string>& args) const;

  std::filesystem::path dir_;
  std::string bin_;
  std::string user_;
  int port_ = 0;
  bool started_ = false;
};

}  // namespace npuperf::chaos
