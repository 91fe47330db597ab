#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}  // namespace CLI

// Offline subcommands of `npuperf` (no server needed), over the evidence
// library:
//
//   npuperf summarize <INPUT> <ops_dir> --op-name X [--round-name round_NNN]
//                     [--format text|json|md] [--lang en|zh] [--soc SOC] [--device N]
//                     [--launch unique|all|N|-N|task:S/T] [--quick]
//                     [--tile-dag-attestation FILE]
//   npuperf list-op-names <INPUT>
//
// INPUT is anything the layout detector (evidence/layout.h) reads: a
// PROF_GROUP, one PROF_* run (or the --output holding it), an msprof op
// OPPROF_* dir or a torch_npu *_ascend_pt dir.
//
// Exit codes: 0 ok, 1 evidence error (message on stderr as "[ERROR] ..."),
// 2 usage error. CLI11 parse errors (missing positional, bad --format) are
// raised by CLI11 itself; main.cc maps them to 2.
namespace npuperf::client {

struct SummarizeArgs {
  std::filesystem::path prof_group;
  std::filesystem::path ops_dir;
  std::string op_name;
  // Default: "" (lowest free round_NNN).
  std::string round_name;
  // "text" (summary.txt), "json" (evidence.json) or "md". Default: text.
  std::string format = "text";
  // "en" or "zh" (summary.txt wording). Default: en.
  std::string lang = "en";
  // SoC for the DVFS check, e.g. Ascend910B2. Default: "" (unknown).
  std::string soc;
  // Device whose sample db to use when several exist. Default: -1 (the only one).
  int device = -1;
  // Launch selector (evidence/launch.h). Default: "" (unique).
  std::string launch;
  // Quick mode (task_time of one run; --op-name optional: the one kernel
  // that is not incidental). Default: false (standard mode).
  bool quick = false;
  // A Tile-DAG attestation JSON (evidence/roofline.h ReadTileDagAttestation):
  // the only way the pipeline evidence becomes proven. Default: none.
  std::filesystem::path tile_dag;
};

// Registers `summarize` and `list-op-names` on `app`. When a subcommand runs
// it sets `exit_code` (0/1/2) and writes to std::cout / std::cerr.
// `app` and `exit_code` must outlive app.parse().
void AddOfflineCommands(CLI::App& app, int& exit_code);

// The subcommands themselves, with injectable streams (used by the CLI
// callbacks and by tests). Return the exit code.
int RunSummarize(const SummarizeArgs& args, std::ostream& out, std::ostream& err);
// `launches_of` non-empty: every launch of that exact name instead (TSV:
// index, stream_id, task_id, start_us exact, duration_us, where). An empty
// prof_group is a usage error (2).
int RunListOpNames(const std::filesystem::path& prof_group, std::ostream& out, std::ostream& err,
                   const std::string& launches_of = "");

}  // namespace npuperf::client
