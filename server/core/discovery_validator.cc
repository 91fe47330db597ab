#include "server/core/discovery_validator.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/input_rules.h"

namespace npuperf::server {
namespace {

constexpr size_t kMaxViolations = 100;

class Checker {
 public:
  std::vector<FieldViolation> out;

  void Add(const std::string& field, std::string why) {
    if (out.size() < kMaxViolations) out.push_back({field, std::move(why)});
  }
  void Text(const std::string& f, const std::string& v, size_t max_bytes, bool required = false) {
    if (required && v.empty()) {
      Add(f, "required");
    } else if (v.size() > max_bytes) {
      Add(f, absl::StrCat("at most ", max_bytes, " bytes"));
    } else if (!IsPrintableLine(v)) {
      Add(f, "must be printable text on one line");
    }
  }
  void Figure(const std::string& f, double v, double min) {
    if (!std::isfinite(v)) {
      Add(f, "must be finite");
    } else if (v < min) {
      Add(f, absl::StrCat("must be >= ", min));
    }
  }
  bool Count(const std::string& f, int n, int max) {
    if (n <= max) return true;
    Add(f, absl::StrCat(n, " entries; at most ", max));
    return false;
  }
};

void CheckLaunch(Checker& c, const std::string& f, const v1::DiscoveryLaunch& l) {
  if (l.index() < 1) c.Add(f + ".index", "must be >= 1");
  if (l.stream_id() < -1) c.Add(f + ".stream_id", "must be >= -1");
  if (l.task_id() < -1) c.Add(f + ".task_id", "must be >= -1");
  c.Figure(f + ".start_us", l.start_us(), -1);
  if (l.start_ns() < -1) c.Add(f + ".start_ns", "must be >= -1");
  c.Figure(f + ".duration_us", l.duration_us(), 0);
}

void CheckCandidate(Checker& c, const std::string& f, const v1::DiscoveryCandidate& k) {
  c.Text(f + ".op_name", k.op_name(), kMaxDiscoveryOpNameBytes, /*required=*/true);
  c.Text(f + ".task_type", k.task_type(), kMaxDiscoveryTaskTypeBytes);
  c.Text(f + ".op_type", k.op_type(), kMaxDiscoveryOpTypeBytes);
  c.Text(f + ".incidental", k.incidental(), kMaxDiscoveryReasonBytes);
  if (k.count() < 1 || k.count() < k.launches_size()) {
    c.Add(f + ".count", "must be >= 1 and at least the launches listed");
  }
  c.Figure(f + ".total_duration_us", k.total_duration_us(), 0);
  if (!c.Count(f + ".launches", k.launches_size(), kMaxDiscoveryLaunches)) return;
  for (int i = 0; i < k.launches_size(); ++i) {
    CheckLaunch(c, absl::StrCat(f, ".launches[", i, "]"), k.launches(i));
  }
}

}  // namespace

std::vector<FieldViolation> ValidateDiscovery(const v1::DiscoveryResult& d) {
  Checker c;
  if (d.candidates().empty()) c.Add("discovery.candidates", "at least one candidate");
  if (c.Count("discovery.candidates", d.candidates_size(), kMaxDiscoveryCandidates)) {
    for (int i = 0; i < d.candidates_size(); ++i) {
      CheckCandidate(c, absl::StrCat("discovery.candidates[", i, "]"), d.candidates(i));
    }
  }
  if (d.candidates_left_off() < 0) c.Add("discovery.candidates_left_off", "must be >= 0");
  c.Text("discovery.source", d.source(), kMaxDiscoveryTextBytes);
  if (c.Count("discovery.notes", d.notes_size(), kMaxDiscoveryNotes)) {
    for (int i = 0; i < d.notes_size(); ++i) {
      c.Text(absl::StrCat("discovery.notes[", i, "]"), d.notes(i), kMaxDiscoveryTextBytes);
    }
  }
  return c.out;
}

}  // namespace npuperf::server
