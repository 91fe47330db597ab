#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/status_util.h"
#include "npuperf/v1/collection.pb.h"
#include "server/store/store.h"

namespace npuperf::server {

// Submission rules (pure; no I/O): all-or-nothing validation with one field
// violation per bad field, defaults, and expansion into jobs.

// Every violation in the spec. bundle_known answers whether a bundle hash
// was uploaded.
std::vector<FieldViolation> ValidateSpec(
    const v1::CollectionSpec& spec, const std::string& idempotency_key,
    const std::function<bool(const std::string&)>& bundle_known);

// The spec with defaults filled in (documented in collection.proto).
// REQUIRES: ValidateSpec returned no violation.
v1::CollectionSpec WithDefaults(v1::CollectionSpec spec);

// One job per operator x case, in operator order.
std::vector<NewJob> ExpandJobs(const v1::CollectionSpec& spec);

}  // namespace npuperf::server
