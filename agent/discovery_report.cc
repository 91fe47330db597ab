#include "agent/discovery_report.h"

#include <string>

#include "absl/strings/str_replace.h"
#include "common/input_rules.h"

namespace npuperf::agent {
namespace {

// One printable line of at most max_bytes.
std::string Line(const std::string& text, size_t max_bytes) {
  return absl::StrReplaceAll(CleanReportedText(text, max_bytes), {{"\t", " "}, {"\n", " "}});
}

void AddCandidate(const evidence::OpCandidate& c, v1::DiscoveryCandidate* out) {
  out->set_op_name(c.op_name);
  out->set_task_type(Line(c.task_type, kMaxDiscoveryTaskTypeBytes));
  out->set_op_type(Line(c.op_type, kMaxDiscoveryOpTypeBytes));
  out->set_count(c.count);
  out->set_total_duration_us(c.total_duration_us);
  out->set_incidental(Line(c.incidental, kMaxDiscoveryReasonBytes));
  for (size_t i = 0; i < c.launches.size() && i < static_cast<size_t>(kMaxDiscoveryLaunches); ++i) {
    const evidence::LaunchInfo& l = c.launches[i];
    v1::DiscoveryLaunch* o = out->add_launches();
    o->set_index(l.index);
    o->set_stream_id(l.stream_id.value_or(-1));
    o->set_task_id(l.task_id.value_or(-1));
    o->set_start_us(l.start_us.value_or(-1));
    o->set_start_ns(l.start_ns.value_or(-1));
    o->set_duration_us(l.duration_us);
  }
}

}  // namespace

v1::DiscoveryResult DiscoveryReport(const evidence::Discovery& found,
                                    const std::filesystem::path& session_dir) {
  v1::DiscoveryResult out;
  for (const evidence::OpCandidate& c : found.candidates) {
    const bool reportable = !c.op_name.empty() && c.op_name.size() <= kMaxDiscoveryOpNameBytes &&
                            IsPrintableLine(c.op_name);
    if (!reportable || out.candidates_size() >= kMaxDiscoveryCandidates) {
      out.set_candidates_left_off(out.candidates_left_off() + 1);
      continue;
    }
    AddCandidate(c, out.add_candidates());
  }
  std::string source = found.source;
  const std::string prefix = session_dir.string() + "/";
  if (source.rfind(prefix, 0) == 0) source = source.substr(prefix.size());
  out.set_source(Line(source, kMaxDiscoveryTextBytes));
  for (size_t i = 0; i < found.notes.size() && i < static_cast<size_t>(kMaxDiscoveryNotes); ++i) {
    *out.add_notes() = Line(found.notes[i], kMaxDiscoveryTextBytes);
  }
  return out;
}

}  // namespace npuperf::agent
