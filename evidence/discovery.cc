#include "evidence/discovery.h"

#include "evidence/layout.h"
#include "evidence/opprof.h"
#include "evidence/prof_layout.h"
#include "evidence/str_util.h"
#include "evidence/task_time.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

// op_summary (kernel_details) of a run, else its task_time; nullopt when
// it has neither.
absl::StatusOr<std::optional<Discovery>> FromRun(const RunLayout& run) {
  Discovery d;
  d.notes = run.notes;
  absl::StatusOr<std::vector<OpCandidate>> c;
  if (!run.op_summary.empty()) {
    c = ListCandidates(run.op_summary);
    d.source = run.op_summary.front().string();
  } else if (!run.task_time.empty()) {
    c = ListTaskTimeCandidates(run.task_time);
    d.source = run.task_time.front().string();
  } else {
    return std::optional<Discovery>();
  }
  if (!c.ok()) return c.status();
  d.candidates = *std::move(c);
  return std::optional<Discovery>(std::move(d));
}

absl::StatusOr<Discovery> FromGroup(const fs::path& group) {
  std::vector<std::string> skipped;
  for (const std::string& metric : SevenMetrics()) {
    std::string why;
    absl::StatusOr<std::optional<RunLayout>> run = DetectGroupRun(group, metric, -1, &why);
    if (!run.ok()) return internal::Annotate(run.status(), Cat("metric ", metric));
    if (!run->has_value()) {
      skipped.push_back(Cat("metric ", metric, ": ", why));
      continue;
    }
    absl::StatusOr<std::optional<Discovery>> d = FromRun(**run);
    if (!d.ok()) return internal::Annotate(d.status(), Cat("metric ", metric));
    if (d->has_value() && !(*d)->candidates.empty()) {
      (*d)->notes.insert((*d)->notes.begin(), skipped.begin(), skipped.end());
      return **std::move(d);
    }
    skipped.push_back(Cat("metric ", metric, ": no op_summary or task_time rows"));
  }
  std::string seen;
  for (const std::string& s : skipped) seen += Cat("\n  ", s);
  return absl::NotFoundError(Cat("no metric run of ", group.string(), " has kernel rows:", seen));
}

absl::StatusOr<Discovery> FromOpprof(const fs::path& dir) {
  absl::StatusOr<std::vector<OpprofSummary>> runs = ReadOpprofLaunches(dir);
  if (!runs.ok()) return runs.status();
  CandidateTable table;
  for (const OpprofSummary& s : *runs) {
    if (!s.basic || s.basic->op_name.empty()) continue;
    LaunchInfo l;
    l.duration_us = s.basic->task_duration_us;
    l.where = s.basic->file.string();
    table.Add(s.basic->op_name, "", s.basic->op_type, l);
  }
  Discovery d;
  d.candidates = table.Finish();
  d.source = Cat(dir.string(), " (msprof op)");
  return d;
}

}  // namespace

absl::StatusOr<Discovery> DiscoverCandidates(const fs::path& input) {
  absl::StatusOr<DetectedInput> in = DetectInput(input);
  if (!in.ok()) return in.status();
  absl::StatusOr<Discovery> d;
  if (in->kind == InputKind::kProfGroup) {
    d = FromGroup(in->path);
  } else if (in->kind == InputKind::kOpprof) {
    d = FromOpprof(in->path);
  } else {
    absl::StatusOr<RunLayout> run = DetectRun(in->path);
    if (!run.ok()) return run.status();
    absl::StatusOr<std::optional<Discovery>> r = FromRun(*run);
    if (!r.ok()) return r.status();
    if (!r->has_value()) {
      return absl::NotFoundError(
          Cat("no op_summary, kernel_details or task_time table in ", run->table_dir.string()));
    }
    d = **std::move(r);
  }
  if (!d.ok()) return d;
  d->notes.insert(d->notes.begin(), in->notes.begin(), in->notes.end());
  if (d->candidates.empty()) {
    return absl::NotFoundError(Cat(d->source, " contains no non-empty Op Name"));
  }
  return d;
}

}  // namespace npuperf::evidence
