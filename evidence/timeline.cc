#include "evidence/timeline.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>
#include <utility>

#include "evidence/str_util.h"
#include "evidence/trace_stream.h"

namespace npuperf::evidence {
namespace {

using internal::Cat;
using internal::StartsWith;

constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();

// Digits (no sign, no leading zeros kept) times 10^scale, exactly.
absl::StatusOr<int64_t> ScaleDigits(std::string_view digits, int64_t scale, std::string_view text,
                                    std::string_view field) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(Cat(field, " '", text, "': ", why));
  };
  if (scale < 0) {
    // Digits dropped by the scale must be zero (no sub-nanosecond precision).
    const size_t drop = static_cast<size_t>(std::min<int64_t>(-scale, 1 << 20));
    const size_t keep = digits.size() > drop ? digits.size() - drop : 0;
    for (size_t i = keep; i < digits.size(); ++i) {
      if (digits[i] != '0') return bad("finer than 1 ns");
    }
    digits = digits.substr(0, keep);
    scale = 0;
  }
  int64_t v = 0;
  for (char c : digits) {
    if (v > (kMaxNs - (c - '0')) / 10) return bad("beyond int64 nanoseconds");
    v = v * 10 + (c - '0');
  }
  for (int64_t i = 0; i < scale && v != 0; ++i) {
    if (v > kMaxNs / 10) return bad("beyond int64 nanoseconds");
    v *= 10;
  }
  return v;
}

struct UnionMeter {
  bool active = false;
  int64_t s = 0, e = 0, total = 0;
  // REQUIRES: starts are nondecreasing across calls.
  void Add(int64_t start, int64_t end) {
    if (active && start <= e) {
      e = std::max(e, end);
      return;
    }
    if (active) total += e - s;
    active = true;
    s = start;
    e = end;
  }
  int64_t Total() const { return total + (active ? e - s : 0); }
};

struct Interval {
  int64_t s, e;
  bool compute;
  bool operator>(const Interval& o) const { return s > o.s; }
};

using MinEnds = std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>>;

struct LaneState {
  TimelineLane lane;
  bool named = false;
  std::priority_queue<Interval, std::vector<Interval>, std::greater<>> pending;
  int64_t last_start = std::numeric_limits<int64_t>::min();
  UnionMeter compute, movement, both;
  MinEnds compute_ends, movement_ends;
  int64_t raw_pairs = 0, events = 0, late = 0;
  std::array<int64_t, kPipeClassCount> class_counts{};
  std::map<std::string, int64_t> instructions;
  std::vector<TimelineEvent> listed;

  // In start order: pairs with the other class's active events, unions.
  void Process(const Interval& iv) {
    if (iv.s < last_start) {
      ++late;
      return;
    }
    last_start = iv.s;
    MinEnds& other = iv.compute ? movement_ends : compute_ends;
    while (!other.empty() && other.top() <= iv.s) other.pop();
    if (iv.e > iv.s) {
      raw_pairs += static_cast<int64_t>(other.size());
      (iv.compute ? compute_ends : movement_ends).push(iv.e);
    }
    (iv.compute ? compute : movement).Add(iv.s, iv.e);
    both.Add(iv.s, iv.e);
  }
  void Push(const Interval& iv, size_t window) {
    pending.push(iv);
    while (pending.size() > window) {
      Process(pending.top());
      pending.pop();
    }
  }
  void Drain() {
    for (; !pending.empty(); pending.pop()) Process(pending.top());
  }
  int64_t OverlapNs() const { return compute.Total() + movement.Total() - both.Total(); }
};

// The fast path of ParseMicrosAsNanos: plain "digits[.digits]" with at most 3
// decimals and 18 significant digits. False: use the full parser.
bool FastMicrosAsNanos(std::string_view text, int64_t* ns) {
  uint64_t v = 0;
  int digits = 0, frac = -1;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + static_cast<uint64_t>(c - '0');
      if (++digits > 19) return false;  // < 1e19: fits uint64
      if (frac >= 0 && ++frac > 3) return false;
    } else if (c == '.' && frac < 0 && digits > 0) {
      frac = 0;
    } else {
      return false;
    }
  }
  if (digits == 0 || frac == 0) return false;
  for (int i = frac < 0 ? 0 : frac; i < 3; ++i) {
    if (v > static_cast<uint64_t>(kMaxNs) / 10) return false;
    v *= 10;
  }
  if (v > static_cast<uint64_t>(kMaxNs)) return false;
  *ns = static_cast<int64_t>(v);
  return true;
}

// [ts, ts + dur) of an event in ns (dur absent: 0); errors name the event.
absl::StatusOr<std::pair<int64_t, int64_t>> EventSpan(const TraceEvent& ev, const char* what) {
  int64_t ts = 0, dur = 0;
  const bool fast = ev.has_ts && FastMicrosAsNanos(ev.ts, &ts) &&
                    (!ev.has_dur || FastMicrosAsNanos(ev.dur, &dur));
  if (!fast) {
    const std::string where = Cat(what, " #", ev.index, " (", ev.name, ") ");
    absl::StatusOr<int64_t> t = ParseMicrosAsNanos(ev.has_ts ? ev.ts : "", Cat(where, "ts"));
    if (!t.ok()) return t.status();
    absl::StatusOr<int64_t> d = ParseMicrosAsNanos(ev.has_dur ? ev.dur : "0", Cat(where, "dur"));
    if (!d.ok()) return d.status();
    ts = *t;
    dur = *d;
  }
  if (ts > kMaxNs - dur) {
    return absl::InvalidArgumentError(
        Cat(what, " #", ev.index, " (", ev.name, ") ts + dur overflows"));
  }
  return std::make_pair(ts, ts + dur);
}

struct Target {
  TimelineLane lane;
  int64_t start = 0, dur = 0;
};

// One read of the trace. Pass 1 finds the targets and lanes and analyses
// instruction events once the first target is known; when instruction events
// came before it, pass 2 reads again with the window known from the start.
class Analyzer {
 public:
  Analyzer(const TimelineOptions& o, std::optional<Target> window)
      : options_(&o), window_(std::move(window)), fixed_window_(window_.has_value()) {}

  absl::Status OnEvent(const TraceEvent& ev);

  std::vector<Target> targets;
  bool pre_target_events = false;
  std::unordered_map<std::string, LaneState> lanes;
  int64_t in_window = 0, outside_window = 0;

 private:
  LaneState& Lane(const TraceEvent& ev);
  absl::Status OnTarget(const TraceEvent& ev);
  absl::Status OnInstruction(const TraceEvent& ev, LaneState& lane);

  const TimelineOptions* options_;
  std::optional<Target> window_;
  bool fixed_window_;
  std::string key_;
};

LaneState& Analyzer::Lane(const TraceEvent& ev) {
  key_.assign(ev.pid).push_back('\x1f');
  key_.append(ev.tid);
  auto it = lanes.find(key_);
  if (it == lanes.end()) {
    it = lanes.emplace(key_, LaneState{}).first;
    it->second.lane = {ev.pid, ev.tid, ""};
  }
  return it->second;
}

absl::Status Analyzer::OnTarget(const TraceEvent& ev) {
  if (fixed_window_) return absl::OkStatus();
  if (!ev.has_dur) {
    return absl::InvalidArgumentError(Cat("target event #", ev.index, " has no dur"));
  }
  absl::StatusOr<std::pair<int64_t, int64_t>> span = EventSpan(ev, "target event");
  if (!span.ok()) return span.status();
  targets.push_back({{ev.pid, ev.tid, ""}, span->first, span->second - span->first});
  if (!window_) window_ = targets.front();
  return absl::OkStatus();
}

absl::Status Analyzer::OnInstruction(const TraceEvent& ev, LaneState& lane) {
  absl::StatusOr<std::pair<int64_t, int64_t>> span = EventSpan(ev, "event");
  if (!span.ok()) return span.status();
  const int64_t ws = window_->start, we = window_->start + window_->dur;
  const auto [s, e] = *span;
  const bool inside = e == s ? (s >= ws && s <= we) : (s < we && e > ws);
  if (!inside) {
    ++outside_window;
    return absl::OkStatus();
  }
  ++in_window;
  ++lane.events;
  const PipeClass cls = ClassifyInstruction(ev.name);
  ++lane.class_counts[static_cast<int>(cls)];
  ++lane.instructions[ev.name];
  if (lane.listed.size() < options_->max_listed_events) {
    TimelineEvent t{"", ev.pid, ev.tid, ev.name, cls, s - ws, e - s, {}};
    t.args.assign(ev.args.begin(), ev.args.begin() + static_cast<ptrdiff_t>(ev.arg_count));
    lane.listed.push_back(std::move(t));
  }
  if (cls == PipeClass::kCompute || cls == PipeClass::kMovement) {
    lane.Push({std::max(s, ws), std::min(e, we), cls == PipeClass::kCompute},
              options_->reorder_window);
  }
  return absl::OkStatus();
}

absl::Status Analyzer::OnEvent(const TraceEvent& ev) {
  if (ev.ph == "M" && ev.name == "thread_name") {
    const std::string* name = ev.Arg("name");
    LaneState& lane = Lane(ev);
    lane.named = name != nullptr;
    lane.lane.name = name != nullptr ? *name : "";
    return absl::OkStatus();
  }
  if (ev.ph != "X" || !ev.has_name) return absl::OkStatus();
  if (ev.name == options_->op_name) return OnTarget(ev);
  LaneState& lane = Lane(ev);
  if (lane.named && !StartsWith(lane.lane.name, "Group")) return absl::OkStatus();
  if (!window_) {
    pre_target_events = true;
    return absl::OkStatus();
  }
  if (pre_target_events && !fixed_window_) return absl::OkStatus();  // pass 2 redoes them
  return OnInstruction(ev, lane);
}

absl::StatusOr<Analyzer> ReadPass(const std::filesystem::path& trace, const TimelineOptions& o,
                                  std::optional<Target> window, TraceReadStats* stats) {
  absl::StatusOr<std::unique_ptr<TraceStream>> stream = TraceStream::Open(trace, o.buffer_bytes);
  if (!stream.ok()) return stream.status();
  Analyzer a(o, std::move(window));
  absl::StatusOr<TraceReadStats> read =
      (*stream)->ForEach([&a](const TraceEvent& ev) { return a.OnEvent(ev); });
  if (!read.ok()) return read.status();
  *stats = *read;
  for (auto& [key, lane] : a.lanes) lane.Drain();
  return a;
}

void AddLaneResults(Analyzer& a, const TimelineOptions& o, TimelineEvidence& t) {
  std::vector<LaneState*> group;
  for (auto& [key, lane] : a.lanes) {
    if (lane.named && StartsWith(lane.lane.name, "Group")) group.push_back(&lane);
  }
  std::sort(group.begin(), group.end(), [](const LaneState* x, const LaneState* y) {
    return std::tie(x->lane.pid, x->lane.tid) < std::tie(y->lane.pid, y->lane.tid);
  });
  for (int c = 0; c < kPipeClassCount; ++c) {
    t.pipe_event_counts[std::string(PipeClassName(static_cast<PipeClass>(c)))] = 0;
  }
  for (LaneState* lane : group) {
    t.monitored_lanes.push_back(lane->lane);
    for (int c = 0; c < kPipeClassCount; ++c) {
      t.pipe_event_counts[std::string(PipeClassName(static_cast<PipeClass>(c)))] +=
          lane->class_counts[c];
    }
    for (const auto& [name, n] : lane->instructions) t.instruction_event_counts[name] += n;
    const LaneOverlap lo{lane->lane, lane->raw_pairs, lane->OverlapNs(), lane->events, lane->late};
    t.raw_event_pairs += lo.raw_event_pairs;
    t.overlap_ns += lo.overlap_ns;
    t.late_events += lo.late_events;
    t.events_in_window += lo.events;
    t.lanes.push_back(lo);
    for (TimelineEvent& e : lane->listed) {
      e.lane = lane->lane.name;
      t.events.push_back(std::move(e));
    }
  }
  std::stable_sort(t.events.begin(), t.events.end(), [](const auto& x, const auto& y) {
    return x.start_offset_ns < y.start_offset_ns;
  });
  if (t.events.size() > o.max_listed_events) t.events.resize(o.max_listed_events);
}

void AddLimitations(const TraceReadStats& stats, TimelineEvidence& t) {
  t.limitations = {
      "instruction profiling perturbs timing: these durations never replace the formal round's",
      "the monitored BIU lanes are a sampled, representative subset of the cores and do not "
      "generalise to all cores",
      "same-lane interval overlap shows pipes busy at the same time on one core; proving a "
      "pipeline needs the Tile DAG (adjacent-Tile load/compute/store), so the status stays "
      "requires_tile_dag_correlation",
      "events on different lanes are never counted as overlap (cross-lane concurrency proves "
      "nothing)"};
  if (t.events_in_window > static_cast<int64_t>(t.events.size())) {
    t.limitations.push_back(Cat("events lists ", t.events.size(), " of ", t.events_in_window,
                                " instruction events in the window (the first read per lane, "
                                "earliest first); counts and overlap cover all"));
  }
  if (t.late_events > 0) {
    t.limitations.push_back(Cat(t.late_events,
                                " events arrived out of start order beyond the reorder window "
                                "and are counted but not in the overlap"));
  }
  if (stats.unterminated_array) {
    t.limitations.push_back("the trace's event array has no closing ']' (read to end of file)");
  }
}

// The evidence's identity and attribution after pass 1; without exactly one
// target nothing is counted.
TimelineEvidence Attribution(const std::filesystem::path& trace, const TimelineOptions& options,
                             const TraceReadStats& stats, size_t targets) {
  TimelineEvidence t;
  t.target_op_name = options.op_name;
  t.trace = trace;
  t.trace_bytes = stats.bytes;
  t.trace_events = stats.events;
  t.passes = 1;
  t.target_candidates = static_cast<int>(targets);
  t.attribution_status = targets == 0   ? "target_not_found"
                         : targets == 1 ? "unique_exact_target_window"
                                        : "duplicate_target_window";
  t.pipeline_evidence_status = "unverified";
  if (targets != 1) {
    t.limitations.push_back(Cat("no unique target window: ", targets,
                                " complete events are named exactly '", options.op_name, "'"));
  }
  return t;
}

}  // namespace

absl::StatusOr<int64_t> ParseMicrosAsNanos(std::string_view text, std::string_view field) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(Cat(field, " '", text, "': ", why));
  };
  std::string digits;
  int64_t frac = 0, exp = 0;
  size_t i = 0;
  bool any = false, dot = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      any = true;
      if (!(digits.empty() && c == '0')) digits.push_back(c);
      if (dot) ++frac;
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!any) return bad("not a non-negative decimal number of microseconds");
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    int64_t sign = 1, e = 0;
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) sign = text[i++] == '-' ? -1 : 1;
    const size_t start = i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9' && e < 100000; ++i) {
      e = e * 10 + (text[i] - '0');
    }
    if (i == start) return bad("malformed exponent");
    exp = sign * e;
  }
  if (i != text.size()) return bad("not a non-negative decimal number of microseconds");
  return ScaleDigits(digits, exp - frac + 3, text, field);
}

std::string FormatNanosAsMicros(int64_t ns) {
  const bool negative = ns < 0;
  // |INT64_MIN| does not fit; the magnitude is taken as unsigned.
  const uint64_t mag = negative ? uint64_t{0} - static_cast<uint64_t>(ns) : uint64_t(ns);
  std::string frac = std::to_string(mag % 1000);
  frac.insert(0, 3 - frac.size(), '0');
  return Cat(negative ? "-" : "", mag / 1000, ".", frac);
}

std::string_view PipeClassName(PipeClass c) {
  switch (c) {
    case PipeClass::kCompute: return "compute";
    case PipeClass::kMovement: return "movement";
    case PipeClass::kScalar: return "scalar";
    case PipeClass::kWait: return "wait";
    case PipeClass::kUnknown: break;
  }
  return "unknown";
}

PipeClass ClassifyInstruction(std::string_view n) {
  if (n == "MTE1" || n == "MTE2" || n == "MTE3" || StartsWith(n, "FIX")) {
    return PipeClass::kMovement;
  }
  if (StartsWith(n, "VEC") || StartsWith(n, "CUBE") || StartsWith(n, "MAC") || n == "M") {
    return PipeClass::kCompute;
  }
  if (n == "SU" || StartsWith(n, "SCALAR")) return PipeClass::kScalar;
  if (StartsWith(n, "WAIT") || StartsWith(n, "BARRIER") || StartsWith(n, "SYNC")) {
    return PipeClass::kWait;
  }
  return PipeClass::kUnknown;
}

absl::StatusOr<TimelineEvidence> SummarizeTimeline(const std::filesystem::path& trace,
                                                   const TimelineOptions& options) {
  if (options.op_name.empty()) return absl::InvalidArgumentError("--op-name is required");
  TraceReadStats stats;
  absl::StatusOr<Analyzer> a = ReadPass(trace, options, std::nullopt, &stats);
  if (!a.ok()) return a.status();
  TimelineEvidence t = Attribution(trace, options, stats, a->targets.size());
  if (t.target_candidates != 1) return t;
  const Target target = a->targets.front();
  if (a->pre_target_events) {
    TraceReadStats again;
    a = ReadPass(trace, options, target, &again);
    if (!a.ok()) return a.status();
    t.passes = 2;
  }
  t.target_lane = target.lane;
  const auto named = a->lanes.find(Cat(target.lane.pid, "\x1f", target.lane.tid));
  if (named != a->lanes.end()) t.target_lane->name = named->second.lane.name;
  t.target_start_ns = target.start;
  t.target_duration_ns = target.dur;
  t.events_outside_window = a->outside_window;
  AddLaneResults(*a, options, t);
  AddLimitations(stats, t);
  if (t.monitored_lanes.empty()) {
    t.limitations.push_back(
        "no Group<N>-aiv<k>/-aic<k> lanes: the trace has no BIU instruction lanes (collect with "
        "--instr-profiling=on and export with the biu_perf report)");
  } else {
    t.pipeline_evidence_status = "requires_tile_dag_correlation";
  }
  return t;
}

}  // namespace npuperf::evidence
