#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "npuperf/v1/agent_service.pb.h"

namespace npuperf::agent {

// Variables passed from the agent's own environment to runners; nothing else
// leaks. Exact names, plus every name starting with one of the prefixes
// (CANN toolkit and simulator configuration).
inline constexpr const char* kEnvAllowList[] = {
    "PATH",       "HOME", "LANG",   "LC_ALL", "TZ", "TMPDIR", "LD_LIBRARY_PATH",
    "PYTHONPATH", "USER", "LOGNAME"};
inline constexpr const char* kEnvAllowPrefixes[] = {"ASCEND_HOME", "ASCEND_TOOLKIT", "ASCEND_OPP",
                                                    "ASCEND_AICPU", "MSPROF_SIM_"};

// The runner's environment for one job: the allow-listed agent variables,
// then the device selection (ASCEND_RT_VISIBLE_DEVICES=<id>, or for manifest
// collections TILE_FWK_DEVICE_ID=<id> with the mask removed), the seed
// (PYPTO_PERF_SEED, PYTHONHASHSEED), PYPTO_PERF_COLLECTION_ID and the case
// env selector when used and allowed (EnvNameProblem: a reserved name is
// never set, whatever the assignment says; CheckJobInputs fails such a job).
std::map<std::string, std::string> RunnerEnv(const std::map<std::string, std::string>& agent_env,
                                             const v1::JobAssignment& job);

// The same for the selector preflight, which always uses the visibility
// mask shape (reference-scripts.md §6.2).
std::map<std::string, std::string> PreflightEnv(const std::map<std::string, std::string>& agent_env,
                                                const v1::JobAssignment& job,
                                                const std::string& case_id);

// The assignment's untrusted names, checked again on the agent before they
// are used (the server checked them at submission; common/input_rules.h is
// the one rule): case_env is a plain, unreserved variable name and
// manifest_path a normalised relative path inside the bundle.
// INVALID_ARGUMENT naming the field otherwise (a failure no retry fixes).
absl::Status CheckJobInputs(const v1::JobAssignment& job);

// The bytes of a file of the unpacked bundle at `relative` (a path
// BundlePathProblem accepts), opened component by component below
// operator_dir with O_NOFOLLOW: a symlink anywhere on the way, a file that
// is not regular, or one larger than max_bytes is refused. Errors name the
// field and the relative path only, never a host path: "manifest_path: not
// found in the bundle".
absl::StatusOr<std::string> ReadBundleFile(const std::filesystem::path& operator_dir,
                                           const std::string& relative, const std::string& field,
                                           size_t max_bytes);

// The runner script: job.runner, else the only test_*.py in the directory.
absl::StatusOr<std::filesystem::path> FindRunner(const std::filesystem::path& operator_dir,
                                                 const std::string& runner);

// The application argv: [python] runner [case_arg case_id].
std::vector<std::string> RunnerArgv(const std::string& python, const std::filesystem::path& runner,
                                    const v1::JobAssignment& job, const std::string& case_id);

// The process environment as a map.
std::map<std::string, std::string> CurrentEnvironment();

}  // namespace npuperf::agent
