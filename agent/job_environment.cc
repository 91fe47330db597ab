#include "agent/job_environment.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

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

}  // namespace

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
  if (!job.case_id().empty() && job.case_selector().has_case_env()) {
    env[job.case_selector().case_env()] = job.case_id();
  }
  return env;
}

std::map<std::string, std::string> PreflightEnv(const std::map<std::string, std::string>& agent_env,
                                                const v1::JobAssignment& job,
                                                const std::string& case_id) {
  auto env = BaseEnv(agent_env, job);
  env["ASCEND_RT_VISIBLE_DEVICES"] = std::to_string(job.device_id());
  if (job.case_selector().has_case_env()) env[job.case_selector().case_env()] = case_id;
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
