#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/status_util.h"
#include "npuperf/v1/collection.pb.h"
#include "server/core/limits.h"
#include "server/store/store.h"

namespace npuperf::server {

// Submission rules (pure; no I/O): all-or-nothing validation with one field
// violation per bad field, defaults, and expansion into jobs. The limits are
// limits.h's; the rules are listed in docs/api.md ("Limits").

// Every violation in the spec: lengths, counts and character sets of every
// string and repeated field, known enum values, numeric ranges, bundle paths
// (runner, manifest_path: normalised, relative, inside the bundle), the
// case_env name (not reserved, common/input_rules.h), and the number of jobs
// the spec expands into (limits.max_jobs_per_collection). A count over its
// limit is reported once and only the first items under the limit are
// checked further. A discovery collection (PROFILE_MODE_DISCOVER) gives no
// op name and no launch selector; every other operator exactly one of
// op_name and op_name_map (so the jobs without an op_name are exactly the
// discovery jobs). bundle_known answers whether a bundle hash was uploaded.
std::vector<FieldViolation> ValidateSpec(
    const v1::CollectionSpec& spec, const std::string& idempotency_key,
    const std::function<bool(const std::string&)>& bundle_known, const InputLimits& limits = {});

// Reads the file at a bundle path (manifest_path) in the bundle with that
// sha256: its bytes, NOT_FOUND when the bundle holds no such file, or another
// error (RESOURCE_EXHAUSTED past evidence::kMaxCaseManifestBytes).
using BundleFileReader =
    std::function<absl::StatusOr<std::string>(const std::string& sha256, const std::string& path)>;

// The manifest rule, for every operator (at most kMaxOperators) that names a
// manifest_path: the manifest in its bundle must pass
// evidence::ParseCaseManifest (the rule the client and the agent apply:
// schema_version 1, non-empty unique case ids, shape and dtype, ...), one
// violation on spec.operators[i].manifest_path naming the manifest's bad
// field (or why it cannot be read); and each of the operator's case_ids must
// be one of its cases (spec.operators[i].case_ids[j]). A read that fails
// with neither NOT_FOUND, INVALID_ARGUMENT nor RESOURCE_EXHAUSTED is returned
// as the error. Call it after ValidateSpec found nothing: it reads bundles.
absl::StatusOr<std::vector<FieldViolation>> ValidateManifests(const v1::CollectionSpec& spec,
                                                              const BundleFileReader& read);

// The spec with defaults filled in (documented in collection.proto).
// REQUIRES: ValidateSpec returned no violation.
v1::CollectionSpec WithDefaults(v1::CollectionSpec spec);

// One job per operator x case, in operator order.
std::vector<NewJob> ExpandJobs(const v1::CollectionSpec& spec);

// The fields in which two specs differ, as sorted paths ("spec.params.repeats",
// "spec.operators[0].op_name", "spec.labels"); empty when equal. Used when an
// idempotency key comes back with another spec (both with defaults filled).
std::vector<std::string> SpecDifferences(const v1::CollectionSpec& stored,
                                         const v1::CollectionSpec& submitted);

}  // namespace npuperf::server
