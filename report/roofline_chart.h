// The roofline and instruction-timeline charts (internal to report/): drawn
// from evidence.json's "roofline" object (v1::Evidence::evidence_json, so no
// message change is needed) and from a timeline_evidence document
// (evidence/timeline.h). Pure functions; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "npuperf/v1/evidence.pb.h"

namespace npuperf::report::internal {

// The round page's "Roofline" section: the chart (an <svg> with class
// "roofline": the bandwidth and compute ceilings, the ridge, this round's
// point) and its figures when the roofline is measured; else what could not
// be measured. The terminal state, pipeline status and completion rule with
// its blockers either way. "" when the evidence carries no roofline (older
// rounds, list views).
std::string RooflineSection(const v1::Evidence& e);

// The roofline chart of a measured evidence.json "roofline" object.
std::string RooflineChart(const nlohmann::json& roofline);

// The lanes of a timeline_evidence document: one row per monitored lane over
// the target window, the listed events coloured by pipe class, and the
// same-lane compute+movement overlap marked (class "overlap").
std::string TimelineLanes(const nlohmann::json& timeline);

}  // namespace npuperf::report::internal
