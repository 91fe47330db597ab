#include "evidence/soc_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;

// Source of every row: the CANN platform_config ini files as published in
// hicann/runtime@681ef7610df13c8128982901142a2c869ddbb53e under
// src/platform/platform_config/{cann,cann-dev}/<SoC>.ini ([SoCInfo]
// ai_core_cnt, cube_core_cnt, vector_core_cnt, l2_size; [AICoreSpec]
// cube_freq; [VectorCoreSpec] vec_freq), collected in
// tests/evidence/testdata/real/PROVENANCE.md. Notes:
// - "Ascend910B" is not a row: msprof's NPU_INFO / CHIP_TABLE writes it as the
//   A2 family (Short_SoC_version of 910B1..B4-1), while the ini of that name
//   describes a first-generation 910 part; it is resolved as a family.
// - Ascend950PR_9599: the ini says 1800 MHz, a real msprof op capture of that
//   chip reports Rated Freq 1650; the capture's own Rated Freq wins.
// clang-format off
const std::vector<SocInfo> kTable = {
    {"Ascend910B1", "Ascend910B", 24, 24, 48, 1850, 0, 192},  // `cann/Ascend910B1.ini`
    {"Ascend910B2", "Ascend910B", 24, 24, 48, 1800, 0, 192},  // `cann/Ascend910B2.ini`
    {"Ascend910B2C", "Ascend910B", 24, 24, 48, 1800, 0, 192},  // `cann/Ascend910B2C.ini`
    {"Ascend910B3", "Ascend910B", 20, 20, 40, 1800, 0, 192},  // `cann/Ascend910B3.ini`
    {"Ascend910B4", "Ascend910B", 20, 20, 40, 1500, 0, 96},  // `cann/Ascend910B4.ini`
    {"Ascend910B4-1", "Ascend910B", 20, 20, 40, 1500, 0, 168},  // `cann/Ascend910B4-1.ini`
    {"Ascend910_9362", "Ascend910_93", 20, 20, 40, 1500, 0, 168},  // `cann/Ascend910_9362.ini`
    {"Ascend910_9363", "Ascend910_93", 20, 20, 40, 1500, 0, 168},  // `cann/Ascend910_9363.ini`
    {"Ascend910_9372", "Ascend910_93", 20, 20, 40, 1800, 0, 192},  // `cann/Ascend910_9372.ini`
    {"Ascend910_9381", "Ascend910_93", 24, 24, 48, 1800, 0, 192},  // `cann/Ascend910_9381.ini`
    {"Ascend910_9382", "Ascend910_93", 24, 24, 48, 1800, 0, 192},  // `cann/Ascend910_9382.ini`
    {"Ascend910_9391", "Ascend910_93", 24, 24, 48, 1850, 0, 192},  // `cann/Ascend910_9391.ini`
    {"Ascend910_9392", "Ascend910_93", 24, 24, 48, 1850, 0, 192},  // `cann/Ascend910_9392.ini`
    {"Ascend950DT_950x", "Ascend950", 8, 8, 16, 1650, 1650, 32},  // `cann-dev/Ascend950DT_950x.ini`
    {"Ascend950DT_950y", "Ascend950", 8, 8, 16, 1650, 1650, 32},  // `cann-dev/Ascend950DT_950y.ini`
    {"Ascend950DT_9571", "Ascend950", 28, 28, 56, 1650, 1650, 128},  // `cann-dev/Ascend950DT_9571.ini`
    {"Ascend950DT_9572", "Ascend950", 28, 28, 56, 1650, 1650, 128},  // `cann-dev/Ascend950DT_9572.ini`
    {"Ascend950DT_9573", "Ascend950", 28, 28, 56, 1650, 1650, 112},  // `cann-dev/Ascend950DT_9573.ini`
    {"Ascend950DT_9574", "Ascend950", 28, 28, 56, 1650, 1650, 112},  // `cann-dev/Ascend950DT_9574.ini`
    {"Ascend950DT_9575", "Ascend950", 28, 28, 56, 1650, 1650, 128},  // `cann-dev/Ascend950DT_9575.ini`
    {"Ascend950DT_9576", "Ascend950", 28, 28, 56, 1650, 1650, 128},  // `cann-dev/Ascend950DT_9576.ini`
    {"Ascend950DT_9577", "Ascend950", 28, 28, 56, 1650, 1650, 112},  // `cann-dev/Ascend950DT_9577.ini`
    {"Ascend950DT_9578", "Ascend950", 28, 28, 56, 1650, 1650, 112},  // `cann-dev/Ascend950DT_9578.ini`
    {"Ascend950DT_9581", "Ascend950", 32, 32, 64, 1650, 1650, 128},  // `cann-dev/Ascend950DT_9581.ini`
    {"Ascend950DT_9581x", "Ascend950", 32, 32, 64, 1650, 1650, 128},  // `cann-dev/Ascend950DT_9581x.ini`
    {"Ascend950DT_9582", "Ascend950", 32, 32, 64, 1650, 1650, 128},  // `cann-dev/Ascend950DT_9582.ini`
    {"Ascend950DT_9582x", "Ascend950", 32, 32, 64, 1650, 1650, 128},  // `cann-dev/Ascend950DT_9582x.ini`
    {"Ascend950DT_9583", "Ascend950", 32, 32, 64, 1650, 1650, 112},  // `cann-dev/Ascend950DT_9583.ini`
    {"Ascend950DT_9584", "Ascend950", 32, 32, 64, 1650, 1650, 112},  // `cann-dev/Ascend950DT_9584.ini`
    {"Ascend950DT_9585", "Ascend950", 32, 32, 64, 1650, 1650, 128},  // `cann-dev/Ascend950DT_9585.ini`
    {"Ascend950DT_9586", "Ascend950", 32, 32, 64, 1650, 1650, 128},  // `cann-dev/Ascend950DT_9586.ini`
    {"Ascend950DT_9587", "Ascend950", 32, 32, 64, 1650, 1650, 112},  // `cann-dev/Ascend950DT_9587.ini`
    {"Ascend950DT_9588", "Ascend950", 32, 32, 64, 1650, 1650, 112},  // `cann-dev/Ascend950DT_9588.ini`
    {"Ascend950DT_9591", "Ascend950", 36, 36, 72, 1800, 1800, 128},  // `cann-dev/Ascend950DT_9591.ini`
    {"Ascend950DT_9592", "Ascend950", 36, 36, 72, 1800, 1800, 128},  // `cann-dev/Ascend950DT_9592.ini`
    {"Ascend950DT_9595", "Ascend950", 36, 36, 72, 1800, 1800, 128},  // `cann-dev/Ascend950DT_9595.ini`
    {"Ascend950DT_9596", "Ascend950", 36, 36, 72, 1800, 1800, 128},  // `cann-dev/Ascend950DT_9596.ini`
    {"Ascend950DT_95A1", "Ascend950", 36, 36, 72, 1800, 1800, 128},  // `cann-dev/Ascend950DT_95A1.ini`
    {"Ascend950DT_95A2", "Ascend950", 36, 36, 72, 1800, 1800, 128},  // `cann-dev/Ascend950DT_95A2.ini`
    {"Ascend950PR_950z", "Ascend950", 4, 4, 8, 1650, 1650, 16},  // `cann-dev/Ascend950PR_950z.ini`
    {"Ascend950PR_9579", "Ascend950", 28, 28, 56, 1650, 1650, 128},  // `cann-dev/Ascend950PR_9579.ini`
    {"Ascend950PR_957b", "Ascend950", 28, 28, 56, 1650, 1650, 112},  // `cann-dev/Ascend950PR_957b.ini`
    {"Ascend950PR_957bx", "Ascend950", 28, 28, 56, 1650, 1650, 112},  // `cann-dev/Ascend950PR_957bx.ini`
    {"Ascend950PR_957c", "Ascend950", 28, 28, 56, 1650, 1650, 112},  // `cann-dev/Ascend950PR_957c.ini`
    {"Ascend950PR_957d", "Ascend950", 28, 28, 56, 1650, 1650, 96},  // `cann-dev/Ascend950PR_957d.ini`
    {"Ascend950PR_9589", "Ascend950", 32, 32, 64, 1650, 1650, 128},  // `cann-dev/Ascend950PR_9589.ini`
    {"Ascend950PR_958b", "Ascend950", 32, 32, 64, 1650, 1650, 112},  // `cann-dev/Ascend950PR_958b.ini`
    {"Ascend950PR_9599", "Ascend950", 36, 36, 72, 1800, 1800, 128},  // `cann-dev/Ascend950PR_9599.ini`
    {"Ascend310P1", "Ascend310P", 10, 0, 8, 1060, 1000, 16},  // `cann/Ascend310P1.ini`
    {"Ascend310P3", "Ascend310P", 8, 0, 7, 1060, 1000, 16},  // `cann/Ascend310P3.ini`
    {"Ascend310P5", "Ascend310P", 8, 0, 7, 800, 1000, 16},  // `cann/Ascend310P5.ini`
    {"Ascend310P7", "Ascend310P", 8, 0, 7, 550, 1000, 16},  // `cann/Ascend310P7.ini`
    {"Ascend350_354f", "Ascend350", 14, 14, 28, 1650, 1650, 56},  // `cann-dev/Ascend350_354f.ini`
    {"Ascend350_355e", "Ascend350", 16, 16, 32, 1650, 1650, 64},  // `cann-dev/Ascend350_355e.ini`
};
// clang-format on

bool Near(double a, double b, double rel) { return std::abs(a - b) <= rel * std::max(a, b); }

bool Matches(const SocInfo& s, const SocFacts& f) {
  if (f.cube_cores && *f.cube_cores != s.CubeSide()) return false;
  if (f.vector_cores && s.vector_cores > 0 && *f.vector_cores != s.vector_cores) return false;
  if (f.rated_mhz && !Near(*f.rated_mhz, s.rated_mhz, 0.01)) return false;
  if (f.rated_times_cube_cores &&
      !Near(*f.rated_times_cube_cores, s.rated_mhz * s.CubeSide(), 0.01))
    return false;
  return true;
}

bool HasFacts(const SocFacts& f) {
  return f.rated_mhz || f.cube_cores || f.vector_cores || f.rated_times_cube_cores;
}

std::string Describe(const SocInfo& s) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), "%.*s (%d/%d cores, %.0f MHz, L2 %d MiB)",
                static_cast<int>(s.name.size()), s.name.data(), s.CubeSide(), s.vector_cores,
                s.rated_mhz, s.l2_mib);
  return buf;
}

std::string DescribeAll(const std::vector<SocInfo>& socs) {
  std::string out;
  for (const SocInfo& s : socs) out += Cat(out.empty() ? "" : ", ", Describe(s));
  return out;
}

std::string FactsText(const SocFacts& f) {
  std::string out;
  auto add = [&out](const std::string& s) { out += Cat(out.empty() ? "" : ", ", s); };
  if (f.cube_cores) add(Cat(*f.cube_cores, " cube cores"));
  if (f.vector_cores) add(Cat(*f.vector_cores, " vector cores"));
  if (f.rated_mhz) add(Cat("rated ", *f.rated_mhz, " MHz (", f.rated_source, ")"));
  if (f.rated_times_cube_cores)
    add(Cat("clock x cube cores ", std::llround(*f.rated_times_cube_cores),
            " (from cube_utilization)"));
  return out;
}

// Table rows the request names: exact, else family or prefix.
std::vector<SocInfo> Named(std::string_view requested) {
  std::vector<SocInfo> out;
  if (std::optional<SocInfo> s = LookupSoc(requested)) return {*s};
  for (const SocInfo& s : kTable) {
    if (s.short_name == requested || internal::StartsWith(s.name, requested)) out.push_back(s);
  }
  return out;
}

// Sets the table clock when every candidate agrees on clock and cores.
void Settle(const std::vector<SocInfo>& c, std::string_view requested, SocResolution* r) {
  bool same = std::all_of(c.begin(), c.end(), [&](const SocInfo& s) {
    return s.rated_mhz == c[0].rated_mhz && s.CubeSide() == c[0].CubeSide() &&
           s.vector_cores == c[0].vector_cores;
  });
  if (c.size() == 1 || same) {
    r->soc = c[0];
    r->rated_mhz = c[0].rated_mhz;
    r->rated_source = Cat("soc table: ", c[0].name);
    if (c.size() > 1 && !requested.empty()) {
      r->warnings.push_back(Cat("SoC '", requested, "' may be any of ", DescribeAll(c),
                                "; they share the rated clock, which is used"));
    }
    return;
  }
  std::string who =
      requested.empty() ? std::string("the capture's device") : Cat("SoC '", requested, "'");
  std::string why =
      Cat(who, " is ambiguous: ", DescribeAll(c),
          "; no rated clock from the table (give the exact SoC, e.g. --soc ", c[0].name, ")");
  if (requested.empty()) {
    r->note = why;
  } else {
    r->warnings.push_back(why);
  }
}

}  // namespace

const std::vector<SocInfo>& SocTable() { return kTable; }

bool HasMemoryAccessGroup(std::string_view soc) {
  std::optional<SocInfo> row = LookupSoc(soc);
  return row && (row->short_name == "Ascend910B" || row->short_name == "Ascend910_93");
}

std::optional<SocInfo> LookupSoc(std::string_view name) {
  for (const SocInfo& s : kTable) {
    if (s.name == name) return s;
  }
  return std::nullopt;
}

double MaxRatedMhz() {
  double m = 0;
  for (const SocInfo& s : kTable) m = std::max(m, s.rated_mhz);
  return m;
}

SocResolution ResolveSoc(std::string_view requested, const SocFacts& facts) {
  SocResolution r;
  std::vector<SocInfo> named = requested.empty() ? kTable : Named(requested);
  if (!requested.empty() && named.empty()) {
    r.warnings.push_back(
        Cat("unknown SoC '", requested, "': not in the platform table, so no rated clock from it"));
  }
  std::vector<SocInfo> narrowed;
  for (const SocInfo& s : named) {
    if (Matches(s, facts)) narrowed.push_back(s);
  }
  if (HasFacts(facts) && narrowed.empty() && !named.empty()) {
    r.warnings.push_back(Cat("the capture (", FactsText(facts), ") matches no row of ",
                             requested.empty() ? "the platform table" : DescribeAll(named)));
    if (!requested.empty()) narrowed = named;
  }
  if (!narrowed.empty() && (!requested.empty() || HasFacts(facts))) {
    Settle(narrowed, requested, &r);
  }
  if (facts.rated_mhz && *facts.rated_mhz > 0) {
    if (r.soc && !Near(r.soc->rated_mhz, *facts.rated_mhz, 0.01)) {
      r.warnings.push_back(Cat("the capture's rated clock ", *facts.rated_mhz, " MHz (",
                               facts.rated_source, ") differs from the table's ", r.soc->rated_mhz,
                               " MHz for ", r.soc->name, "; the capture's own value is used"));
    }
    r.rated_mhz = *facts.rated_mhz;
    r.rated_source = Cat("capture: ", facts.rated_source);
  }
  return r;
}

}  // namespace npuperf::evidence
