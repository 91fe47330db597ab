// timeline_evidence.json, the text summary, and where a trace is found
// (timeline.h).
#include <algorithm>
#include <map>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "evidence/str_util.h"
#include "evidence/timeline.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;
using internal::EndsWith;
using internal::StartsWith;
using Json = nlohmann::ordered_json;

constexpr const char* kPair = "compute+movement";

// A pid/tid as a number when it is an integer, else as written.
Json Id(const std::string& text) {
  if (text.empty() || text.size() > 18) return text;
  for (size_t i = 0; i < text.size(); ++i) {
    if (!(text[i] >= '0' && text[i] <= '9') && !(i == 0 && text[i] == '-' && text.size() > 1)) {
      return text;
    }
  }
  return std::stoll(text);
}

Json LaneJson(const TimelineLane& l) {
  return Json{{"pid", Id(l.pid)}, {"tid", Id(l.tid)}, {"name", l.name}};
}

Json OverlapJson(const TimelineEvidence& t) {
  Json lanes = Json::array();
  for (const LaneOverlap& l : t.lanes) {
    lanes.push_back(
        {{"lane", l.lane.name},
         {"pid", Id(l.lane.pid)},
         {"tid", Id(l.lane.tid)},
         {"events", l.events},
         {"late_events", l.late_events},
         {"pairs",
          Json::array({{{"pipe_pair", kPair},
                        {"raw_event_pairs", l.raw_event_pairs},
                        {"deduplicated_overlap_us", FormatNanosAsMicros(l.overlap_ns)}}})}});
  }
  return Json{
      {"raw_event_pair_counts", {{kPair, t.raw_event_pairs}}},
      {"raw_event_pair_count_semantics",
       "pairs of one compute and one movement event on the same lane whose intervals intersect "
       "inside the target window; one busy interval may be counted in many pairs"},
      {"pair_overlap_us", {{kPair, FormatNanosAsMicros(t.overlap_ns)}}},
      {"pair_overlap_semantics",
       "per lane, the time inside the target window when at least one compute and at least one "
       "movement event were active (union of compute intervals intersected with union of "
       "movement intervals, so overlapping pairs are not double counted), summed over lanes; "
       "events on different lanes never overlap each other"},
      {"lanes", std::move(lanes)}};
}

Json EventsJson(const TimelineEvidence& t) {
  Json events = Json::array();
  for (const TimelineEvent& e : t.events) {
    Json args = Json::object();
    for (const auto& [k, v] : e.args) args[k] = v;
    events.push_back({{"lane", e.lane},
                      {"pid", Id(e.pid)},
                      {"tid", Id(e.tid)},
                      {"instruction", e.instruction},
                      {"pipe_class", PipeClassName(e.pipe_class)},
                      {"start_offset_us", FormatNanosAsMicros(e.start_offset_ns)},
                      {"duration_us", FormatNanosAsMicros(e.duration_ns)},
                      {"args", std::move(args)}});
  }
  return events;
}

bool IsTraceName(const std::string& name) {
  if (!StartsWith(name, "msprof_") || !EndsWith(name, ".json")) return false;
  const std::string ts = name.substr(7, name.size() - 12);
  return !ts.empty() &&
         std::all_of(ts.begin(), ts.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The newest msprof_<ts>.json directly in `dir`, or "".
std::filesystem::path NewestTrace(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::path best;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (IsTraceName(name) && it->is_regular_file(ec) &&
        (best.empty() || name > best.filename().string())) {
      best = it->path();
    }
  }
  return best;
}

}  // namespace

absl::StatusOr<std::filesystem::path> FindTimelineTrace(const std::filesystem::path& input) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(input, ec)) return input;
  if (!std::filesystem::is_directory(input, ec)) {
    return absl::NotFoundError(Cat(input.string(), ": no such file or directory"));
  }
  for (const auto& dir : {input, input / "mindstudio_profiler_output"}) {
    std::filesystem::path p = NewestTrace(dir);
    if (!p.empty()) return p;
  }
  std::vector<std::filesystem::path> found;
  for (std::filesystem::directory_iterator it(input, ec), end; !ec && it != end; it.increment(ec)) {
    if (!StartsWith(it->path().filename().string(), "PROF_")) continue;
    std::filesystem::path p = NewestTrace(it->path() / "mindstudio_profiler_output");
    if (!p.empty()) found.push_back(p);
  }
  if (found.size() > 1) {
    return absl::FailedPreconditionError(
        Cat(input.string(), ": ", found.size(),
            " PROF_* directories hold a timeline; name one PROF_* or the trace file"));
  }
  if (found.empty()) {
    return absl::NotFoundError(
        Cat(input.string(),
            ": no msprof_<ts>.json timeline (in it, its mindstudio_profiler_output "
            "or a PROF_*/mindstudio_profiler_output)"));
  }
  return found.front();
}

std::string TimelineToJson(const TimelineEvidence& t) {
  Json target = nullptr;
  if (t.target_lane) {
    target = {{"pid", Id(t.target_lane->pid)},
              {"tid", Id(t.target_lane->tid)},
              {"lane", t.target_lane->name},
              {"start_us", FormatNanosAsMicros(t.target_start_ns)},
              {"duration_us", FormatNanosAsMicros(t.target_duration_ns)}};
  }
  Json lanes = Json::array();
  for (const TimelineLane& l : t.monitored_lanes) lanes.push_back(LaneJson(l));
  Json j{{"schema_version", 1},
         {"target_op_name", t.target_op_name},
         {"attribution_status", t.attribution_status},
         {"target_candidates", t.target_candidates},
         {"target_task", std::move(target)},
         {"evidence_scope", "sampled_representative_biu_lanes"},
         {"collection_kind", "supplemental_instruction_profile"},
         {"canonical_timing_source", "separate_formal_compare"},
         {"monitored_lanes", std::move(lanes)},
         {"pipe_event_counts", t.pipe_event_counts},
         {"instruction_event_counts", t.instruction_event_counts},
         {"events_in_window", t.events_in_window},
         {"events_outside_window", t.events_outside_window},
         {"late_events", t.late_events},
         {"same_lane_pipe_interval_overlap", OverlapJson(t)},
         {"events", EventsJson(t)},
         {"pipeline_evidence_status", t.pipeline_evidence_status},
         {"completion_eligible", false},
         {"limitations", t.limitations},
         {"trace",
          {{"path", t.trace.string()},
           {"bytes", t.trace_bytes},
           {"events", t.trace_events},
           {"passes", t.passes}}}};
  return j.dump(2) + "\n";
}

std::string TimelineToChromeTrace(const TimelineEvidence& t) {
  // Small integer ids per original pid and per lane: Perfetto wants integers,
  // and the trace's own may be strings or beyond 2^53.
  std::map<std::string, int> pids;
  std::map<std::pair<std::string, std::string>, int> tids;
  Json events = Json::array();
  auto lane = [&](const std::string& pid, const std::string& tid, const std::string& name) {
    auto [p, new_pid] = pids.emplace(pid, static_cast<int>(pids.size()) + 1);
    if (new_pid) {
      events.push_back({{"name", "process_name"},
                        {"ph", "M"},
                        {"pid", p->second},
                        {"args", {{"name", Cat("msprof pid ", pid)}}}});
    }
    auto [l, new_lane] = tids.emplace(std::pair{pid, tid}, static_cast<int>(tids.size()) + 1);
    if (new_lane) {
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", p->second},
                        {"tid", l->second},
                        {"args", {{"name", name}}}});
    }
    return std::pair{p->second, l->second};
  };
  int64_t origin = 0;  // the target's start, or the earliest event before it
  for (const TimelineEvent& e : t.events) origin = std::min(origin, e.start_offset_ns);
  auto micros = [&](int64_t offset_ns) {
    return static_cast<double>(offset_ns - origin) / 1000.0;  // small: exact to the ns
  };
  if (t.target_lane) {
    auto [pid, tid] = lane(t.target_lane->pid, t.target_lane->tid, t.target_lane->name);
    events.push_back({{"name", t.target_op_name},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", micros(0)},
                      {"dur", static_cast<double>(t.target_duration_ns) / 1000.0},
                      {"args",
                       {{"start_us", FormatNanosAsMicros(t.target_start_ns)},
                        {"compute+movement overlap_us", FormatNanosAsMicros(t.overlap_ns)}}}});
  }
  for (const TimelineEvent& e : t.events) {
    auto [pid, tid] = lane(e.pid, e.tid, e.lane);
    Json args = Json::object();
    for (const auto& [k, v] : e.args) args[k] = v;
    args["pipe"] = std::string(PipeClassName(e.pipe_class));
    events.push_back({{"name", e.instruction},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", micros(e.start_offset_ns)},
                      {"dur", static_cast<double>(e.duration_ns) / 1000.0},
                      {"args", std::move(args)}});
  }
  Json j{{"displayTimeUnit", "ns"},
         {"otherData",
          {{"source", t.trace.string()},
           {"target_op_name", t.target_op_name},
           {"attribution_status", t.attribution_status},
           {"time_origin_us", FormatNanosAsMicros(t.target_start_ns + origin)},
           {"events_listed", t.events.size()},
           {"events_in_window", t.events_in_window}}},
         {"traceEvents", std::move(events)}};
  return j.dump() + "\n";
}

std::string TimelineToText(const TimelineEvidence& t) {
  std::ostringstream out;
  out << "target          " << t.target_op_name << ": " << t.attribution_status << " ("
      << t.target_candidates << " candidate" << (t.target_candidates == 1 ? "" : "s") << ")\n";
  if (t.target_lane) {
    out << "window          start " << FormatNanosAsMicros(t.target_start_ns) << " us, duration "
        << FormatNanosAsMicros(t.target_duration_ns) << " us\n";
  }
  out << "lanes           " << t.monitored_lanes.size() << " Group lanes, " << t.events_in_window
      << " instruction events in the window (" << t.events_outside_window << " outside)\n";
  out << "pipe events    ";
  for (const auto& [cls, n] : t.pipe_event_counts) out << " " << cls << "=" << n;
  out << "\ncompute+movement same-lane overlap " << FormatNanosAsMicros(t.overlap_ns)
      << " us (deduplicated per lane), " << t.raw_event_pairs << " raw event pairs\n";
  for (const LaneOverlap& l : t.lanes) {
    out << "  " << l.lane.name << "  overlap " << FormatNanosAsMicros(l.overlap_ns) << " us, "
        << l.raw_event_pairs << " pairs, " << l.events << " events\n";
  }
  out << "pipeline        " << t.pipeline_evidence_status << " (completion_eligible false)\n";
  for (const std::string& l : t.limitations) out << "note: " << l << "\n";
  return out.str();
}

}  // namespace npuperf::evidence
