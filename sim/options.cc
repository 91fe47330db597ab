#include "sim/options.h"

#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace npuperf::sim {
namespace {

// Real msprof flags that change nothing the simulator models when off.
const std::set<std::string>& IgnoredFlags() {
  static const auto* s =
      new std::set<std::string>{"runtime-api", "model-execution", "hccl",       "storage-limit",
                                "msproftx",    "ge-api",          "task-memory"};
  return *s;
}

// Real msprof flags the simulator does not implement (unless set to off).
const std::set<std::string>& UnsupportedFlags() {
  static const auto* s = new std::set<std::string>{"l2",
                                                   "aicpu",
                                                   "parse",
                                                   "query",
                                                   "analyze",
                                                   "summary-format",
                                                   "clear",
                                                   "model-id",
                                                   "iteration-id",
                                                   "sys-devices",
                                                   "sys-period",
                                                   "sys-hardware-mem",
                                                   "sys-hardware-mem-freq",
                                                   "sys-cpu-profiling",
                                                   "sys-profiling",
                                                   "sys-pid-profiling",
                                                   "sys-io-profiling",
                                                   "sys-interconnection-profiling",
                                                   "dvpp-profiling",
                                                   "llc-profiling",
                                                   "host-sys",
                                                   "host-sys-usage",
                                                   "host-sys-usage-freq",
                                                   "python-path",
                                                   "rule",
                                                   "sys-lp",
                                                   "sys-lp-freq",
                                                   "delay",
                                                   "duration",
                                                   "mstx",
                                                   "mstx-domain-include",
                                                   "mstx-domain-exclude",
                                                   "op"};
  return *s;
}

absl::StatusOr<bool> OnOff(const std::string& flag, const std::string& v) {
  if (v == "on") return true;
  if (v == "off") return false;
  return absl::InvalidArgumentError(absl::StrCat("--", flag, " must be on or off, got '", v, "'"));
}

absl::Status SetTaskTime(SimOptions& o, const std::string& v, bool ai_core_set) {
  if (v == "off")
    o.task_time = TaskTimeLevel::kOff;
  else if (v == "l0")
    o.task_time = TaskTimeLevel::kL0;
  else if (v == "on" || v == "l1" || v == "l2" || v == "l3")
    o.task_time = TaskTimeLevel::kL1;
  else
    return absl::InvalidArgumentError(
        absl::StrCat("--task-time must be off, on, l0, l1, l2 or l3, got '", v, "'"));
  if (!ai_core_set) o.ai_core = o.task_time == TaskTimeLevel::kL1;
  return absl::OkStatus();
}

absl::Status SetAicFreq(SimOptions& o, const std::string& v) {
  if (!absl::SimpleAtoi(v, &o.aic_freq_hz) || o.aic_freq_hz < 1 || o.aic_freq_hz > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("--aic-freq must be an integer in 1..100, got '", v, "'"));
  }
  return absl::OkStatus();
}

absl::Status SetAicMode(SimOptions& o, const std::string& v) {
  if (v == "task-based")
    o.mode = AicMode::kTaskBased;
  else if (v == "sample-based")
    o.mode = AicMode::kSampleBased;
  else
    return absl::InvalidArgumentError(
        absl::StrCat("--aic-mode must be task-based or sample-based, got '", v, "'"));
  return absl::OkStatus();
}

absl::Status SetAiCore(SimOptions& o, const std::string& v, bool& ai_core_set) {
  absl::StatusOr<bool> b = OnOff("ai-core", v);
  if (!b.ok()) return b.status();
  o.ai_core = *b;
  ai_core_set = true;
  return absl::OkStatus();
}

absl::Status SetGroup(SimOptions& o, const std::string& v) {
  if (v.rfind("Custom:", 0) == 0 || v == "PipelineExecuteUtilization") {
    return absl::InvalidArgumentError(
        absl::StrCat("--aic-metrics=", v, " is not supported by msprof-sim"));
  }
  absl::StatusOr<MetricGroup> g = ParseMetricGroup(v);
  if (!g.ok()) return g.status();
  o.group = *g;
  return absl::OkStatus();
}

absl::Status SetApplication(SimOptions& o, const std::string& v) {
  absl::StatusOr<std::vector<std::string>> words = SplitCommandLine(v);
  if (!words.ok()) return words.status();
  if (words->empty()) return absl::InvalidArgumentError("--application is empty");
  o.app = *std::move(words);
  return absl::OkStatus();
}

absl::Status OtherFlag(const std::string& name, const std::string& value) {
  if (IgnoredFlags().count(name)) return absl::OkStatus();
  if (UnsupportedFlags().count(name)) {
    if (value == "off") return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat("--", name, " is not supported by msprof-sim"));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown option --", name, " (see --help)"));
}

absl::Status ApplyFlag(SimOptions& o, const std::string& name, const std::string& value,
                       bool& ai_core_set) {
  if (name == "output") {
    if (value.empty()) return absl::InvalidArgumentError("--output is empty");
    o.output = value;
    return absl::OkStatus();
  }
  if (name == "application") return SetApplication(o, value);
  if (name == "ai-core") return SetAiCore(o, value, ai_core_set);
  if (name == "aic-metrics") return SetGroup(o, value);
  if (name == "aic-mode") return SetAicMode(o, value);
  if (name == "aic-freq") return SetAicFreq(o, value);
  if (name == "task-time") return SetTaskTime(o, value, ai_core_set);
  if (name == "type") {
    if (value != "text" && value != "db") {
      return absl::InvalidArgumentError(
          absl::StrCat("--type must be text or db, got '", value, "'"));
    }
    o.db_only = value == "db";
    return absl::OkStatus();
  }
  if (name == "ascendcl" || name == "instr-profiling" || name == "export") {
    absl::StatusOr<bool> b = OnOff(name, value);
    if (b.ok())
      (name == "ascendcl" ? o.ascendcl : name == "export" ? o.export_only : o.instr_profiling) = *b;
    return b.status();
  }
  if (name == "reports") {
    if (value.empty()) return absl::InvalidArgumentError("--reports is empty");
    o.reports = value;
    return absl::OkStatus();
  }
  return OtherFlag(name, value);
}

// msprof op's flags (msprof app mode's others are refused there).
absl::Status ApplyOpFlag(SimOptions& o, const std::string& name, const std::string& value) {
  if (name == "output" || name == "application") {
    bool unused = false;
    return ApplyFlag(o, name, value, unused);
  }
  if (name == "kernel-name") {
    if (value.empty()) return absl::InvalidArgumentError("--kernel-name is empty");
    o.kernel_name = value;
    return absl::OkStatus();
  }
  if (name == "launch-count") {
    if (value != "1") {
      return absl::InvalidArgumentError(
          absl::StrCat("--launch-count=", value, " is not supported by msprof-sim (only 1)"));
    }
    return absl::OkStatus();
  }
  if (name == "aic-metrics") {
    o.op_groups.clear();
    for (absl::string_view g : absl::StrSplit(value, ',')) {
      absl::Status s = SetGroup(o, std::string(g));
      if (!s.ok()) return s;
      if (o.group == MetricGroup::kMemoryAccess) {
        return absl::InvalidArgumentError("--aic-metrics=MemoryAccess is not a msprof op metric");
      }
      o.op_groups.push_back(o.group);
    }
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--", name, " is not supported by msprof-sim op (see --help)"));
}

absl::Status CheckCombination(const SimOptions& o, bool app_given) {
  if (o.export_only) {
    if (app_given) return absl::InvalidArgumentError("--export=on takes no application");
    if (o.output.empty())
      return absl::InvalidArgumentError("--export=on needs --output=<PROF_* dir>");
    if (o.db_only) {
      // The collection already wrote its db (or not): a re-export checks the text export.
      return absl::InvalidArgumentError(
          "--export=on with --type=db: only text is re-exported (msprof-sim writes the db while it "
          "collects)");
    }
    return absl::OkStatus();
  }
  if (!o.reports.empty()) return absl::InvalidArgumentError("--reports needs --export=on");
  if (!app_given) {
    return absl::InvalidArgumentError(
        "no application given: msprof-sim supports app mode only (msprof-sim [options] <app> "
        "[args])");
  }
  if (o.mode == AicMode::kSampleBased && !o.ai_core) {
    return absl::InvalidArgumentError("--aic-mode=sample-based needs --ai-core=on");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SimOptions> ParseOptions(const std::vector<std::string>& args) {
  SimOptions o;
  bool ai_core_set = false;
  size_t i = 0;
  if (!args.empty() && args[0] == "op") {
    o.op_mode = true;
    i = 1;
  }
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--help" || a == "-h") {
      o.help = true;
      return o;
    }
    if (a == "--version") {
      o.version = true;
      return o;
    }
    if (a.rfind("--", 0) != 0) break;
    size_t eq = a.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("option ", a, " needs a value: ", a, "=<value>"));
    }
    absl::Status s = o.op_mode ? ApplyOpFlag(o, a.substr(2, eq - 2), a.substr(eq + 1))
                               : ApplyFlag(o, a.substr(2, eq - 2), a.substr(eq + 1), ai_core_set);
    if (!s.ok()) return s;
  }
  if (i < args.size()) {
    if (!o.app.empty())
      return absl::InvalidArgumentError(
          "give the application either with --application or trailing, not both");
    o.app.assign(args.begin() + static_cast<long>(i), args.end());
  }
  absl::Status s = CheckCombination(o, !o.app.empty());
  if (!s.ok()) return s;
  if (o.op_mode && o.op_groups.empty()) {
    for (MetricGroup g : {MetricGroup::kArithmeticUtilization, MetricGroup::kL2Cache,
                          MetricGroup::kMemory, MetricGroup::kMemoryL0, MetricGroup::kMemoryUB,
                          MetricGroup::kPipeUtilization, MetricGroup::kResourceConflictRatio}) {
      o.op_groups.push_back(g);
    }
  }
  return o;
}

absl::StatusOr<std::vector<std::string>> SplitCommandLine(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < text.size())
        cur += text[++i];
      else
        cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      cur += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (quote) return absl::InvalidArgumentError("unterminated quote in --application");
  if (in_word) out.push_back(std::move(cur));
  return out;
}

std::string UsageText() {
  return R"(msprof-sim: an msprof-compatible profiler simulator (no NPU needed).

Usage: msprof-sim [options] [--] <app> [app args...]
       msprof-sim [options] --application="<app> <args>"
       msprof-sim op [--output=<dir>] [--aic-metrics=<g1,g2,...>] [--kernel-name=<name>]
                     [--launch-count=1] <app> [app args...]    (msprof op: OPPROF_<ts>_<id>/)

Options (msprof syntax, --flag=value):
  --output=<dir>              directory that receives PROF_000001_<ts>_<id>/ (default: cwd)
  --ai-core=on|off            AI Core PMU (default: on when --task-time is on/l1)
  --instr-profiling=on|off    also write the instruction timeline (BIU Group lanes) and biu_perf.db
  --export=on --output=<PROF_*> [--type=text] [--reports=<json>]
                              re-export a collection (msprof-sim exports while collecting: this
                              checks the PROF_* and reports what it holds)
  --aic-metrics=<group>       PipeUtilization (default), ArithmeticUtilization, Memory,
                              MemoryL0, MemoryUB, ResourceConflictRatio, L2Cache,
                              MemoryAccess (A2/A3 only)
  --aic-mode=task-based|sample-based
  --aic-freq=<1..100>         sample rate in Hz for sample-based mode (default 100)
  --task-time=on|off|l0|l1|l2|l3
  --ascendcl=on|off           api_statistic (default on)
  --version, --help

The application reports its kernel launches through the file named by
MSPROF_SIM_LAUNCH_FILE (Python helper: `import msprof_sim`). Environment:
MSPROF_SIM_SOC_MAP, MSPROF_SIM_SEED, MSPROF_SIM_NOISE, MSPROF_SIM_DVFS,
MSPROF_SIM_FAULT, MSPROF_SIM_STATE_DIR, MSPROF_SIM_CONFLICT_LOG,
MSPROF_SIM_BLOCK_NAMING, MSPROF_SIM_LAYOUT, MSPROF_SIM_DEVICE_NODES, ASCEND_RT_VISIBLE_DEVICES,
TILE_FWK_DEVICE_ID. See docs/simulator.md.
)";
}

}  // namespace npuperf::sim
