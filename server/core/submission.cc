#include "server/core/submission.h"

#include <iterator>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/device_range.h"
#include "common/input_rules.h"
#include "common/sha256.h"
#include "evidence/cases.h"
#include "evidence/launch.h"
#include "google/protobuf/util/message_differencer.h"

namespace npuperf::server {
namespace {

using Violations = std::vector<FieldViolation>;

bool NameChar(char c, bool lower_only) {
  if (c >= 'a' && c <= 'z') return true;
  if (c >= '0' && c <= '9') return true;
  if (c == '_' || c == '.' || c == '-') return true;
  return !lower_only && c >= 'A' && c <= 'Z';
}

// 1..max of [A-Za-z0-9_.-] (lower_only: [a-z0-9_.-]).
bool ValidName(const std::string& s, size_t max, bool lower_only = false) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s) {
    if (!NameChar(c, lower_only)) return false;
  }
  return true;
}

// "prefix[key]" for a map entry; a key that is not a short printable line
// is not echoed.
std::string KeyField(const std::string& prefix, const std::string& key) {
  if (key.size() <= 64 && IsPrintableLine(key)) return absl::StrCat(prefix, "[", key, "]");
  return prefix + "[?]";
}

void CheckRange(Violations& out, const std::string& field, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    out.push_back({field, absl::StrCat("must be in ", lo, "..", hi, ", got ", v)});
  }
}

// A count over its limit is reported once; the caller then checks only the
// first `max` items, so a huge request costs bounded work.
bool CheckCount(Violations& out, const std::string& field, int n, int max) {
  if (n <= max) return true;
  out.push_back({field, absl::StrCat("at most ", max, " entries, got ", n)});
  return false;
}

void CheckKernelName(Violations& out, const std::string& field, const std::string& name) {
  if (name.empty() || name.size() > kMaxOpNameBytes || !IsPrintableLine(name)) {
    out.push_back({field, absl::StrCat("must be 1..", kMaxOpNameBytes,
                                       " bytes of printable text (the exact kernel name)")});
  }
}

void CheckPath(Violations& out, const std::string& field, const std::string& path) {
  if (path.empty()) return;
  const std::string problem = BundlePathProblem(path, kMaxBundlePathBytes);
  if (!problem.empty()) out.push_back({field, problem});
}

void CheckCases(const v1::OperatorSpec& op, const std::string& f, Violations& out) {
  if (!CheckCount(out, f + ".case_ids", op.case_ids_size(), kMaxCasesPerOperator)) return;
  std::set<std::string> seen;
  for (int i = 0; i < op.case_ids_size(); ++i) {
    const std::string& id = op.case_ids(i);
    const std::string cf = absl::StrCat(f, ".case_ids[", i, "]");
    if (!ValidName(id, kMaxCaseIdBytes)) {
      out.push_back({cf, absl::StrCat("must be 1..", kMaxCaseIdBytes, " of [A-Za-z0-9_.-]")});
    } else if (!seen.insert(id).second) {
      out.push_back({cf, absl::StrCat("duplicate case id '", id, "'")});
    }
  }
}

// A map keyed by case id (`name` is op_name_map or launch_map): it needs the
// operator's case ids, at most kMaxCasesPerOperator entries, every key one of
// them and every value as check_value says. False when it has too many
// entries to look at.
bool CheckCaseMap(const v1::OperatorSpec& op, const std::string& f, const std::string& name,
                  const google::protobuf::Map<std::string, std::string>& map,
                  void (*check_value)(Violations&, const std::string&, const std::string&),
                  Violations& out) {
  if (op.case_ids().empty()) out.push_back({f + ".case_ids", name + " needs the case ids it maps"});
  if (!CheckCount(out, f + "." + name, static_cast<int>(map.size()), kMaxCasesPerOperator))
    return false;
  const std::set<std::string> ids(op.case_ids().begin(), op.case_ids().end());
  for (const auto& [id, value] : map) {
    const std::string mf = KeyField(f + "." + name, id);
    if (!ids.contains(id)) out.push_back({mf, "not one of the operator's case_ids"});
    check_value(out, mf, value);
  }
  return true;
}

void CheckOpNames(const v1::OperatorSpec& op, const std::string& f, Violations& out) {
  const bool has_name = !op.op_name().empty();
  const bool has_map = !op.op_name_map().empty();
  if (has_name == has_map)
    out.push_back({f + ".op_name", "give exactly one of op_name and op_name_map"});
  if (has_name) CheckKernelName(out, f + ".op_name", op.op_name());
  if (!has_map) return;
  if (!CheckCaseMap(op, f, "op_name_map", op.op_name_map(), CheckKernelName, out)) return;
  for (const std::string& id : std::set<std::string>(op.case_ids().begin(), op.case_ids().end())) {
    if (!op.op_name_map().contains(id)) {
      out.push_back({f + ".op_name_map", absl::StrCat("no op name for case '", id, "'")});
    }
  }
}

// The selector grammar is the evidence library's (evidence/launch.h), so the
// server refuses at submission exactly what the agent could not apply.
void CheckLaunchSelector(Violations& out, const std::string& field, const std::string& text) {
  if (text.size() > kMaxLaunchSelectorBytes) {
    out.push_back({field, absl::StrCat("at most ", kMaxLaunchSelectorBytes, " bytes")});
  } else if (auto parsed = evidence::ParseLaunchSelector(text); !parsed.ok()) {
    out.push_back({field, std::string(parsed.status().message())});
  }
}

void CheckLaunches(const v1::OperatorSpec& op, const std::string& f, Violations& out) {
  CheckLaunchSelector(out, f + ".launch", op.launch());
  if (!op.launch_map().empty())
    CheckCaseMap(op, f, "launch_map", op.launch_map(), CheckLaunchSelector, out);
}

// A discovery job looks for the target's name and runs every launch once:
// it takes no name and no launch selector.
void CheckDiscoveryOperator(const v1::OperatorSpec& op, const std::string& f, Violations& out) {
  if (!op.op_name().empty() || !op.op_name_map().empty()) {
    out.push_back({f + ".op_name", "a discovery collection gives no op_name or op_name_map"});
  }
  if (!op.launch().empty() || !op.launch_map().empty()) {
    out.push_back({f + ".launch", "a discovery collection gives no launch or launch_map"});
  }
}

void ValidateOperator(const v1::OperatorSpec& op, const std::string& f, bool has_selector,
                      bool discovery, const std::function<bool(const std::string&)>& bundle_known,
                      Violations& out) {
  if (!ValidName(op.name(), kMaxOperatorNameBytes) || op.name() == "." || op.name() == "..") {
    out.push_back({f + ".name", "must be 1..128 of [A-Za-z0-9_.-], not . or .."});
  }
  if (!IsSha256Hex(op.bundle_sha256())) {
    out.push_back({f + ".bundle_sha256", "must be 64 lowercase hex digits"});
  } else if (!bundle_known(op.bundle_sha256())) {
    out.push_back({f + ".bundle_sha256", "no such bundle; upload it with UploadBundle first"});
  }
  CheckPath(out, f + ".runner", op.runner());
  CheckPath(out, f + ".manifest_path", op.manifest_path());
  if (discovery) {
    CheckDiscoveryOperator(op, f, out);
  } else {
    CheckOpNames(op, f, out);
    CheckLaunches(op, f, out);
  }
  CheckCases(op, f, out);
  if (op.case_ids_size() > 0 && !has_selector) {
    out.push_back({f + ".case_ids", "cases need a case selector (case_arg or case_env)"});
  }
}

void CheckLabels(const google::protobuf::Map<std::string, std::string>& labels,
                 const std::string& f, bool lower_keys, size_t max_value_bytes, Violations& out) {
  if (!CheckCount(out, f, static_cast<int>(labels.size()), kMaxLabels)) return;
  for (const auto& [key, value] : labels) {
    const std::string lf = KeyField(f, key);
    if (!ValidName(key, kMaxLabelKeyBytes, lower_keys)) {
      out.push_back({lf, lower_keys ? "key must be 1..63 of [a-z0-9_.-]"
                                    : "key must be 1..63 of [A-Za-z0-9_.-]"});
    } else if (lower_keys && absl::StartsWith(key, kServerLabelPrefix)) {
      out.push_back({lf, absl::StrCat("keys starting \"", kServerLabelPrefix,
                                      "\" are set by the server (confirmation and calibration "
                                      "reruns)")});
    }
    if (value.size() > max_value_bytes || !IsPrintableLine(value)) {
      out.push_back({lf, absl::StrCat("value must be at most ", max_value_bytes,
                                      " bytes of printable text")});
    }
  }
}

void CheckConstraints(const v1::DeviceConstraints& c, Violations& out) {
  if (CheckCount(out, "spec.constraints.socs", c.socs_size(), kMaxSocs)) {
    for (int i = 0; i < c.socs_size(); ++i) {
      if (!ValidName(c.socs(i), kMaxSocNameBytes)) {
        out.push_back({absl::StrCat("spec.constraints.socs[", i, "]"),
                       "must be a SoC name, 1..64 of [A-Za-z0-9_.-]"});
      }
    }
  }
  CheckLabels(c.host_labels(), "spec.constraints.host_labels", false, kMaxHostLabelValueBytes, out);
  if (c.host().size() > kMaxConstraintHostBytes || !IsPrintableLine(c.host())) {
    out.push_back({"spec.constraints.host",
                   absl::StrCat("at most ", kMaxConstraintHostBytes, " bytes of printable text")});
  }
  if (c.device_range().size() > kMaxDeviceRangeBytes) {
    out.push_back({"spec.constraints.device_range", "at most 256 bytes"});
  } else if (!c.device_range().empty()) {
    auto r = ParseDeviceRange(c.device_range());
    if (!r.ok())
      out.push_back({"spec.constraints.device_range", std::string(r.status().message())});
  }
}

void CheckSelector(const v1::CaseSelector& sel, Violations& out) {
  if (sel.has_case_env()) {
    const std::string problem = EnvNameProblem(sel.case_env(), kMaxCaseEnvBytes);
    if (!problem.empty()) out.push_back({"spec.case_selector.case_env", problem});
  }
  if (sel.has_case_arg()) {
    const std::string& arg = sel.case_arg();
    if (arg.size() < 2 || arg.size() > kMaxCaseArgBytes || arg.front() != '-' ||
        !IsPrintableLine(arg) || arg.find(' ') != std::string::npos) {
      out.push_back({"spec.case_selector.case_arg",
                     "must be an option such as --case-id (2..64 bytes, no spaces)"});
    }
  }
}

void CheckParams(const v1::ProfilingParams& p, Violations& out) {
  if (!v1::ProfileMode_IsValid(p.mode())) {
    out.push_back({"spec.params.mode", absl::StrCat("unknown profile mode ", p.mode())});
  }
  CheckRange(out, "spec.params.warm_up", p.warm_up(), 0, 100);
  CheckRange(out, "spec.params.repeats", p.repeats(), 0, 100);
  CheckRange(out, "spec.params.retry", p.retry(), 0, 5);
  CheckRange(out, "spec.params.timeout_seconds", p.timeout_seconds(), 0, 86400);
}

// Jobs the spec expands into (ExpandJobs), without building them.
int64_t JobCount(const v1::CollectionSpec& spec) {
  int64_t n = 0;
  for (const auto& op : spec.operators()) n += std::max(1, op.case_ids_size());
  return n;
}

void CheckTop(const v1::CollectionSpec& spec, const std::string& key, const InputLimits& limits,
              Violations& out) {
  if (key.size() > kMaxIdempotencyKeyBytes || !IsPrintableLine(key)) {
    out.push_back({"idempotency_key", "at most 128 bytes of printable text"});
  }
  if (spec.ByteSizeLong() > kMaxSpecBytes) {
    out.push_back(
        {"spec", absl::StrCat(spec.ByteSizeLong(), " bytes serialized; at most ", kMaxSpecBytes)});
  }
  if (!v1::CollectionKind_IsValid(spec.kind())) {
    out.push_back({"spec.kind", absl::StrCat("unknown collection kind ", spec.kind())});
  }
  if (spec.description().size() > kMaxDescriptionBytes || !IsCleanText(spec.description())) {
    out.push_back({"spec.description", "at most 4096 bytes of text without control characters"});
  }
  if (!spec.tile_dag_attestation().empty() &&
      (spec.params().mode() != v1::PROFILE_MODE_TIMELINE ||
       spec.tile_dag_attestation().size() > kMaxTileDagAttestationBytes)) {
    out.push_back({"spec.tile_dag_attestation",
                   "only a timeline collection carries one (SubmitTimeline), at most 64 KiB"});
  }
  CheckRange(out, "spec.priority", spec.priority(), -10, 10);
  CheckRange(out, "spec.max_concurrent_jobs", spec.max_concurrent_jobs(), 0, 8);
  if (spec.operators().empty()) out.push_back({"spec.operators", "at least one operator"});
  const int64_t jobs = JobCount(spec);
  if (jobs > limits.max_jobs_per_collection) {
    out.push_back(
        {"spec.operators", absl::StrCat("expands into ", jobs, " jobs; at most ",
                                        limits.max_jobs_per_collection, " per collection")});
  }
}

}  // namespace

std::vector<FieldViolation> ValidateSpec(
    const v1::CollectionSpec& spec, const std::string& idempotency_key,
    const std::function<bool(const std::string&)>& bundle_known, const InputLimits& limits) {
  Violations out;
  CheckTop(spec, idempotency_key, limits, out);
  CheckParams(spec.params(), out);
  CheckSelector(spec.case_selector(), out);
  const auto& sel = spec.case_selector();
  const bool has_selector = !sel.case_arg().empty() || !sel.case_env().empty();
  std::set<std::string> names;
  const int operators = std::min(spec.operators_size(), kMaxOperators);
  CheckCount(out, "spec.operators", spec.operators_size(), kMaxOperators);
  for (int i = 0; i < operators; ++i) {
    const std::string f = absl::StrCat("spec.operators[", i, "]");
    ValidateOperator(spec.operators(i), f, has_selector,
                     spec.params().mode() == v1::PROFILE_MODE_DISCOVER, bundle_known, out);
    if (!names.insert(spec.operators(i).name()).second) {
      out.push_back({f + ".name", "duplicate operator name"});
    }
  }
  CheckLabels(spec.labels(), "spec.labels", true, kMaxLabelValueBytes, out);
  CheckConstraints(spec.constraints(), out);
  return out;
}

absl::StatusOr<std::vector<FieldViolation>> ValidateManifests(const v1::CollectionSpec& spec,
                                                              const BundleFileReader& read) {
  Violations out;
  const int operators = std::min(spec.operators_size(), kMaxOperators);
  for (int i = 0; i < operators; ++i) {
    const v1::OperatorSpec& op = spec.operators(i);
    if (op.manifest_path().empty()) continue;
    const std::string f = absl::StrCat("spec.operators[", i, "]");
    absl::StatusOr<std::string> bytes = read(op.bundle_sha256(), op.manifest_path());
    if (!bytes.ok() && !absl::IsNotFound(bytes.status()) &&
        !absl::IsInvalidArgument(bytes.status()) && !absl::IsResourceExhausted(bytes.status())) {
      return bytes.status();
    }
    absl::StatusOr<evidence::CaseManifest> manifest =
        bytes.ok() ? evidence::ParseCaseManifest(*bytes, {}) : bytes.status();
    if (!manifest.ok()) {
      out.push_back({f + ".manifest_path", std::string(manifest.status().message())});
      continue;
    }
    std::set<std::string> ids;
    for (const evidence::PerfCase& c : manifest->cases) ids.insert(c.id);
    for (int j = 0; j < op.case_ids_size(); ++j) {
      if (!ids.contains(op.case_ids(j))) {
        out.push_back({absl::StrCat(f, ".case_ids[", j, "]"), "not a case of the manifest"});
      }
    }
  }
  return out;
}

v1::CollectionSpec WithDefaults(v1::CollectionSpec spec) {
  auto* p = spec.mutable_params();
  if (p->mode() == v1::PROFILE_MODE_UNSPECIFIED) p->set_mode(v1::PROFILE_MODE_STANDARD);
  if (p->warm_up() == 0 && !p->skip_warm_up()) p->set_warm_up(1);
  if (p->skip_warm_up()) p->set_warm_up(0);
  if (p->repeats() == 0) {
    p->set_repeats(
        p->mode() == v1::PROFILE_MODE_QUICK || p->mode() == v1::PROFILE_MODE_COMPARE ? 3 : 1);
  }
  if (p->seed() == 0) p->set_seed(42);
  if (p->timeout_seconds() == 0) p->set_timeout_seconds(3600);
  if (spec.max_concurrent_jobs() == 0) spec.set_max_concurrent_jobs(8);
  if (spec.kind() == v1::COLLECTION_KIND_UNSPECIFIED) {
    spec.set_kind(spec.operators_size() == 1 ? v1::COLLECTION_KIND_SINGLE
                                             : v1::COLLECTION_KIND_BATCH);
  }
  return spec;
}

std::vector<NewJob> ExpandJobs(const v1::CollectionSpec& spec) {
  std::vector<NewJob> jobs;
  for (const auto& op : spec.operators()) {
    if (op.case_ids().empty()) {
      jobs.push_back({op.name(), "", op.op_name()});
      continue;
    }
    for (const auto& id : op.case_ids()) {
      auto it = op.op_name_map().find(id);
      jobs.push_back({op.name(), id, it != op.op_name_map().end() ? it->second : op.op_name()});
    }
  }
  return jobs;
}

std::vector<std::string> SpecDifferences(const v1::CollectionSpec& stored,
                                         const v1::CollectionSpec& submitted) {
  using google::protobuf::util::MessageDifferencer;
  // Collects the path of every difference ("params.repeats",
  // "operators[0].op_name"), stopping at map fields.
  class Paths : public MessageDifferencer::Reporter {
   public:
    std::set<std::string> paths;
    void ReportAdded(const google::protobuf::Message&, const google::protobuf::Message&,
                     const std::vector<MessageDifferencer::SpecificField>& path) override {
      Add(path);
    }
    void ReportDeleted(const google::protobuf::Message&, const google::protobuf::Message&,
                       const std::vector<MessageDifferencer::SpecificField>& path) override {
      Add(path);
    }
    void ReportModified(const google::protobuf::Message&, const google::protobuf::Message&,
                        const std::vector<MessageDifferencer::SpecificField>& path) override {
      Add(path);
    }

   private:
    void Add(const std::vector<MessageDifferencer::SpecificField>& path) {
      std::string p = "spec";
      for (const auto& f : path) {
        if (f.field == nullptr) break;
        absl::StrAppend(&p, ".", f.field->name());
        if (f.field->is_map()) break;
        if (f.field->is_repeated() && f.index >= 0) absl::StrAppend(&p, "[", f.index, "]");
      }
      paths.insert(p);
    }
  } reporter;
  MessageDifferencer differ;
  differ.ReportDifferencesTo(&reporter);
  differ.Compare(stored, submitted);
  // Only the innermost paths: "spec.params" goes when "spec.params.repeats" is listed.
  std::vector<std::string> out;
  for (auto it = reporter.paths.begin(); it != reporter.paths.end(); ++it) {
    const auto next = std::next(it);
    const bool parent = next != reporter.paths.end() && next->size() > it->size() &&
                        next->compare(0, it->size(), *it) == 0 &&
                        ((*next)[it->size()] == '.' || (*next)[it->size()] == '[');
    if (!parent) out.push_back(*it);
  }
  return out;
}

}  // namespace npuperf::server
