#include "client/bisect_commands.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/format.h"
#include "client/git_range.h"
#include "common/sha256.h"

namespace npuperf::client {
namespace {

namespace fs = std::filesystem;

// Commits one bisection may span (server/compare/bisection_rules.h
// kMaxBisectionRevisions - 1): counted before anything is listed.
constexpr int kMaxCommits = 1024;
// Culprits' notable metric deltas printed at most.
constexpr int kMaxDeltasShown = 6;

std::string Short(const std::string& commit) { return commit.substr(0, 12); }

bool Terminal(v1::BisectionState s) {
  return s == v1::BISECTION_STATE_DONE || s == v1::BISECTION_STATE_REFUSED ||
         s == v1::BISECTION_STATE_FAILED || s == v1::BISECTION_STATE_CANCELLED;
}

std::string StateText(v1::BisectionState s) {
  const std::string name = v1::BisectionState_Name(s);
  return absl::StartsWith(name, "BISECTION_STATE_") ? name.substr(16) : name;
}

// The header's contract.
int ExitCodeOf(const v1::Bisection& b) {
  return b.state() == v1::BISECTION_STATE_DONE && b.culprits_size() > 0 ? kExitOk : kExitNoVerdict;
}

std::string JudgementText(const v1::BisectionJudgement& j) {
  if (j.relation().empty()) return "not judged yet";
  std::string ci = j.ratio_ci_low() > 0
                       ? absl::StrFormat(" [%.3f, %.3f]", j.ratio_ci_low(), j.ratio_ci_high())
                       : "";
  return absl::StrFormat("x%.3f%s %s (%s)", j.ratio(), ci, j.relation(), j.rule());
}

// The notable metric deltas of e, the largest relative changes first, at
// most n (a ratio's change counts as it is: it is relative already).
std::vector<const v1::MetricDelta*> LargestNotable(const v1::RoundComparison& e, int n) {
  std::vector<const v1::MetricDelta*> out;
  for (const v1::MetricDelta& d : e.metric_deltas()) {
    if (d.notable()) out.push_back(&d);
  }
  auto size = [](const v1::MetricDelta* d) {
    return d->baseline() != 0 ? std::abs(d->delta() / d->baseline()) : std::abs(d->delta());
  };
  std::stable_sort(out.begin(), out.end(), [&](const v1::MetricDelta* a, const v1::MetricDelta* b) {
    return size(a) > size(b);
  });
  if (static_cast<int>(out.size()) > n) out.resize(static_cast<size_t>(n));
  return out;
}

// The operator's target name: --op-name-map's entry for it, else --op-name.
absl::StatusOr<std::string> OpNameOf(const SubmitArgs& a, const std::string& name) {
  auto map = ReadOpNameMap(a.op_name_map);
  if (!map.ok()) return map.status();
  const auto it = map->find(name);
  return it != map->end() ? it->second : a.op_name;
}

// Fills req's revisions from git (every revision packed, the distinct
// bundles uploaded) and its idempotency key; req.spec holds the one
// operator (named) and its options already.
absl::Status AddRevisions(Session& s, GitRepository& git, const std::vector<GitRevision>& range,
                          const fs::path& dir, const std::string& key, bool key_per_dir,
                          v1::StartBisectionRequest* req, std::ostream& err) {
  auto in_repo = git.PathInRepo(dir);
  if (!in_repo.ok()) return in_repo.status();
  if (absl::Status st = git.CheckCommitted({*in_repo}); !st.ok()) return st;
  const std::string name = req->spec().operators(0).name();
  req->set_repository(fs::absolute(git.path()).lexically_normal().string());
  std::set<std::string> uploaded;
  const std::string prefix = *in_repo + "/";
  for (size_t i = 0; i < range.size(); ++i) {
    const GitRevision& rev = range[i];
    auto tar = git.PackAtRevision(rev.hash, *in_repo, fs::temp_directory_path(), kMaxBundleBytes);
    if (!tar.ok()) return tar.status();
    const std::string sha = Sha256Hex(*tar);
    if (uploaded.insert(sha).second) {
      auto up = UploadBundleBytes(s, name, *tar, absl::StrCat(name, " at ", Short(rev.hash)));
      if (!up.ok()) return up.status();
    }
    v1::BisectionRevision* r = req->add_revisions();
    r->set_commit(rev.hash);
    r->set_subject(rev.subject.substr(0, 256));
    r->set_author(rev.author.substr(0, 256));
    r->set_bundle_sha256(sha);
    if (i > 0) {
      auto files = git.ChangedFiles(range[i - 1].hash, rev.hash, *in_repo);
      if (!files.ok()) return files.status();
      for (const std::string& f : *files) {
        r->add_changed_files(absl::StartsWith(f, prefix) ? f.substr(prefix.size()) : f);
      }
    }
  }
  err << "npuperf: " << name << ": " << range.size() - 1 << " commits from "
      << Short(range.front().hash) << " to " << Short(range.back().hash) << ", " << uploaded.size()
      << " distinct bundle(s) uploaded\n";
  // The same command again returns the same bisection (unless a key is given).
  std::string k = key;
  if (k.empty()) {
    v1::StartBisectionRequest options = *req;
    options.clear_revisions();
    k = absl::StrCat("bisect-",
                     Sha256Hex(absl::StrCat(*in_repo, "\n", range.front().hash, "\n",
                                            range.back().hash, "\n", options.SerializeAsString()))
                         .substr(0, 32));
  } else if (key_per_dir) {
    k = absl::StrCat(k, ".", name);
  }
  req->set_idempotency_key(k.substr(0, 128));
  return absl::OkStatus();
}

// The name of the operator directory (its last component).
std::string DirName(const fs::path& dir) {
  fs::path normal = fs::absolute(dir).lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();
  return normal.filename().string();
}

// One operator directory's bisection request from bisect's flags.
absl::StatusOr<v1::StartBisectionRequest> BuildBisection(Session& s, GitRepository& git,
                                                         const BisectArgs& a,
                                                         const std::vector<GitRevision>& range,
                                                         const fs::path& dir, std::ostream& err) {
  const std::string name = DirName(dir);
  v1::StartBisectionRequest req;
  if (absl::Status st = FillSpecParams(a.submit, req.mutable_spec()); !st.ok()) return st;
  req.mutable_spec()->mutable_params()->set_mode(a.mode == "standard" ? v1::PROFILE_MODE_STANDARD
                                                                      : v1::PROFILE_MODE_QUICK);
  req.mutable_spec()->set_kind(v1::COLLECTION_KIND_UNSPECIFIED);
  v1::OperatorSpec* op = req.mutable_spec()->add_operators();
  op->set_name(name);
  op->set_runner(a.submit.runner);
  op->set_launch(a.submit.launch);
  auto op_name = OpNameOf(a.submit, name);
  if (!op_name.ok()) return op_name.status();
  op->set_op_name(*op_name);
  if (!a.case_id.empty() && fs::exists(dir / "PERFORMANCE_CASES.json")) {
    op->set_manifest_path("PERFORMANCE_CASES.json");
  }
  req.set_case_id(a.case_id);
  req.set_metric(a.metric);
  req.set_max_runs_per_revision(a.max_runs_per_revision);
  req.set_max_runs(a.max_runs);
  req.set_no_explain(a.no_explain);
  if (absl::Status st = AddRevisions(s, git, range, dir, a.submit.idempotency_key,
                                     a.submit.operator_dirs.size() > 1, &req, err);
      !st.ok()) {
    return st;
  }
  return req;
}

// Asks until b ends or timeout passes (b as last read); progress on err.
absl::Status Follow(Session& s, v1::Bisection* b, std::chrono::seconds timeout, std::ostream& err) {
  const Clock::MonotonicTime deadline = s.clock().MonotonicNow() + timeout;
  std::string last;
  while (true) {
    v1::GetBisectionRequest req;
    req.set_bisection_id(b->id());
    v1::GetBisectionResponse resp;
    if (absl::Status st = s.Call(&Queries::GetBisection, req, &resp); !st.ok()) return st;
    *b = resp.bisection();
    const std::string line =
        absl::StrCat("bisection ", b->id(), " ", StateText(b->state()), ": ", b->reason());
    if (line != last && timeout.count() > 0) err << "npuperf: " << line << "\n";
    last = line;
    if (Terminal(b->state()) || s.clock().MonotonicNow() >= deadline) return absl::OkStatus();
    s.clock().SleepFor(kBisectPoll);
  }
}

int PrintAll(Session& s, const std::vector<v1::Bisection>& list, std::ostream& out) {
  int code = kExitOk;
  for (const v1::Bisection& b : list) code = std::max(code, ExitCodeOf(b));
  if (s.config().format == OutputFormat::kJson) {
    if (list.size() == 1) {
      out << ToJson(list[0]) << "\n";
    } else {
      v1::ListBisectionsResponse all;
      for (const v1::Bisection& b : list) *all.add_bisections() = b;
      out << ToJson(all) << "\n";
    }
    return code;
  }
  for (const v1::Bisection& b : list) PrintBisection(b, out);
  return code;
}

}  // namespace

void PrintBisection(const v1::Bisection& b, std::ostream& out) {
  const int n = b.revisions_size();
  out << "bisection " << b.id() << " of " << b.operator_name()
      << (b.case_id().empty() ? "" : "/" + b.case_id()) << " over " << std::max(0, n - 1)
      << " commits";
  if (n > 0)
    out << " (" << Short(b.revisions(0).commit()) << ".." << Short(b.revisions(n - 1).commit())
        << ")";
  out << ": " << StateText(b.state());
  if (!b.reason().empty()) out << ": " << b.reason();
  out << "\n";
  if (b.has_ends()) {
    out << "  ends: " << JudgementText(b.ends());
    if (b.step_pct() > 0) out << absl::StrFormat("; a step is at least %.1f%%", b.step_pct());
    out << "\n";
  }
  for (const v1::BisectionCulprit& c : b.culprits()) {
    out << "  culprit " << Short(c.commit()) << " \"" << c.subject() << "\" by " << c.author()
        << "\n    " << JudgementText(c.judgement()) << " against " << Short(c.parent_commit())
        << "\n";
    if (c.candidates_size() > 1) {
      std::vector<std::string> shorts;
      for (const std::string& h : c.candidates()) shorts.push_back(Short(h));
      out << "    equally possible (revisions between were skipped): "
          << absl::StrJoin(shorts, ", ") << "\n";
    }
    if (c.changed_files_size() > 0) {
      out << "    changed: " << absl::StrJoin(c.changed_files(), ", ") << "\n";
    }
    if (c.has_explanation()) {
      const v1::RoundComparison& e = c.explanation();
      out << "    standard rounds " << c.parent_round_id() << " -> " << c.culprit_round_id() << ": "
          << VerdictName(e.verdict()) << " " << RatioText(e.duration()) << "; bound "
          << (e.baseline_bound().empty() ? "?" : e.baseline_bound()) << " -> "
          << (e.candidate_bound().empty() ? "?" : e.candidate_bound()) << "; balance "
          << (e.baseline_balance().empty() ? "?" : e.baseline_balance()) << " -> "
          << (e.candidate_balance().empty() ? "?" : e.candidate_balance()) << "\n";
      for (const v1::MetricDelta* d : LargestNotable(e, kMaxDeltasShown)) {
        out << absl::StrFormat("      %s.%s %.4g -> %.4g (%+.4g)\n", d->group(), d->field(),
                               d->baseline(), d->candidate(), d->delta());
      }
    } else if (!c.explanation_note().empty()) {
      out << "    not explained: " << c.explanation_note() << "\n";
    }
  }
  for (const v1::BisectionJudgement& u : b.undecided()) {
    if (u.from_revision() < 0 || u.to_revision() >= n || u.from_revision() >= n) continue;
    out << "  undecided " << Short(b.revisions(u.from_revision()).commit()) << ".."
        << Short(b.revisions(u.to_revision()).commit()) << ": " << u.rule() << "\n";
  }
  int measured = 0, runs = 0;
  std::vector<std::string> skipped;
  for (const v1::BisectionRevision& r : b.revisions()) {
    measured += r.runs() > 0;
    runs += r.runs();
    if (r.failed()) skipped.push_back(Short(r.commit()));
  }
  out << "  " << runs << " run(s) on " << measured << " of " << n << " revisions";
  if (!skipped.empty()) out << "; skipped (a run failed): " << absl::StrJoin(skipped, ", ");
  out << "\n";
}

int RunBisect(Session& s, const BisectArgs& a, std::ostream& out, std::ostream& err) {
  const ClientConfig& config = s.config();
  if (a.repo.empty() || a.good.empty() || a.bad.empty()) {
    return ReportUsage("bisect", "--repo, --good and --bad are required", config, out, err);
  }
  if (a.submit.operator_dirs.empty()) {
    return ReportUsage("bisect", "give at least one operator directory", config, out, err);
  }
  if (a.mode != "quick" && a.mode != "standard") {
    return ReportUsage("bisect", "--mode must be quick or standard", config, out, err);
  }
  if (a.metric != "duration") {
    return ReportUsage("bisect", "--metric must be duration (the only metric bisected)", config,
                       out, err);
  }
  if (a.submit.op_name.empty() && a.submit.op_name_map.empty()) {
    return ReportUsage("bisect", "give --op-name or --op-name-map", config, out, err);
  }
  GitRepository git(a.repo, s.clock());
  auto range = git.FirstParentRange(a.good, a.bad, kMaxCommits);
  if (!range.ok()) {
    if (absl::IsInvalidArgument(range.status())) {
      return ReportUsage("bisect", std::string(range.status().message()), config, out, err);
    }
    return ReportError(range.status(), config, out, err);
  }
  if (range->size() < 3) {
    return ReportUsage("bisect",
                       "a one-commit range: its bad revision is the only candidate, nothing "
                       "to bisect",
                       config, out, err);
  }
  std::vector<v1::Bisection> started;
  for (const std::string& dir : a.submit.operator_dirs) {
    auto req = BuildBisection(s, git, a, *range, dir, err);
    if (!req.ok()) {
      if (absl::IsInvalidArgument(req.status())) {
        return ReportUsage("bisect", std::string(req.status().message()), config, out, err);
      }
      return ReportError(req.status(), config, out, err);
    }
    v1::StartBisectionResponse resp;
    if (absl::Status st = s.Call(&Queries::StartBisection, *req, &resp); !st.ok()) {
      return ReportError(st, config, out, err);
    }
    err << "npuperf: bisection " << resp.bisection().id()
        << (resp.created() ? " started" : " was started before with this range") << " for "
        << resp.bisection().operator_name() << "\n";
    started.push_back(resp.bisection());
  }
  if (a.wait) {
    for (v1::Bisection& b : started) {
      if (absl::Status st = Follow(s, &b, a.timeout, err); !st.ok()) {
        return ReportError(st, config, out, err);
      }
    }
  }
  return PrintAll(s, started, out);
}

int RunBisection(Session& s, const BisectionArgs& a, std::ostream& out, std::ostream& err) {
  int64_t id = 0;
  if (!absl::SimpleAtoi(a.id, &id) || id <= 0) {
    return ReportUsage("bisection", "ID must be a bisection id (digits, at least 1)", s.config(),
                       out, err);
  }
  v1::Bisection b;
  b.set_id(id);
  if (a.cancel) {
    v1::CancelBisectionRequest req;
    req.set_bisection_id(id);
    req.set_note(a.note);
    v1::CancelBisectionResponse resp;
    if (absl::Status st = s.Call(&Queries::CancelBisection, req, &resp); !st.ok()) {
      return ReportError(st, s.config(), out, err);
    }
    return PrintAll(s, {resp.bisection()}, out);
  }
  if (absl::Status st = Follow(s, &b, a.wait ? a.timeout : std::chrono::seconds(0), err);
      !st.ok()) {
    return ReportError(st, s.config(), out, err);
  }
  return PrintAll(s, {b}, out);
}

int RunBisections(Session& s, bool all, std::ostream& out, std::ostream& err) {
  v1::ListBisectionsRequest req;
  req.set_include_finished(all);
  v1::ListBisectionsResponse resp;
  if (absl::Status st = s.Call(&Queries::ListBisections, req, &resp); !st.ok()) {
    return ReportError(st, s.config(), out, err);
  }
  if (s.config().format == OutputFormat::kJson) {
    out << ToJson(resp) << "\n";
    return kExitOk;
  }
  if (resp.bisections_size() == 0) out << (all ? "no bisections\n" : "no bisection running\n");
  for (const v1::Bisection& b : resp.bisections()) {
    out << absl::StrFormat("%-6d %-15s %-24s %5d commits  %s\n", b.id(), StateText(b.state()),
                           b.operator_name() + (b.case_id().empty() ? "" : "/" + b.case_id()),
                           std::max(0, b.revisions_size() - 1), b.reason());
  }
  return kExitOk;
}

absl::StatusOr<std::vector<v1::Bisection>> BisectRegressions(
    Session& s, const BisectRegressionsArgs& a, const v1::ListRegressionsResponse& resp,
    std::ostream& err) {
  std::vector<v1::Bisection> started;
  if (resp.tracked_size() != resp.regressions_size()) return started;  // nothing tracked
  GitRepository git(a.repo, s.clock());
  for (int i = 0; i < resp.regressions_size(); ++i) {
    const v1::Regression& t = resp.tracked(i);
    const v1::RoundComparison& cmp = resp.regressions(i);
    if (t.id() == 0 || t.state() != v1::REGRESSION_STATE_DETECTED) continue;
    const std::string what = absl::StrCat("regression ", t.id(), " (", CaseLabel(cmp), ")");
    auto base = FetchRound(s, cmp.baseline_round_id());
    if (!base.ok()) return base.status();
    auto cand = FetchRound(s, cmp.candidate_round_id());
    if (!cand.ok()) return cand.status();
    const auto good = base->labels().find("commit");
    const auto bad = cand->labels().find("commit");
    if (good == base->labels().end() || bad == cand->labels().end() ||
        good->second == bad->second) {
      err << "npuperf: " << what
          << ": not bisected: both rounds need a commit label (submit --label commit=SHA), "
             "and they must differ\n";
      continue;
    }
    auto range = git.FirstParentRange(good->second, bad->second, kMaxCommits);
    if (!range.ok()) {
      err << "npuperf: " << what << ": not bisected: " << range.status().message() << "\n";
      continue;
    }
    if (range->size() < 3) {
      err << "npuperf: " << what << ": not bisected: a one-commit range, " << Short(bad->second)
          << " is the culprit\n";
      continue;
    }
    // The candidate's submission is the template: same params, case
    // selector, constraints and target name.
    v1::GetCollectionRequest get;
    get.set_collection_id(cand->collection_id());
    get.set_job_page_size(1);
    v1::GetCollectionResponse collection;
    if (absl::Status st = s.Call(&Collections::GetCollection, get, &collection); !st.ok()) {
      return st;
    }
    const v1::CollectionSpec& was = collection.collection().spec();
    v1::StartBisectionRequest req;
    v1::CollectionSpec* spec = req.mutable_spec();
    *spec->mutable_params() = was.params();
    *spec->mutable_case_selector() = was.case_selector();
    *spec->mutable_constraints() = was.constraints();
    spec->set_priority(was.priority());
    for (const v1::OperatorSpec& o : was.operators()) {
      if (o.name() != cand->operator_name()) continue;
      v1::OperatorSpec* op = spec->add_operators();
      op->set_name(o.name());
      op->set_runner(o.runner());
      op->set_manifest_path(o.manifest_path());
      const auto mapped = o.op_name_map().find(cand->case_id());
      op->set_op_name(mapped != o.op_name_map().end() ? mapped->second : o.op_name());
      const auto launch = o.launch_map().find(cand->case_id());
      op->set_launch(launch != o.launch_map().end() ? launch->second : o.launch());
    }
    if (spec->operators_size() != 1) {
      err << "npuperf: " << what << ": not bisected: collection " << cand->collection_id()
          << " has no operator " << cand->operator_name() << "\n";
      continue;
    }
    if (spec->params().mode() != v1::PROFILE_MODE_STANDARD) {
      spec->mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
    }
    req.set_case_id(cand->case_id());
    req.set_regression_id(t.id());
    const fs::path dir = fs::path(a.repo) / a.ops_dir / cand->operator_name();
    if (absl::Status st = AddRevisions(s, git, *range, dir, "", false, &req, err); !st.ok()) {
      err << "npuperf: " << what << ": not bisected: " << st.message() << "\n";
      continue;
    }
    v1::StartBisectionResponse made;
    if (absl::Status st = s.Call(&Queries::StartBisection, req, &made); !st.ok()) return st;
    err << "npuperf: " << what << ": bisection " << made.bisection().id()
        << (made.created() ? " started" : " (started before)") << " over " << range->size() - 1
        << " commits\n";
    started.push_back(made.bisection());
  }
  return started;
}

}  // namespace npuperf::client
