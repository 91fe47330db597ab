#include "tests/chaos/pg_cluster.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/integration/process_harness.h"

namespace npuperf::chaos {
namespace fs = std::filesystem;

namespace {

// The newest /usr/lib/postgresql/<v>/bin, or "".
std::string FindPgBin() {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    if (fs::exists(e.path() / "bin/pg_ctl")) found.push_back((e.path() / "bin").string());
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? "" : found.back();
}

}  // namespace

PgCluster::~PgCluster() { Stop(); }

int PgCluster::Run(const std::string& binary, const std::vector<std::string>& args) const {
  std::vector<std::string> argv;
  if (::geteuid() == 0) argv = {"runuser", "-u", "postgres", "--"};
  argv.push_back(bin_ + "/" + binary);
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = testing::RunCommand(argv, dir_, {}, std::chrono::seconds(120));
  if (r.exit_code != 0) {
    std::fprintf(stderr, "chaos: %s failed (%d): %s%s\n", absl::StrJoin(argv, " ").c_str(),
                 r.exit_code, r.out.c_str(), r.err.c_str());
  }
  return r.exit_code;
}

absl::Status PgCluster::Start() {
  bin_ = FindPgBin();
  if (bin_.empty()) return absl::NotFoundError("PostgreSQL server binaries not found");
  port_ = testing::RestartablePort();  // restarted on it (RestartImmediate)
  const bool root = ::geteuid() == 0;
  if (root) {
    const passwd* pw = ::getpwnam("postgres");
    if (pw == nullptr) return absl::NotFoundError("no postgres user to run PostgreSQL as");
    if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      return absl::InternalError("chown " + dir_.string());
    }
    user_ = "postgres";
  } else {
    const passwd* pw = ::getpwuid(::geteuid());
    user_ = pw != nullptr ? pw->pw_name : "postgres";
  }
  const std::string data = (dir_ / "db").string();
  if (Run("initdb", {"-D", data, "-U", user_, "--auth=trust", "-E", "UTF8"}) != 0) {
    return absl::InternalError("initdb failed");
  }
  const std::string opts = absl::StrCat("-c listen_addresses=127.0.0.1 -p ", port_, " -k ",
                                        dir_.string(), " -c fsync=off -c max_connections=200");
  if (Run("pg_ctl",
          {"-D", data, "-w", "-l", (dir_ / "postgres.log").string(), "-o", opts, "start"}) != 0) {
    return absl::InternalError("pg_ctl start failed");
  }
  started_ = true;
  if (Run("createdb",
          {"-h", "127.0.0.1", "-p", std::to_string(port_), "-U", user_, "npuperf_chaos"}) != 0) {
    return absl::InternalError("createdb failed");
  }
  return absl::OkStatus();
}

absl::Status PgCluster::RestartImmediate() {
  if (Run("pg_ctl", {"-D", (dir_ / "db").string(), "-m", "immediate", "-w", "-l",
                     (dir_ / "postgres.log").string(), "restart"}) != 0) {
    return absl::InternalError("pg_ctl restart -m immediate failed");
  }
  return absl::OkStatus();
}

void PgCluster::Stop() {
  if (!started_) return;
  started_ = false;
  Run("pg_ctl", {"-D", (dir_ / "db").string(), "-m", "fast", "-w", "stop"});
}

std::string PgCluster::url() const {
  return absl::StrCat("postgresql://", user_, "@127.0.0.1:", port_, "/npuperf_chaos");
}

}  // namespace npuperf::chaos
