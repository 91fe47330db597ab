#pragma once

#include <vector>

#include "common/status_util.h"
#include "npuperf/v1/evidence.pb.h"

namespace npuperf::server {

// The one check of evidence at ingest (docs/security.md, "Evidence at
// ingest"): the scheduler calls it on every succeeded ReportResult before
// either store backend sees the evidence, so nothing it refuses is stored.
// Pure; thread-safe.
//
// Rules (limits from limits.h):
//  - every number is finite (no NaN, no +-inf): durations, samples, per-core
//    figures, DVFS and golden figures, metric fields, bound ratios;
//  - durations, samples, core times and cycles, clocks and counts are >= 0;
//    percentages of a spread or a half gap lie in [0, 100];
//  - bound.ratios lie in [0, 1] (the evidence library keeps only in-range
//    ratios there), and so does every metric field named "*_ratio" unless
//    an evidence error RATIO_OUT_OF_RANGE names that field (the library
//    reports an out-of-range ratio that way, evidence/bound.cc);
//  - enum-like strings hold one of the values the evidence library writes
//    (evidence/labels.h): bound and routing labels, core types, per-core,
//    DVFS, golden and clock statuses, verdicts, sources, modes; proto enums
//    hold known values;
//  - a finding names a rule of evidence/findings.h and repeats that rule's
//    severity, comparison, threshold and unit; its value is finite;
//  - names (groups, fields, error codes) are short printable lines; the
//    counts of repeated fields, the size of every text (warnings, error
//    messages, evidence_json, summary_text, summary_markdown) and of the whole
//    message are bounded.
//
// Returns one violation per bad field, named from the request
// ("evidence.duration.samples_us[2]": "is inf"), at most kMaxViolations.
std::vector<FieldViolation> ValidateEvidence(const v1::Evidence& evidence);

// "evidence rejected: duration.samples_us[2] is inf" (and "; N more"): the
// failure reason of a job whose evidence was refused.
// REQUIRES: !violations.empty().
std::string EvidenceRejection(const std::vector<FieldViolation>& violations);

}  // namespace npuperf::server
