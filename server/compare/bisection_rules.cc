#include "server/compare/bisection_rules.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/compare/verdict_stats.h"

namespace npuperf::server {
namespace {

std::string Change(double ratio) { return absl::StrFormat("%+.1f%%", (ratio - 1) * 100); }

std::string Interval(const Judgement& j) {
  if (!(j.low > 0)) return "no interval (too few samples)";
  return absl::StrFormat("interval [%.4f, %.4f]", j.low, j.high);
}

bool Measured(const RevisionSamples& r) { return !r.failed && !r.samples.empty(); }
bool Untried(const RevisionSamples& r) {
  return !r.failed && r.samples.empty() && r.in_flight == 0;
}

// The change of a ratio as a step: 1.28 and 1/1.28 are both 0.28.
double StepOf(double ratio) { return ratio >= 1 ? ratio - 1 : 1 / ratio - 1; }

BisectionDecision Refuse(BisectionDecision d, std::string reason) {
  d.phase = BisectionPhase::kRefused;
  d.to_run.clear();
  d.reason = std::move(reason);
  return d;
}

// Unmeasured revisions waiting for probes, between two measured ones.
struct Gap {
  std::vector<int> untried;
  int probes = 0;
};

// Spreads `*free` probes over the gaps in proportion to their size (the gap
// whose parts would stay largest gets the next one), evenly spaced inside
// each, and appends them to `to_run`.
void Probe(std::vector<Gap> gaps, int* free, std::vector<int>* to_run) {
  while (*free > 0) {
    Gap* best = nullptr;
    double best_part = 0;
    for (Gap& g : gaps) {
      if (g.probes >= static_cast<int>(g.untried.size())) continue;
      const double part = static_cast<double>(g.untried.size()) / (g.probes + 1);
      if (part > best_part) best = &g, best_part = part;
    }
    if (best == nullptr) break;
    ++best->probes;
    --*free;
  }
  for (const Gap& g : gaps) {
    const int m = static_cast<int>(g.untried.size());
    for (int j = 1; j <= g.probes; ++j) {
      // Strictly increasing in j while probes <= m: each probe its own revision.
      to_run->push_back(g.untried[static_cast<size_t>(j * (m + 1) / (g.probes + 1) - 1)]);
    }
  }
}

std::vector<int> UntriedBetween(const std::vector<RevisionSamples>& revs, int from, int to) {
  std::vector<int> out;
  for (int i = from + 1; i < to; ++i) {
    if (Untried(revs[static_cast<size_t>(i)])) out.push_back(i);
  }
  return out;
}

bool InFlightBetween(const std::vector<RevisionSamples>& revs, int from, int to) {
  for (int i = from + 1; i < to; ++i) {
    if (revs[static_cast<size_t>(i)].in_flight > 0) return true;
  }
  return false;
}

// The ends: measured first, then judged with the smallest step.
// Returns true when bisection may go on (d->ends DIFFERENT).
bool JudgeEnds(const std::vector<RevisionSamples>& revs, const BisectionOptions& o, int* free,
               BisectionDecision* d) {
  const int last = static_cast<int>(revs.size()) - 1;
  const RevisionSamples& good = revs.front();
  const RevisionSamples& bad = revs.back();
  auto run = [&](int end) {
    const RevisionSamples& r = revs[static_cast<size_t>(end)];
    if (*free > 0 && r.in_flight == 0 && r.runs < o.max_runs_per_revision) {
      d->to_run.push_back(end);
      --*free;
    }
  };
  d->phase = BisectionPhase::kMeasuringEnds;
  if (good.samples.empty() || bad.samples.empty()) {
    if (good.samples.empty()) run(0);
    if (bad.samples.empty()) run(last);
    if (o.speculate && !InFlightBetween(revs, 0, last)) {
      Probe({Gap{UntriedBetween(revs, 0, last)}}, free, &d->to_run);
    }
    return false;
  }
  d->ends = JudgeRevisions(good.samples, bad.samples, o.min_step_pct / 100, o);
  switch (d->ends->relation) {
    case Relation::kDifferent: return true;
    case Relation::kSame:
      *d = Refuse(*d,
                  absl::StrCat("the ends do not differ: bad/good ", Change(d->ends->ratio), ", ",
                               Interval(*d->ends), " inside ±",
                               absl::StrFormat("%.1f%%", o.min_step_pct), ": nothing to bisect"));
      return false;
    case Relation::kUnknown: break;
  }
  if (good.in_flight > 0 || bad.in_flight > 0) return false;  // a repeat is running
  if (good.runs >= o.max_runs_per_revision && bad.runs >= o.max_runs_per_revision) {
    *d = Refuse(*d, absl::StrCat("the ends are undecided after ", o.max_runs_per_revision,
                                 " runs each: ", d->ends->rule));
    return false;
  }
  run(0);
  run(last);
  return false;
}

}  // namespace

Judgement JudgeRevisions(const std::vector<double>& a, const std::vector<double>& b, double step,
                         const BisectionOptions& o) {
  const double alpha = o.alpha;
  Judgement j;
  for (const std::vector<double>* side : {&a, &b}) {
    if (side->empty() || std::any_of(side->begin(), side->end(),
                                     [](double v) { return !(v > 0) || !std::isfinite(v); })) {
      j.rule = "a side has no samples or one that is not positive and finite";
      return j;  // UNKNOWN: never a verdict on bad numbers
    }
  }
  const MannWhitney mw = MannWhitneyU(a, b);
  const RatioEstimate hl = HodgesLehmannRatio(a, b, o.same_alpha);
  j.ratio = hl.ratio;
  j.p_value = mw.p_value;
  if (hl.low && hl.high) {
    j.low = *hl.low;
    j.high = *hl.high;
  }
  const double up = 1 + step, down = 1 / (1 + step);
  const std::string bound = absl::StrFormat("±%.1f%%", step * 100);
  const std::string p = absl::StrFormat("p=%.3g", mw.p_value);
  // DIFFERENT also needs the (1 - alpha) interval clear of half a step: a
  // noisy pair whose estimate crosses a step by chance stays UNKNOWN and runs
  // again.
  const RatioEstimate wide = HodgesLehmannRatio(a, b, alpha);
  const double half_up = 1 + step / 2, half_down = 1 / half_up;
  const bool clear = wide.low && wide.high && (*wide.low >= half_up || *wide.high <= half_down);
  if (mw.p_value < alpha && (hl.ratio >= up || hl.ratio <= down) && clear) {
    j.relation = Relation::kDifferent;
    j.rule = absl::StrCat(p, "<", alpha, " and ", Change(hl.ratio), " beyond ", bound);
  } else if (hl.low && hl.high && *hl.low > down && *hl.high < up) {
    j.relation = Relation::kSame;
    j.rule = absl::StrCat(Change(hl.ratio), ", ", Interval(j), " inside ", bound);
  } else {
    j.relation = Relation::kUnknown;
    j.rule =
        absl::StrCat(p, ", ", Change(hl.ratio), ", ", Interval(j), ": neither beyond nor inside ",
                     bound, " (", a.size(), " vs ", b.size(), " samples)");
  }
  return j;
}

BisectionDecision DecideBisection(const std::vector<RevisionSamples>& revs, int free_devices,
                                  const BisectionOptions& o) {
  BisectionDecision d;
  const int n = static_cast<int>(revs.size());
  if (n < 2) return Refuse(d, "revisions: a range needs a good and a bad revision");
  if (n == 2) {
    return Refuse(d,
                  "revisions: a one-commit range: its bad revision is the only candidate, nothing "
                  "to bisect");
  }
  if (n > kMaxBisectionRevisions) {
    return Refuse(d, absl::StrCat("revisions: ", n - 1, " commits, at most ",
                                  kMaxBisectionRevisions - 1, ": narrow the range"));
  }
  if (revs.front().failed)
    return Refuse(d, "the good revision's run failed: nothing to bisect from");
  if (revs.back().failed) return Refuse(d, "the bad revision's run failed: nothing to bisect to");
  int free = std::max(0, free_devices);
  if (!JudgeEnds(revs, o, &free, &d)) return d;

  d.phase = BisectionPhase::kBisecting;
  d.step = std::max(o.min_step_pct / 100, o.step_fraction * StepOf(d.ends->ratio));
  std::vector<int> measured;
  for (int i = 0; i < n; ++i) {
    if (Measured(revs[static_cast<size_t>(i)])) measured.push_back(i);
  }
  std::vector<int> repeats;
  std::vector<Gap> gaps;
  bool waiting = false;
  for (size_t k = 0; k + 1 < measured.size(); ++k) {
    const int x = measured[k], y = measured[k + 1];
    const RevisionSamples& rx = revs[static_cast<size_t>(x)];
    const RevisionSamples& ry = revs[static_cast<size_t>(y)];
    const Judgement j = JudgeRevisions(rx.samples, ry.samples, d.step, o);
    const bool in_flight = InFlightBetween(revs, x, y);
    waiting = waiting || in_flight;
    if (j.relation == Relation::kSame) continue;
    if (j.relation == Relation::kDifferent) {
      std::vector<int> untried = UntriedBetween(revs, x, y);
      if (!untried.empty()) {
        if (!in_flight) gaps.push_back(Gap{std::move(untried)});
      } else if (!in_flight) {
        bool confirmed = true;
        for (int side : {x, y}) {
          const RevisionSamples& r = revs[static_cast<size_t>(side)];
          if (r.runs >= o.confirm_runs || r.runs >= o.max_runs_per_revision) continue;
          confirmed = false;
          if (r.in_flight > 0) {
            waiting = true;
          } else if (std::find(repeats.begin(), repeats.end(), side) == repeats.end()) {
            repeats.push_back(side);
          }
        }
        if (!confirmed) continue;
        Culprit c;
        c.index = y;
        c.parent = x;
        c.judgement = j;
        for (int i = x + 1; i <= y; ++i) c.candidates.push_back(i);  // skipped ones, then y
        d.culprits.push_back(std::move(c));
      }
      continue;
    }
    // UNKNOWN: another run of each side below the budget; both at it: undecided.
    if (rx.in_flight > 0 || ry.in_flight > 0) {
      waiting = true;
      continue;
    }
    bool any = false;
    for (int side : {x, y}) {
      if (revs[static_cast<size_t>(side)].runs >= o.max_runs_per_revision) continue;
      any = true;
      if (std::find(repeats.begin(), repeats.end(), side) == repeats.end()) repeats.push_back(side);
    }
    if (!any) d.undecided.push_back(Undecided{x, y, j});
  }
  for (int r : repeats) {
    const RevisionSamples& rev = revs[static_cast<size_t>(r)];
    const int again = std::min(std::max(1, rev.runs), o.max_runs_per_revision - rev.runs);
    for (int k = 0; k < again && free > 0; ++k, --free) d.to_run.push_back(r);
  }
  int probes = o.max_probes > 0 ? std::min(free, o.max_probes) : free;
  Probe(std::move(gaps), &probes, &d.to_run);
  for (const RevisionSamples& r : revs) waiting = waiting || r.in_flight > 0;
  if (d.to_run.empty() && !waiting && repeats.empty()) {
    d.phase = BisectionPhase::kDone;
    if (d.culprits.empty()) {
      d.reason =
          absl::StrCat("no single step of at least ", absl::StrFormat("%.1f%%", d.step * 100),
                       " between neighbouring revisions",
                       d.undecided.empty() ? "" : " (some pairs stayed undecided)",
                       ": the change is spread over the range or hidden by noise");
    }
  }
  return d;
}

}  // namespace npuperf::server
