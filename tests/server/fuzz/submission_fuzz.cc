// libFuzzer target: the submission validator on arbitrary SubmitCollectionRequests (the bytes
// are parsed as a serialized request; seeds in corpus/submission). Beyond "no crash", it checks
// the promises of submission.h and limits.h: an accepted spec expands into at most
// max_jobs_per_collection jobs whose names obey the bundle-path and case-env rules, and the
// refusal of any spec fits a gRPC trailer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "common/input_rules.h"
#include "common/status_util.h"
#include "evidence/launch.h"
#include "npuperf/v1/collection_service.pb.h"
#include "server/core/limits.h"
#include "server/core/submission.h"

namespace {

using npuperf::server::InputLimits;

void Require(bool ok) {
  if (!ok) std::abort();
}

// Independent of BundlePathProblem: relative, and no ".." component.
bool StaysInside(const std::string& path) {
  if (!path.empty() && path.front() == '/') return false;
  const std::string padded = "/" + path + "/";
  return padded.find("/../") == std::string::npos;
}

void CheckAccepted(const npuperf::v1::CollectionSpec& spec, const InputLimits& limits) {
  const auto filled = npuperf::server::WithDefaults(spec);
  const auto jobs = npuperf::server::ExpandJobs(filled);
  Require(static_cast<int64_t>(jobs.size()) <= limits.max_jobs_per_collection);
  Require(filled.ByteSizeLong() <= npuperf::server::kMaxSpecBytes + 4096);
  if (spec.case_selector().has_case_env()) {
    Require(npuperf::EnvNameProblem(spec.case_selector().case_env(), npuperf::kMaxCaseEnvBytes)
                .empty());
  }
  for (const auto& op : spec.operators()) {
    for (const std::string* path : {&op.runner(), &op.manifest_path()}) {
      Require(path->empty() ||
              npuperf::BundlePathProblem(*path, npuperf::kMaxBundlePathBytes).empty());
      Require(StaysInside(*path));
    }
    // Whatever the agent will parse of an accepted spec, it can.
    Require(npuperf::evidence::ParseLaunchSelector(op.launch()).ok());
    for (const auto& [id, launch] : op.launch_map()) {
      Require(npuperf::evidence::ParseLaunchSelector(launch).ok());
      Require(std::find(op.case_ids().begin(), op.case_ids().end(), id) != op.case_ids().end());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npuperf::v1::SubmitCollectionRequest req;
  if (!req.ParseFromArray(data, static_cast<int>(size))) return 0;
  InputLimits limits;
  limits.max_jobs_per_collection = 100;  // small, so that the cap is reachable
  const auto known = [](const std::string& sha) { return sha[0] != 'f'; };
  const auto violations =
      npuperf::server::ValidateSpec(req.spec(), req.idempotency_key(), known, limits);
  if (violations.empty()) {
    CheckAccepted(req.spec(), limits);
    return 0;
  }
  const grpc::Status status = npuperf::ToGrpcStatus(npuperf::InvalidArgumentWithFields(violations));
  Require(status.error_details().size() < 8192 && status.error_message().size() <= 1024);
  return 0;
}
