#include "sim/npu_smi_sim.h"

#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/fault.h"
#include "sim/soc.h"

namespace npuperf::sim {
namespace {

using Kind = NpuSmiFault::Kind;

absl::Status BadItem(absl::string_view item, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("NPU_SMI_SIM_FAULT item '", item, "': ", why,
                   " (want warning, critical[@after=N] or lowclock:<MHz>, each optionally "
                   "@dev=<id>)"));
}

absl::Status ParseQualifier(absl::string_view q, absl::string_view item, NpuSmiFault& f) {
  std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(q, '=');
  int value = 0;
  if (!absl::SimpleAtoi(kv.second, &value) || value < 0) {
    return BadItem(item, absl::StrCat("@", kv.first, " needs a number >= 0"));
  }
  if (kv.first == "dev") {
    f.device = value;
  } else if (kv.first == "after" && f.kind == Kind::kCritical) {
    f.after = value;
  } else {
    return BadItem(item, absl::StrCat("unknown qualifier @", kv.first));
  }
  return absl::OkStatus();
}

absl::Status ParseBody(absl::string_view body, absl::string_view item, NpuSmiFault& f) {
  std::vector<absl::string_view> p = absl::StrSplit(body, ':');
  if (p.size() == 1 && p[0] == "warning") {
    f.kind = Kind::kWarning;
  } else if (p.size() == 1 && p[0] == "critical") {
    f.kind = Kind::kCritical;
  } else if (p.size() == 2 && p[0] == "lowclock") {
    f.kind = Kind::kLowClock;
    if (!absl::SimpleAtod(p[1], &f.mhz) || !(f.mhz >= 1 && f.mhz <= 10'000)) {
      return BadItem(item, "lowclock needs a clock in MHz (1..10000)");
    }
  } else {
    return BadItem(item, "unknown fault");
  }
  return absl::OkStatus();
}

// The device's facts: its SoC (MSPROF_SIM_SOC_MAP, as msprof-sim reads it for
// that physical device) and the state dir of the fault counters.
absl::StatusOr<SimEnv> DeviceEnv(const EnvLookup& env, int device) {
  EnvLookup one = [&env, device](absl::string_view name) -> std::optional<std::string> {
    if (name == "TILE_FWK_DEVICE_ID") return std::to_string(device);
    if (name == "ASCEND_RT_VISIBLE_DEVICES" || name == "MSPROF_SIM_FAULT") return std::nullopt;
    return env(name);
  };
  return ReadSimEnv(one);
}

const NpuSmiFault* FaultOf(const std::vector<NpuSmiFault>& faults, Kind kind, int device) {
  for (const NpuSmiFault& f : faults) {
    if (f.kind == kind && (f.device < 0 || f.device == device)) return &f;
  }
  return nullptr;
}

// A critical@after=N item counts the device's health queries: critical from
// the (N+1)-th on.
bool CriticalNow(const NpuSmiFault* f, int device, const SimEnv& sim) {
  if (f == nullptr) return false;
  if (f->after == 0) return true;
  return BumpCounter(absl::StrCat("npu-smi|", f->text, "|", device), sim.state_dir) >= f->after;
}

void Line(std::ostream& out, absl::string_view key, absl::string_view value) {
  out << absl::StrFormat("\t%-30s : %s\n", key, value);
}

void PrintHealth(const std::vector<NpuSmiFault>& faults, int device, const SimEnv& sim,
                 std::ostream& out) {
  if (CriticalNow(FaultOf(faults, Kind::kCritical, device), device, sim)) {
    Line(out, "Health Status", "Critical");
    Line(out, "Error Code", "80CB8002");
    Line(out, "Error Information", "node type=HBM, sensor type=Memory, event state=multi-bit ECC");
  } else if (FaultOf(faults, Kind::kWarning, device) != nullptr) {
    Line(out, "Health Status", "Warning");
    Line(out, "Error Code", "80E01801");
    Line(out, "Error Information", "node type=SoC, sensor type=Temperature, event state=high");
  } else {
    Line(out, "Health Status", "OK");
    Line(out, "Error Code", "NA");
    Line(out, "Error Information", "NA");
  }
}

// The chip section: the rated and current clock (lowclock lowers the current
// one), the AI Core (cube) count, a temperature and power that depend on the
// device id only, so that two queries agree.
void PrintCommon(const std::vector<NpuSmiFault>& faults, int device, const SocSpec& soc,
                 std::ostream& out) {
  const NpuSmiFault* low = FaultOf(faults, Kind::kLowClock, device);
  const double rated = soc.freq_mhz;
  const double current = low != nullptr ? low->mhz : rated;
  Line(out, "NPU ID", std::to_string(device));
  Line(out, "Chip Count", "1");
  out << "\n";
  Line(out, "Chip ID", "0");
  Line(out, "Memory Usage Rate(%)", "0");
  Line(out, "HBM Usage Rate(%)", "3");
  Line(out, "Aicore Usage Rate(%)", "0");
  Line(out, "Aicore Freq(MHZ)", absl::StrFormat("%.0f", rated));
  Line(out, "Aicore curFreq(MHZ)", absl::StrFormat("%.0f", current));
  Line(out, "Aicore Count", std::to_string(soc.cube_cores));
  Line(out, "Temperature(C)", std::to_string(40 + device % 8));
  Line(out, "NPU Real-time Power(W)", absl::StrFormat("%.1f", 90.0 + 2.5 * (device % 8)));
  out << "\n";
  Line(out, "Chip Name", "mcu");
  Line(out, "Temperature(C)", std::to_string(36 + device % 4));
}

constexpr char kUsage[] =
    "Usage: npu-smi info -t <health|common> -i <id>\n"
    "(npu-smi-sim answers only the queries npuperf-agent makes)\n";

}  // namespace

absl::StatusOr<std::vector<NpuSmiFault>> ParseNpuSmiFaults(absl::string_view spec) {
  std::vector<NpuSmiFault> out;
  for (absl::string_view item : absl::StrSplit(spec, ';', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    NpuSmiFault f;
    f.text = std::string(item);
    std::vector<absl::string_view> parts = absl::StrSplit(item, '@');
    if (absl::Status s = ParseBody(parts[0], item, f); !s.ok()) return s;
    for (size_t i = 1; i < parts.size(); ++i) {
      if (absl::Status s = ParseQualifier(parts[i], item, f); !s.ok()) return s;
    }
    out.push_back(std::move(f));
  }
  return out;
}

int RunNpuSmi(const std::vector<std::string>& args, const EnvLookup& env, std::ostream& out,
              std::ostream& err) {
  int device = -1;
  const bool shape = args.size() == 5 && args[0] == "info" && args[1] == "-t" && args[3] == "-i";
  if (!shape || (args[2] != "health" && args[2] != "common")) {
    err << "Error parameter of -t or command. " << kUsage;
    return 1;
  }
  if (!absl::SimpleAtoi(args[4], &device) || device < 0) {
    err << "Error parameter of -i: " << args[4] << "\n";
    return 1;
  }
  absl::StatusOr<std::vector<NpuSmiFault>> faults =
      ParseNpuSmiFaults(env("NPU_SMI_SIM_FAULT").value_or(""));
  absl::StatusOr<SimEnv> sim = DeviceEnv(env, device);
  absl::StatusOr<SocSpec> soc = sim.ok() ? FindSoc(sim->soc) : sim.status();
  if (!faults.ok() || !soc.ok()) {
    err << "npu-smi-sim: " << (faults.ok() ? soc.status() : faults.status()).message() << "\n";
    return 1;
  }
  if (args[2] == "health") {
    PrintHealth(*faults, device, *sim, out);
  } else {
    PrintCommon(*faults, device, *soc, out);
  }
  return 0;
}

}  // namespace npuperf::sim
