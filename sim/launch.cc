#include "sim/launch.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace npuperf::sim {
namespace {

constexpr std::pair<TaskType, absl::string_view> kTaskNames[] = {
    {TaskType::kAiCore, "AI_CORE"}, {TaskType::kAiVectorCore, "AI_VECTOR_CORE"},
    {TaskType::kMixAic, "MIX_AIC"}, {TaskType::kMixAiv, "MIX_AIV"},
    {TaskType::kAiCpu, "AI_CPU"},
};

using Setter = std::function<absl::Status(Launch&, absl::string_view)>;

absl::StatusOr<double> ParseNumber(absl::string_view key, absl::string_view value) {
  double d = 0;
  if (!absl::SimpleAtod(value, &d) || !std::isfinite(d) || d < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad value '", value, "' for ", key, " (want a finite number >= 0)"));
  }
  return d;
}

Setter Num(double Workload::*field) {
  return [field](Launch& l, absl::string_view v) -> absl::Status {
    absl::StatusOr<double> d = ParseNumber("workload", v);
    if (!d.ok()) return d.status();
    l.work.*field = *d;
    return absl::OkStatus();
  };
}

Setter Text(std::string Launch::*field) {
  return [field](Launch& l, absl::string_view v) -> absl::Status {
    l.*field = std::string(v);
    return absl::OkStatus();
  };
}

Setter Int(int Launch::*field, int min) {
  return [field, min](Launch& l, absl::string_view v) -> absl::Status {
    int n = 0;
    if (!absl::SimpleAtoi(v, &n) || n < min) {
      return absl::InvalidArgumentError(absl::StrCat("bad integer '", v, "' (want >= ", min, ")"));
    }
    l.*field = n;
    return absl::OkStatus();
  };
}

absl::Status SetTask(Launch& l, absl::string_view v) {
  absl::StatusOr<TaskType> t = ParseTaskType(v);
  if (!t.ok()) return t.status();
  l.task_type = *t;
  return absl::OkStatus();
}

absl::Status SetHostNs(Launch& l, absl::string_view v) {
  int64_t ns = 0;
  if (!absl::SimpleAtoi(v, &ns) || ns < 0) return absl::InvalidArgumentError("bad t");
  l.host_ns = ns;
  return absl::OkStatus();
}

const std::map<absl::string_view, Setter>& Setters() {
  static const auto* setters = new std::map<absl::string_view, Setter>{
      {"op", Text(&Launch::op_name)},
      {"type", Text(&Launch::op_type)},
      {"state", Text(&Launch::op_state)},
      {"hf32", Text(&Launch::hf32)},
      {"task", SetTask},
      {"blocks", Int(&Launch::block_num, 1)},
      {"mix", Int(&Launch::mix_block_num, 0)},
      {"count", Int(&Launch::count, 1)},
      {"pypto", Int(&Launch::pypto, 0)},
      {"t", SetHostNs},
      {"in_shapes", Text(&Launch::in_shapes)},
      {"in_dtypes", Text(&Launch::in_dtypes)},
      {"in_formats", Text(&Launch::in_formats)},
      {"out_shapes", Text(&Launch::out_shapes)},
      {"out_dtypes", Text(&Launch::out_dtypes)},
      {"out_formats", Text(&Launch::out_formats)},
      {"gm_to_ub", Num(&Workload::gm_to_ub)},
      {"gm_to_l1", Num(&Workload::gm_to_l1)},
      {"ub_to_gm", Num(&Workload::ub_to_gm)},
      {"l0c_to_gm", Num(&Workload::l0c_to_gm)},
      {"cube_fp16", Num(&Workload::cube_fp16)},
      {"cube_int8", Num(&Workload::cube_int8)},
      {"vec_fp32", Num(&Workload::vec_fp32)},
      {"vec_fp16", Num(&Workload::vec_fp16)},
      {"vec_int32", Num(&Workload::vec_int32)},
      {"vec_misc", Num(&Workload::vec_misc)},
      {"scalar", Num(&Workload::scalar)},
      {"l2_hit", Num(&Workload::l2_hit)},
      {"bank_conflict", Num(&Workload::bank_conflict)},
      {"skew", Num(&Workload::skew)},
      {"icache_miss", Num(&Workload::icache_miss)},
      {"overlap", Num(&Workload::overlap)},
  };
  return *setters;
}

absl::Status Validate(const Launch& l) {
  if (l.op_name.empty()) return absl::InvalidArgumentError("launch without op=");
  const Workload& w = l.work;
  if (w.l2_hit > 1 || w.skew > 1 || w.icache_miss > 1 || w.overlap > 1 || w.bank_conflict > 4) {
    return absl::InvalidArgumentError("l2_hit, skew, icache_miss and overlap must be <= 1");
  }
  bool mix = l.task_type == TaskType::kMixAic || l.task_type == TaskType::kMixAiv;
  if (mix && l.mix_block_num < 1) {
    return absl::InvalidArgumentError("MIX task needs mix=<blocks of the secondary core> >= 1");
  }
  if (l.pypto >= 0 && l.task_type != TaskType::kMixAic) {
    return absl::InvalidArgumentError(
        "pypto=<n> needs task=MIX_AIC (PyPTO's kernel is tilefwk_<n>_mix_aic)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::string_view TaskTypeName(TaskType type) {
  for (const auto& [t, name] : kTaskNames) {
    if (t == type) return name;
  }
  return "AI_CORE";
}

absl::StatusOr<TaskType> ParseTaskType(absl::string_view name) {
  for (const auto& [t, n] : kTaskNames) {
    if (n == name) return t;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown task type '", name, "' (want AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV, AI_CPU)"));
}

std::string SummaryName(const Launch& l) {
  return l.pypto >= 0 ? absl::StrCat("PYPTO_", l.op_name) : l.op_name;
}

std::string KernelName(const Launch& l) {
  return l.pypto >= 0 ? absl::StrCat("tilefwk_", l.pypto, "_mix_aic") : l.op_name;
}

absl::StatusOr<Launch> ParseLaunchLine(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  if (line.empty() || line[0] == '#') return absl::NotFoundError("no launch");
  std::vector<absl::string_view> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
  if (words[0] != "launch") {
    return absl::InvalidArgumentError(
        absl::StrCat("line must start with 'launch', got '", words[0], "'"));
  }
  Launch l;
  for (size_t i = 1; i < words.size(); ++i) {
    std::vector<absl::string_view> kv = absl::StrSplit(words[i], absl::MaxSplits('=', 1));
    auto it = kv.size() == 2 ? Setters().find(kv[0]) : Setters().end();
    if (it == Setters().end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown field '", words[i], "'"));
    }
    absl::Status s = it->second(l, kv[1]);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(kv[0], ": ", s.message()));
  }
  if (l.op_type.empty()) l.op_type = SummaryName(l);
  absl::Status s = Validate(l);
  if (!s.ok()) return s;
  return l;
}

absl::StatusOr<std::vector<Launch>> ReadLaunchFile(const std::filesystem::path& path) {
  std::vector<Launch> out;
  std::ifstream in(path);
  if (!in) return out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    absl::StatusOr<Launch> l = ParseLaunchLine(line);
    if (absl::IsNotFound(l.status())) continue;
    if (!l.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path.string(), ":", n, ": ", l.status().message()));
    }
    out.push_back(*std::move(l));
  }
  return out;
}

}  // namespace npuperf::sim
