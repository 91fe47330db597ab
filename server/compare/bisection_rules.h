// Bisection rules: which revisions of a commit range to measure next, and
// what the measured ones say (docs/comparisons.md, "Bisection").
//
// Pure functions over the duration samples of the range's revisions (no
// store, no clock, no gRPC): the service keeps the samples of each revision's
// runs and asks Decide() again whenever a run ends, so a bisection moves on
// from any replica and after a restart exactly as before.
//
// The range is a first-parent list: index 0 is the good end, the last index
// the bad end. Two revisions are judged three ways, as Chromium's Pinpoint
// does (prior-art.md §9), on their samples a and b with the range's step s:
//   DIFFERENT  Mann-Whitney p < alpha, the Hodges-Lehmann ratio b/a at least
//              a step away from 1 (|log ratio| >= log(1 + s)) and its
//              (1 - alpha) interval clear of half a step
//   SAME       the (1 - same_alpha) Hodges-Lehmann interval of b/a lies
//              inside (1/(1+s), 1+s): equivalent within a step (TOST)
//   UNKNOWN    neither: more runs of both, up to the budget, instead of a
//              guess (a borderline n = 3 call can send a bisection into a
//              window that no longer holds the change)
// The ends are judged with the smallest step (min_step_pct). Inside the range
// the step is the larger of min_step_pct and step_fraction of the ends'
// change, so a noise-only commit is never a culprit and a change that arrives
// in two steps of at least that size gives two culprits.
//
// Decide() walks the measured revisions in order and judges each neighbour
// pair: DIFFERENT with unmeasured revisions between is a suspect interval (it
// gets probes); DIFFERENT with none left between, once confirmed on
// confirm_runs runs of each side, names a culprit (with the
// skipped revisions before it, if any, as equally possible: git bisect
// skip); UNKNOWN asks for another run of each side, and at the budget counts
// as SAME, listed as undecided (no culprit is claimed on it). Free devices are spent k-ary: repeats
// first (both sides of an UNKNOWN pair below the budget, in parallel), then probes spread over the
// suspect intervals in proportion to their unmeasured revisions, evenly spaced inside each; an
// interval with a run in flight gets no more probes until it ends (no speculative runs). A revision
// whose run failed is skipped.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace npuperf::server {

struct BisectionOptions {
  // Significance of DIFFERENT.
  double alpha = 0.01;
  // SAME is an equivalence test (two one-sided tests at same_alpha / 2): the
  // (1 - same_alpha) interval inside a step.
  double same_alpha = 0.10;
  // The smallest step judged a change, percent (compare's threshold).
  double min_step_pct = 2;
  // Inside the range: a step is at least this fraction of the ends' change.
  double step_fraction = 0.25;
  // Runs of one revision at most (each adds a run's samples).
  int max_runs_per_revision = 4;
  // A culprit is named only when both sides of its pair have at least this
  // many runs and are still DIFFERENT: many neighbour pairs are judged, and
  // one of them passing p < alpha by chance must not become a culprit.
  int confirm_runs = 2;
  // While the ends are measured, spare devices probe the range evenly. Their
  // samples count once the ends differ; if the range is refused they were
  // spent for nothing (the service cancels what is still queued). Off: the
  // ends are judged before any probe runs.
  bool speculate = false;
  // Probes per call at most (0: as many as free devices). 1 is a plain
  // binary bisection with the same verdicts (what bisect_bench compares).
  int max_probes = 0;
};

// Ranges longer than this (revisions, both ends included) are refused.
inline constexpr int kMaxBisectionRevisions = 1025;  // 1,024 commits

enum class Relation { kSame, kDifferent, kUnknown };

// A three-way judgement of revision b against revision a.
struct Judgement {
  Relation relation = Relation::kUnknown;
  // Hodges-Lehmann estimate of b/a and its (1 - same_alpha) interval (0 when the
  // samples are too few for it); the Mann-Whitney p.
  double ratio = 0, low = 0, high = 0, p_value = 1;
  // Why, with the figures ("p=0.0079 and +28.0% >= 7.0%").
  std::string rule;
};

// step > 0. A side that is empty or holds a value that is not positive and
// finite is UNKNOWN (with the rule saying so).
Judgement JudgeRevisions(const std::vector<double>& a, const std::vector<double>& b, double step,
                         const BisectionOptions& options);

// What the service knows of one revision.
struct RevisionSamples {
  // Duration samples (us) of its finished runs, pooled.
  std::vector<double> samples;
  // Runs finished with samples, and runs queued or running.
  int runs = 0;
  int in_flight = 0;
  // A run failed (the operator does not build or its runner failed): the
  // revision is skipped, like git bisect skip.
  bool failed = false;
};

enum class BisectionPhase {
  kMeasuringEnds,  // the ends are being measured
  kRefused,        // the ends do not differ, an end failed, or a bad range
  kBisecting,      // probes and repeats are running
  kDone,           // nothing left to measure: culprits (maybe none) named
};

struct Culprit {
  // The first revision of the new level; with skipped revisions just before
  // it, `candidates` lists them and it (oldest first), any of which may be
  // the culprit. Else candidates == {index}.
  int index = 0;
  std::vector<int> candidates;
  // The revision before it that was measured (its parent unless skipped).
  int parent = 0;
  Judgement judgement;  // index against parent
};

// A neighbour pair of measured revisions still UNKNOWN at the budget.
struct Undecided {
  int from = 0, to = 0;
  Judgement judgement;
};

struct BisectionDecision {
  BisectionPhase phase = BisectionPhase::kMeasuringEnds;
  // The revisions to run now, at most `free_devices` (a revision is listed
  // once per run: a repeat may run on several devices at once; repeats
  // before probes).
  std::vector<int> to_run;
  // The ends judged (once both have samples) and the step used inside.
  std::optional<Judgement> ends;
  double step = 0;
  std::vector<Culprit> culprits;
  std::vector<Undecided> undecided;
  // kRefused: why, naming the field or the figures.
  std::string reason;
};

// The next move for a range of revisions (see the header comment).
BisectionDecision DecideBisection(const std::vector<RevisionSamples>& revisions, int free_devices,
                                  const BisectionOptions& options);

}  // namespace npuperf::server
