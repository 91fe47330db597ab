#include "server/core/submission.h"

#include <regex>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/device_range.h"
#include "common/sha256.h"

namespace npuperf::server {
namespace {

bool ValidName(const std::string& s, size_t max) {
  static const std::regex kName("[A-Za-z0-9_.-]+");
  return !s.empty() && s.size() <= max && std::regex_match(s, kName);
}

void CheckRange(std::vector<FieldViolation>& out, const std::string& field, int64_t v, int64_t lo,
                int64_t hi) {
  if (v < lo || v > hi) {
    out.push_back({field, absl::StrCat("must be in ", lo, "..", hi, ", got ", v)});
  }
}

void ValidateOperator(const v1::OperatorSpec& op, const std::string& f, bool has_selector,
                      const std::function<bool(const std::string&)>& bundle_known,
                      std::vector<FieldViolation>& out) {
  if (!ValidName(op.name(), 128) || op.name() == "." || op.name() == "..") {
    out.push_back({f + ".name", "must be 1..128 of [A-Za-z0-9_.-], not . or .."});
  }
  if (!IsSha256Hex(op.bundle_sha256())) {
    out.push_back({f + ".bundle_sha256", "must be 64 lowercase hex digits"});
  } else if (!bundle_known(op.bundle_sha256())) {
    out.push_back({f + ".bundle_sha256", "no such bundle; upload it with UploadBundle first"});
  }
  if (!op.runner().empty() &&
      (op.runner().front() == '/' || op.runner().find("..") != std::string::npos)) {
    out.push_back({f + ".runner", "must be a relative path inside the operator directory"});
  }
  const bool has_name = !op.op_name().empty();
  const bool has_map = !op.op_name_map().empty();
  if (has_name == has_map) {
    out.push_back({f + ".op_name", "give exactly one of op_name and op_name_map"});
  }
  std::set<std::string> seen;
  for (int i = 0; i < op.case_ids_size(); ++i) {
    const std::string& id = op.case_ids(i);
    const std::string cf = absl::StrCat(f, ".case_ids[", i, "]");
    if (!ValidName(id, 128)) out.push_back({cf, "must be 1..128 of [A-Za-z0-9_.-]"});
    if (!seen.insert(id).second) out.push_back({cf, absl::StrCat("duplicate case id '", id, "'")});
    if (has_map && !op.op_name_map().contains(id)) {
      out.push_back({f + ".op_name_map", absl::StrCat("no op name for case '", id, "'")});
    }
  }
  if (has_map && op.case_ids().empty()) {
    out.push_back({f + ".case_ids", "op_name_map needs the case ids it maps"});
  }
  if (op.case_ids_size() > 0 && !has_selector) {
    out.push_back({f + ".case_ids", "cases need a case selector (case_arg or case_env)"});
  }
}

}  // namespace

std::vector<FieldViolation> ValidateSpec(
    const v1::CollectionSpec& spec, const std::string& idempotency_key,
    const std::function<bool(const std::string&)>& bundle_known) {
  std::vector<FieldViolation> out;
  if (idempotency_key.size() > 128) out.push_back({"idempotency_key", "at most 128 characters"});
  if (spec.operators().empty()) out.push_back({"spec.operators", "at least one operator"});
  const auto& p = spec.params();
  CheckRange(out, "spec.params.warm_up", p.warm_up(), 0, 100);
  CheckRange(out, "spec.params.repeats", p.repeats(), 0, 100);
  CheckRange(out, "spec.params.retry", p.retry(), 0, 5);
  CheckRange(out, "spec.params.timeout_seconds", p.timeout_seconds(), 0, 86400);
  CheckRange(out, "spec.priority", spec.priority(), -10, 10);
  CheckRange(out, "spec.max_concurrent_jobs", spec.max_concurrent_jobs(), 0, 8);
  const auto& sel = spec.case_selector();
  const bool has_selector = !sel.case_arg().empty() || !sel.case_env().empty();
  if (sel.has_case_env() &&
      !std::regex_match(sel.case_env(), std::regex("[A-Za-z_][A-Za-z0-9_]*"))) {
    out.push_back({"spec.case_selector.case_env", "must be an environment variable name"});
  }
  if (sel.has_case_arg() && sel.case_arg().rfind("-", 0) != 0) {
    out.push_back({"spec.case_selector.case_arg", "must be an option such as --case-id"});
  }
  std::set<std::string> names;
  for (int i = 0; i < spec.operators_size(); ++i) {
    const std::string f = absl::StrCat("spec.operators[", i, "]");
    ValidateOperator(spec.operators(i), f, has_selector, bundle_known, out);
    if (!names.insert(spec.operators(i).name()).second) {
      out.push_back(
          {f + ".name", absl::StrCat("duplicate operator '", spec.operators(i).name(), "'")});
    }
  }
  for (const auto& [key, value] : spec.labels()) {
    if (!std::regex_match(key, std::regex("[a-z0-9_.-]{1,63}"))) {
      out.push_back({absl::StrCat("spec.labels[", key, "]"), "key must be 1..63 of [a-z0-9_.-]"});
    }
    if (value.size() > 256)
      out.push_back({absl::StrCat("spec.labels[", key, "]"), "value over 256 chars"});
  }
  if (!spec.constraints().device_range().empty()) {
    auto r = ParseDeviceRange(spec.constraints().device_range());
    if (!r.ok())
      out.push_back({"spec.constraints.device_range", std::string(r.status().message())});
  }
  return out;
}

v1::CollectionSpec WithDefaults(v1::CollectionSpec spec) {
  auto* p = spec.mutable_params();
  if (p->mode() == v1::PROFILE_MODE_UNSPECIFIED) p->set_mode(v1::PROFILE_MODE_STANDARD);
  if (p->warm_up() == 0 && !p->skip_warm_up()) p->set_warm_up(1);
  if (p->skip_warm_up()) p->set_warm_up(0);
  if (p->repeats() == 0) p->set_repeats(p->mode() == v1::PROFILE_MODE_STANDARD ? 1 : 3);
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

}  // namespace npuperf::server
