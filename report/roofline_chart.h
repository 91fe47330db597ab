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

// The roofline chart of a measured evidence.json "roofline" object; with a
// measured baseline on the same ceilings (same peaks), its point too (a
// hollow circle, class "point baseline") and an arrow from it to this one.
std::string RooflineChart(const nlohmann::json& roofline, const nlohmann::json* baseline = nullptr);

// The comparison page's "Roofline" section for two rounds' evidence.json
// documents: both points on one chart and how far each is from the roof;
// why not when a side is unmeasured or the ceilings differ (another SoC).
// "" when neither carries a roofline.
std::string RooflineComparison(const std::string& baseline_evidence_json,
                               const std::string& candidate_evidence_json);

// The lanes of a timeline_evidence document: one row per monitored lane over
// the target window, the listed events coloured by pipe class, and the
// same-lane compute+movement overlap marked (class "overlap").
std::string TimelineLanes(const nlohmann::json& timeline);

// A timeline_evidence document (parsed) as one section: the lanes,
// attribution, pipeline evidence status, same-lane overlap and limitations. A
// note when it is not an object (a document that did not parse).
std::string TimelineSection(const nlohmann::json& timeline);

}  // namespace npuperf::report::internal
