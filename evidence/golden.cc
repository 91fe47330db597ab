#include "evidence/golden.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "evidence/csv_reader.h"
#include "evidence/str_util.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;
using Json = nlohmann::json;

absl::Status Bad(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

// An int (not bool) >= min, or "Golden <name> must be an integer >= <min>".
absl::StatusOr<int64_t> GoldenInt(const Json& j, const char* name, int64_t min) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_number_integer() || it->get<int64_t>() < min) {
    return Bad(Cat("Golden ", name, " must be an integer >= ", min));
  }
  return it->get<int64_t>();
}

absl::StatusOr<SourceRecord> Record(const Json& j, const char* key, std::string_view label) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return Bad(Cat(label, " source record is missing"));
  const Json& r = *it;
  SourceRecord out;
  if (!r.contains("path") || !r["path"].is_string())
    return Bad(Cat(label, " source path is missing"));
  out.path = r["path"].get<std::string>();
  if (!r.contains("sha256") || !r["sha256"].is_string())
    return Bad(Cat(label, " source sha256 is invalid"));
  out.sha256 = r["sha256"].get<std::string>();
  if (!r.contains("size_bytes") || !r["size_bytes"].is_number_integer() || r["size_bytes"] < 0) {
    return Bad(Cat(label, " source size_bytes is invalid"));
  }
  out.size_bytes = r["size_bytes"].get<int64_t>();
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

absl::StatusOr<GoldenCase> ParseGoldenCase(const Json& c, size_t i, int64_t repeats,
                                           int64_t iterations) {
  std::string where = Cat("Golden cases[", i, "]");
  if (!c.is_object()) return Bad(Cat(where, " must be an object"));
  GoldenCase g;
  for (auto [key, dest] : {std::pair{"id", &g.id}, {"shape", &g.shape}, {"dtype", &g.dtype}}) {
    auto it = c.find(key);
    std::string v = it != c.end() && it->is_string() ? it->get<std::string>() : "";
    v.erase(0, v.find_first_not_of(" \t\r\n"));
    v.erase(v.find_last_not_of(" \t\r\n") + 1);
    if (v.empty()) return Bad(Cat(where, ".", key, " must be non-empty"));
    *dest = v;
  }
  auto raw = c.find("raw_repeat_e2e_us");
  bool ok = raw != c.end() && raw->is_array() && static_cast<int64_t>(raw->size()) == repeats;
  for (size_t k = 0; ok && k < raw->size(); ++k) {
    const Json& v = (*raw)[k];
    ok = v.is_number() && !v.is_boolean() && std::isfinite(v.get<double>()) && v.get<double>() > 0;
    if (ok) g.raw_repeat_e2e_us.push_back(v.get<double>());
  }
  if (!ok)
    return Bad(
        Cat("Golden case '", g.id, "' must contain ", repeats, " positive finite raw repeats"));
  auto med = c.find("median_total_us");
  if (med == c.end() || !med->is_number() ||
      !IsClose(med->get<double>(), Median(g.raw_repeat_e2e_us))) {
    return Bad(Cat("Golden case '", g.id, "' median is not reproducible"));
  }
  g.median_total_us = med->get<double>();
  auto per = c.find("per_iteration_e2e_us");
  if (per == c.end() || !per->is_number() ||
      !IsClose(per->get<double>(), g.median_total_us / static_cast<double>(iterations))) {
    return Bad(Cat("Golden case '", g.id, "' per-iteration E2E is not reproducible"));
  }
  g.per_iteration_e2e_us = per->get<double>();
  return g;
}

absl::Status ParseProtocol(const Json& j, GoldenContract* g) {
  auto v = j.find("schema_version");
  if (v == j.end() || !v->is_number_integer() || *v != 1) {
    return Bad("GOLDEN_PERF_REPORT.json must use schema_version=1");
  }
  for (auto [name, min, dest] : {std::tuple{"device_id", 0, &g->device_id},
                                 {"iterations", 1, &g->iterations},
                                 {"warmup", 0, &g->warmup},
                                 {"repeats", 1, &g->repeats},
                                 {"seed", 0, &g->seed}}) {
    absl::StatusOr<int64_t> n = GoldenInt(j, name, min);
    if (!n.ok()) return n.status();
    *dest = *n;
  }
  if (g->iterations != 1) return Bad("Stage 5 Golden iterations must be exactly 1");
  if (g->seed != 42) return Bad("Golden seed must be 42");
  g->timing_scope = j.value("timing_scope", "");
  if (g->timing_scope != "all_golden_npu_kernels") {
    return Bad("Golden timing_scope must be all_golden_npu_kernels");
  }
  g->aggregation = j.value("aggregation", "");
  if (g->aggregation != "median_of_repeat_totals") {
    return Bad("Golden aggregation must be median_of_repeat_totals");
  }
  return absl::OkStatus();
}

}  // namespace

bool IsClose(double a, double b) {
  return std::abs(a - b) <= std::max(1e-9 * std::max(std::abs(a), std::abs(b)), 1e-6);
}

absl::StatusOr<GoldenContract> ParseGoldenContract(std::string_view bytes, bool verify_files) {
  Json j = Json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Bad("cannot load GOLDEN_PERF_REPORT.json: not a JSON object");
  }
  GoldenContract g;
  absl::Status s = ParseProtocol(j, &g);
  if (!s.ok()) return s;
  absl::StatusOr<SourceRecord> golden = Record(j, "golden_source", "Golden");
  if (!golden.ok()) return golden.status();
  g.golden_source = *golden;
  if (verify_files) {
    s = VerifySourceRecord("Golden", g.golden_source);
    if (!s.ok()) return s;
  }
  absl::StatusOr<SourceRecord> manifest = Record(j, "case_manifest_source", "Golden case manifest");
  if (!manifest.ok()) return manifest.status();
  g.case_manifest_source = *manifest;
  const Json& cms = j["case_manifest_source"];
  g.case_manifest_schema_version = cms.value("schema_version", 0);
  auto cases = j.find("cases");
  if (cases == j.end() || !cases->is_array() || cases->empty()) {
    return Bad("Golden cases must be a non-empty list");
  }
  std::set<std::string> ids;
  for (size_t i = 0; i < cases->size(); ++i) {
    absl::StatusOr<GoldenCase> c = ParseGoldenCase((*cases)[i], i, g.repeats, g.iterations);
    if (!c.ok()) return c.status();
    if (!ids.insert(c->id).second)
      return Bad(Cat("Golden contains duplicate case id '", c->id, "'"));
    g.cases.push_back(std::move(*c));
  }
  return g;
}

absl::StatusOr<GoldenContract> LoadGoldenContract(const fs::path& path) {
  absl::StatusOr<SourceRecord> record = RecordOf(path);
  if (!record.ok()) {
    return absl::Status(record.status().code(), Cat("cannot load GOLDEN_PERF_REPORT.json: ",
                                                    internal::Msg(record.status())));
  }
  std::ifstream in(record->path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  absl::StatusOr<GoldenContract> g = ParseGoldenContract(bytes, /*verify_files=*/false);
  if (!g.ok()) return g;
  g->source = *record;
  // A relocated operator directory carries the golden source beside the
  // contract; only without such a file is the recorded absolute path used.
  SourceRecord golden = g->golden_source;
  const fs::path beside = fs::path(record->path).parent_path() / fs::path(golden.path).filename();
  std::error_code ec;
  if (fs::path(golden.path).is_absolute() && fs::is_regular_file(beside, ec)) {
    golden.path = fs::canonical(beside, ec).string();
  }
  absl::Status s = VerifySourceRecord("Golden", golden);
  if (!s.ok()) return s;
  return g;
}

absl::StatusOr<std::map<std::string, double>> JoinGolden(const CaseManifest& manifest,
                                                         const GoldenContract& contract) {
  std::set<std::string> want, have;
  for (const PerfCase& c : manifest.cases) want.insert(c.id);
  for (const GoldenCase& c : contract.cases) have.insert(c.id);
  if (want != have) {
    std::string missing, extra;
    for (const std::string& id : want) {
      if (!have.count(id)) missing += Cat(missing.empty() ? "'" : ", '", id, "'");
    }
    for (const std::string& id : have) {
      if (!want.count(id)) extra += Cat(extra.empty() ? "'" : ", '", id, "'");
    }
    return Bad(
        Cat("case id mismatch between --case-manifest and GOLDEN_PERF_REPORT.json: "
            "missing_in_golden=[",
            missing, "], extra_in_golden=[", extra, "]"));
  }
  std::map<std::string, double> out;
  for (const PerfCase& c : manifest.cases) {
    auto g = std::find_if(contract.cases.begin(), contract.cases.end(),
                          [&](const GoldenCase& x) { return x.id == c.id; });
    if (!ShapesEqual(c.shape, g->shape)) {
      return Bad(Cat("case '", c.id, "' shape mismatch between manifest and Golden contract"));
    }
    if (!DtypesEqual(c.dtype, g->dtype)) {
      return Bad(Cat("case '", c.id, "' dtype mismatch between manifest and Golden contract"));
    }
    out[c.id] = g->per_iteration_e2e_us;
  }
  // The manifest is matched by content and file name, not by absolute path: an
  // operator directory is bundled and unpacked elsewhere (docs/evidence.md,
  // "Reference bugs fixed on purpose").
  const SourceRecord& a = contract.case_manifest_source;
  const SourceRecord& b = manifest.source;
  if (fs::path(a.path).filename() != fs::path(b.path).filename() || a.sha256 != b.sha256 ||
      a.size_bytes != b.size_bytes ||
      contract.case_manifest_schema_version != manifest.schema_version) {
    return absl::FailedPreconditionError(
        "Golden contract was not collected from this exact case manifest");
  }
  return out;
}

GoldenRatio ComputeGoldenRatio(std::optional<double> golden_us, double kernel_us) {
  GoldenRatio r;
  if (!golden_us) return r;
  r.golden_us = *golden_us;
  r.kernel_us = kernel_us;
  if (!(std::isfinite(*golden_us) && *golden_us > 0)) {
    r.status = GoldenStatus::kMismatch;
    r.mismatch = "golden time is not positive finite";
  } else if (!(std::isfinite(kernel_us) && kernel_us > 0)) {
    r.status = GoldenStatus::kMismatch;
    r.mismatch = "kernel time is not positive finite";
  } else {
    r.ratio = *golden_us / kernel_us;
    r.status = GoldenStatus::kJoined;
  }
  return r;
}

}  // namespace npuperf::evidence
