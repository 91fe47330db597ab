#include "server/core/placement.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/sha256.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace npuperf::server {
namespace {

// The parts of a message that decide a run's length, as deterministic bytes.
std::string Bytes(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

// What of an operator a duration key covers: not its revision (a new bundle
// keeps its history), its cases, op names or per-case launches (the job's own
// case, name and launch are keyed apart). Built once per operator: a copy per
// job copied every case id, 10,000 x 10,000 strings for a 10,000-case
// manifest, 5 s of a submit (issue 36).
v1::OperatorSpec KeyShape(const v1::OperatorSpec& op) {
  v1::OperatorSpec shape = op;
  shape.clear_bundle_sha256();
  shape.clear_case_ids();
  shape.clear_op_name_map();
  shape.clear_op_name();
  shape.clear_launch_map();
  return shape;
}

// The collection's part of every key: team, params and constraints.
std::string KeyPrefix(const std::string& team, const v1::CollectionSpec& spec) {
  std::string text;
  for (const std::string& part : {team, Bytes(spec.params()), Bytes(spec.constraints())}) {
    absl::StrAppend(&text, part.size(), ":", part);
  }
  return text;
}

// The launch of job: the launch map's entry for its case, else the
// operator's launch.
const std::string& LaunchOf(const v1::OperatorSpec& op, const NewJob& job) {
  const auto launch = op.launch_map().find(job.case_id);
  return launch != op.launch_map().end() ? launch->second : op.launch();
}

// The operator's shape with `launch` set into it, as bytes.
std::string ShapeBytes(v1::OperatorSpec& shape, const std::string& launch) {
  shape.set_launch(launch);
  return Bytes(shape);
}

// The key from the prefix, the operator's shape bytes (with the job's
// launch) and the job. Length-prefixed fields: no two different tuples give
// the same bytes.
std::string KeyOf(const std::string& prefix, const std::string& shape, const NewJob& job) {
  std::string text = prefix;
  for (const std::string* part : {&shape, &job.case_id, &job.op_name}) {
    absl::StrAppend(&text, part->size(), ":", *part);
  }
  return Sha256Hex(text).substr(0, 32);
}

}  // namespace

std::string DurationKey(const std::string& team, const v1::CollectionSpec& spec,
                        const v1::OperatorSpec& op, const NewJob& job) {
  v1::OperatorSpec shape = KeyShape(op);
  return KeyOf(KeyPrefix(team, spec), ShapeBytes(shape, LaunchOf(op, job)), job);
}

void SetDurationKeys(const std::string& team, const v1::CollectionSpec& spec,
                     std::vector<NewJob>* jobs) {
  struct Operator {
    const v1::OperatorSpec* spec;
    v1::OperatorSpec shape;
    // The shape's bytes for each launch its jobs have: serialised once per
    // launch, not once per job (issue 36: a tenth of a 100,000-job submit).
    std::map<std::string, std::string> bytes_by_launch;
  };
  std::map<std::string, Operator> by_name;
  for (const auto& op : spec.operators())
    by_name.insert_or_assign(op.name(), Operator{&op, KeyShape(op), {}});
  const std::string prefix = KeyPrefix(team, spec);
  for (NewJob& job : *jobs) {
    const auto it = by_name.find(job.operator_name);
    if (it == by_name.end()) continue;
    Operator& op = it->second;
    const std::string& launch = LaunchOf(*op.spec, job);
    auto bytes = op.bytes_by_launch.find(launch);
    if (bytes == op.bytes_by_launch.end()) {
      bytes = op.bytes_by_launch.emplace(launch, ShapeBytes(op.shape, launch)).first;
    }
    job.duration_key = KeyOf(prefix, bytes->second, job);
  }
}

std::optional<int64_t> ExpectedRunMs(std::vector<int64_t> recent_run_ms) {
  if (recent_run_ms.empty()) return std::nullopt;
  const size_t mid = recent_run_ms.size() / 2;
  std::nth_element(recent_run_ms.begin(), recent_run_ms.begin() + mid, recent_run_ms.end());
  const int64_t upper = recent_run_ms[mid];
  if (recent_run_ms.size() % 2 == 1) return upper;
  const int64_t lower = *std::max_element(recent_run_ms.begin(), recent_run_ms.begin() + mid);
  return lower + (upper - lower) / 2;
}

std::vector<NewJob> LongestFirst(std::vector<NewJob> jobs,
                                 const std::map<std::string, int64_t>& expected_ms) {
  // -1: no history, before every estimate (>= 0).
  auto estimate = [&](const NewJob& j) -> int64_t {
    const auto it = expected_ms.find(j.duration_key);
    return it == expected_ms.end() ? -1 : it->second;
  };
  std::stable_sort(jobs.begin(), jobs.end(), [&](const NewJob& a, const NewJob& b) {
    const int64_t ea = estimate(a), eb = estimate(b);
    if ((ea < 0) != (eb < 0)) return ea < 0;
    return ea > eb;
  });
  return jobs;
}

}  // namespace npuperf::server
