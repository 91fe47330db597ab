#include "evidence/discovery.h"

#include <algorithm>
#include <map>
#include <set>

#include "evidence/kernel_names.h"
#include "evidence/layout.h"
#include "evidence/op_summary.h"
#include "evidence/opprof.h"
#include "evidence/prof_layout.h"
#include "evidence/str_util.h"
#include "evidence/task_time.h"
#include "evidence/unified_db.h"

namespace npuperf::evidence {
namespace {

namespace fs = std::filesystem;
using internal::Cat;

bool NoType(const OpCandidate& c) { return c.task_type.empty() || c.task_type == "N/A"; }

// Task types from the unified db, by name.
void TypesFromDb(const RunLayout& run, std::vector<OpCandidate>* cands, Discovery* d) {
  absl::StatusOr<std::vector<OpCandidate>> db = ListDbCandidates(run.unified_db);
  if (!db.ok()) {
    d->notes.push_back(
        Cat("task types not resolved from the unified db: ", internal::Msg(db.status())));
    return;
  }
  for (OpCandidate& c : *cands) {
    for (const OpCandidate& x : *db) {
      if (NoType(c) && x.op_name == c.op_name && !NoType(x)) {
        c.task_type = x.task_type;
        d->notes.push_back(Cat(c.op_name, ": task type ", x.task_type, " from the unified db"));
      }
    }
  }
}

// The task_time launches of op_summary's rows (same stream/task ids and
// time): an N/A task type is taken from them, and a kernel task_time names
// differently (PyPTO: PYPTO_<op> vs tilefwk_<n>_mix_aic) is said in the notes.
void JoinTaskTime(const RunLayout& run, std::vector<OpCandidate>* cands, Discovery* d) {
  absl::StatusOr<std::vector<OpCandidate>> tt = ListTaskTimeCandidates(run.task_time);
  if (!tt.ok()) return;
  std::set<std::string> names;
  for (const OpCandidate& t : *tt) names.insert(t.op_name);
  if (std::none_of(cands->begin(), cands->end(),
                   [&](const OpCandidate& c) { return NoType(c) || !names.count(c.op_name); })) {
    return;  // every name is task_time's too and every type known: nothing to join
  }
  for (const NameLink& link : LinkNames(*cands, *tt)) {  // most rows first per candidate
    OpCandidate& c = (*cands)[link.op_summary];
    const OpCandidate& t = (*tt)[link.task_time];
    const bool same = t.op_name == c.op_name;
    if (NoType(c)) {
      c.task_type = NormalizeTaskType(t.task_type);
      d->notes.push_back(Cat(c.op_name, ": task type ", c.task_type, " from task_time (", link.rows,
                             " of its ", c.count, " rows share stream/task ids with ",
                             same ? "the same name" : Cat("task_time's ", t.op_name), ")"));
    }
    if (!same) d->notes.push_back(DescribeLink(c, t, link));
  }
}

// Task types op_summary leaves N/A (CANN 9 level0) from the unified db or
// task_time; every op_summary name joined with task_time's.
void ResolveTypes(const RunLayout& run, std::vector<OpCandidate>* cands, Discovery* d) {
  if (!run.unified_db.empty() && std::any_of(cands->begin(), cands->end(), NoType)) {
    TypesFromDb(run, cands, d);
  }
  if (!run.task_time.empty()) JoinTaskTime(run, cands, d);
  for (OpCandidate& c : *cands) c.incidental = IncidentalReason(c.op_name, c.op_type, c.task_type);
}

// op_summary (kernel_details) of a run, else its unified db, else its
// task_time; nullopt when it has none.
absl::StatusOr<std::optional<Discovery>> FromRun(const RunLayout& run) {
  Discovery d;
  d.notes = run.notes;
  absl::StatusOr<std::vector<OpCandidate>> c;
  if (!run.op_summary.empty()) {
    c = ListCandidates(run.op_summary);
    d.source = run.op_summary.front().string();
    if (c.ok()) ResolveTypes(run, &*c, &d);
  } else if (!run.unified_db.empty()) {
    c = ListDbCandidates(run.unified_db);
    d.source = Cat(run.unified_db.string(), " (unified db)");
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

absl::StatusOr<std::vector<LaunchInfo>> ListLaunches(const fs::path& input,
                                                     std::string_view op_name) {
  absl::StatusOr<DetectedInput> in = DetectInput(input);
  if (!in.ok()) return in.status();
  fs::path dir = in->path;
  if (in->kind == InputKind::kProfGroup) dir = dir / "PROF_PipeUtilization";
  absl::StatusOr<RunLayout> run = DetectRun(dir);
  if (!run.ok()) return run.status();
  LaunchSelector all;
  all.kind = LaunchSelector::Kind::kAll;
  absl::StatusOr<SelectedTarget> t;
  if (!run->op_summary.empty()) {
    t = SelectTarget(run->op_summary, op_name, all);
  } else if (!run->unified_db.empty()) {
    t = SelectDbTarget(run->unified_db, op_name, all);
  } else {
    absl::StatusOr<KernelTiming> k = ReadQuickTiming(run->run_dir, op_name, all);
    if (!k.ok()) return k.status();
    return k->launches;
  }
  if (absl::IsNotFound(t.status())) {
    return absl::NotFoundError(Cat(internal::Msg(t.status()), OtherNameHint(*run, op_name)));
  }
  if (!t.ok()) return t.status();
  return t->launches;
}

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
          Cat("no op_summary, kernel_details, msprof_<ts>.db or task_time in ",
              run->table_dir.string()));
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
