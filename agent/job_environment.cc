#include "agent/job_environment.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/input_rules.h"

extern char** environ;

namespace npuperf::agent {
namespace fs = std::filesystem;
namespace {

bool Allowed(const std::string& name) {
  for (const char* exact : kEnvAllowList) {
    if (name == exact) return true;
  }
  for (const char* prefix : kEnvAllowPrefixes) {
    if (absl::StartsWith(name, prefix)) return true;
  }
  return false;
}

std::map<std::string, std::string> BaseEnv(const std::map<std::string, std::string>& agent_env,
                                           const v1::JobAssignment& job) {
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : agent_env) {
    if (Allowed(k)) env[k] = v;
  }
  if (!env.contains("PATH")) env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  env["PYPTO_PERF_SEED"] = std::to_string(job.params().seed());
  env["PYTHONHASHSEED"] = std::to_string(job.params().seed());
  env["PYPTO_PERF_COLLECTION_ID"] = job.collection_id();
  return env;
}

// The case env selector, when the job uses one and it is allowed.
bool UsableCaseEnv(const v1::JobAssignment& job) {
  return job.case_selector().has_case_env() &&
         EnvNameProblem(job.case_selector().case_env(), kMaxCaseEnvBytes).empty();
}

// Reads fd to the end, refusing more than max_bytes.
absl::StatusOr<std::string> ReadFd(int fd, const std::string& what, size_t max_bytes) {
  std::string out;
  char buf[64 << 10];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::InternalError(absl::StrCat(what, ": read failed"));
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, ": larger than ", max_bytes, " bytes"));
    }
  }
}

}  // namespace

absl::Status CheckJobInputs(const v1::JobAssignment& job) {
  if (job.case_selector().has_case_env()) {
    const std::string problem = EnvNameProblem(job.case_selector().case_env(), kMaxCaseEnvBytes);
    if (!problem.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("case_selector.case_env ", problem));
    }
  }
  if (!job.manifest_path().empty()) {
    const std::string problem = BundlePathProblem(job.manifest_path(), kMaxBundlePathBytes);
    if (!problem.empty())
      return absl::InvalidArgumentError(absl::StrCat("manifest_path ", problem));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadBundleFile(const fs::path& operator_dir,
                                           const std::string& relative, const std::string& field,
                                           size_t max_bytes) {
  const std::string problem = BundlePathProblem(relative, kMaxBundlePathBytes);
  if (!problem.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " ", problem));
  const std::string what = absl::StrCat(field, " '", relative, "'");
  int fd = ::open(operator_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat(what, ": the bundle is not unpacked"));
  const std::vector<std::string> parts = absl::StrSplit(relative, '/');
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | (last ? O_NONBLOCK : O_DIRECTORY);
    const int next = ::openat(fd, parts[i].c_str(), flags);
    const int err = errno;
    ::close(fd);
    if (next < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(what, err == ELOOP || err == ENOTDIR
                                 ? ": not a plain file in the bundle (symlinks are refused)"
                                 : ": not found in the bundle"));
    }
    fd = next;
  }
  absl::Cleanup close_fd = [fd] { ::close(fd); };
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": not a regular file in the bundle"));
  }
  return ReadFd(fd, what, max_bytes);
}

std::map<std::string, std::string> RunnerEnv(const std::map<std::string, std::string>& agent_env,
                                             const v1::JobAssignment& job) {
  auto env = BaseEnv(agent_env, job);
  const std::string device = std::to_string(job.device_id());
  if (job.kind() == v1::COLLECTION_KIND_MANIFEST) {
    env.erase("ASCEND_RT_VISIBLE_DEVICES");
    env["TILE_FWK_DEVICE_ID"] = device;
  } else {
    env["ASCEND_RT_VISIBLE_DEVICES"] = device;
  }
  if (!job.case_id().empty() && UsableCaseEnv(job))
    env[job.case_selector().case_env()] = job.case_id();
  return env;
}

std::map<std::string, std::string> PreflightEnv(const std::map<std::string, std::string>& agent_env,
                                                const v1::JobAssignment& job,
                                                const std::string& case_id) {
  auto env = BaseEnv(agent_env, job);
  env["ASCEND_RT_VISIBLE_DEVICES"] = std::to_string(job.device_id());
  if (UsableCaseEnv(job)) env[job.case_selector().case_env()] = case_id;
  return env;
}

absl::StatusOr<fs::path> FindRunner(const fs::path& operator_dir, const std::string& runner) {
  if (!runner.empty()) {
    const fs::path p = operator_dir / runner;
    if (!fs::is_regular_file(p)) {
      return absl::FailedPreconditionError(
          absl::StrCat("runner ", runner, " not found in the bundle"));
    }
    return p;
  }
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(operator_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && absl::StartsWith(name, "test_") && absl::EndsWith(name, ".py")) {
      found.push_back(e.path());
    }
  }
  if (found.size() != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("expected exactly one test_*.py runner in the operator directory, found ",
                     found.size(), "; name it with the operator's runner field"));
  }
  return found.front();
}

std::vector<std::string> RunnerArgv(const std::string& python, const fs::path& runner,
                                    const v1::JobAssignment& job, const std::string& case_id) {
  std::vector<std::string> argv;
  if (runner.extension() == ".py") argv.push_back(python);
  argv.push_back(runner.string());
  if (!case_id.empty() && job.case_selector().has_case_arg()) {
    argv.push_back(job.case_selector().case_arg());
    argv.push_back(case_id);
  }
  return argv;
}

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

}  // namespace npuperf::agent
