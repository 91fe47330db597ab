#include "server/compare/bisections.h"

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"
#include "common/sha256.h"
#include "common/status_util.h"
#include "evidence/op_summary.h"
#include "google/protobuf/util/time_util.h"
#include "server/compare/comparator.h"
#include "server/compare/round_reads.h"
#include "server/core/job_state.h"
#include "server/core/scheduler.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

// The server labels of a run's collection (core/limits.h kServerLabelPrefix).
constexpr char kBisectionLabel[] = "npuperf.bisection";
constexpr char kRevisionLabel[] = "npuperf.bisection_commit";

// Request bounds (docs/api.md, StartBisectionRequest).
constexpr size_t kMaxKeyBytes = 128;
constexpr size_t kMaxTextBytes = 256;
constexpr int kMaxChangedFiles = 200;
constexpr size_t kMaxPathBytes = 512;
constexpr int kDefaultRunsPerRevision = 4;
constexpr int kMaxRunsPerRevision = 8;
constexpr int kMaxRuns = 2000;
// All revisions' changed_files together, bytes: with kMaxRuns runs of
// kMaxSamplesPerRun samples, a bisection's stored body (and GetBisection's
// answer) stays under 3 MiB.
constexpr size_t kMaxChangedFilesBytes = 1 << 20;
// A run's duration samples kept (the first ones): repeats beyond this add
// nothing to a three-way verdict that the next run does not.
constexpr int kMaxSamplesPerRun = 32;
constexpr int kMaxListed = 200;
// Devices one bisection keeps busy at most.
constexpr int kMaxParallel = 64;

bool IsHex(const std::string& s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool PrintableText(const std::string& s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
  });
}

bool KeyChars(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' ||
           c == '-';
  });
}

std::string Short(const std::string& commit) { return commit.substr(0, 12); }

const char* RelationName(Relation r) {
  switch (r) {
    case Relation::kSame: return "SAME";
    case Relation::kDifferent: return "DIFFERENT";
    case Relation::kUnknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

v1::BisectionJudgement ToProto(const Judgement& j, int from, int to) {
  v1::BisectionJudgement out;
  out.set_from_revision(from);
  out.set_to_revision(to);
  out.set_relation(RelationName(j.relation));
  out.set_ratio(j.ratio);
  out.set_ratio_ci_low(j.low);
  out.set_ratio_ci_high(j.high);
  out.set_p_value(j.p_value);
  out.set_rule(j.rule);
  return out;
}

bool Explaining(const v1::BisectionStep& s) { return s.purpose() == "explain"; }

// The request's checks that need no store (each names its field).
std::vector<FieldViolation> CheckRequest(const v1::StartBisectionRequest& req) {
  std::vector<FieldViolation> bad;
  const std::string& key = req.idempotency_key();
  if (key.empty() || key.size() > kMaxKeyBytes || !KeyChars(key)) {
    bad.push_back({"idempotency_key", "must be 1..128 bytes of [A-Za-z0-9._:-]"});
  }
  if (req.repository().size() > kMaxTextBytes || !PrintableText(req.repository())) {
    bad.push_back({"repository", "at most 256 bytes without control characters"});
  }
  if (!req.metric().empty() && req.metric() != "duration") {
    bad.push_back({"metric", "must be \"duration\" (the only metric bisected)"});
  }
  const int n = req.revisions_size();
  if (n < 3) {
    bad.push_back({"revisions", n == 2
                                    ? "a one-commit range: its bad revision is the only "
                                      "candidate, nothing to bisect"
                                    : "a range needs a good and a bad revision and one between"});
  } else if (n > kMaxBisectionRevisions) {
    bad.push_back({"revisions", absl::StrCat(n - 1, " commits, at most ",
                                             kMaxBisectionRevisions - 1, ": narrow the range")});
  }
  std::set<std::string> seen;
  size_t changed_bytes = 0;
  for (int i = 0; i < n && i < kMaxBisectionRevisions; ++i) {
    const v1::BisectionRevision& r = req.revisions(i);
    const std::string at = absl::StrCat("revisions[", i, "]");
    if ((r.commit().size() != 40 && r.commit().size() != 64) || !IsHex(r.commit())) {
      bad.push_back({at + ".commit", "must be a full hash: 40 or 64 lowercase hex digits"});
    } else if (!seen.insert(r.commit()).second) {
      bad.push_back({at + ".commit", absl::StrCat(Short(r.commit()), " is listed twice")});
    }
    if (!IsSha256Hex(r.bundle_sha256())) {
      bad.push_back({at + ".bundle_sha256", "must be 64 lowercase hex digits"});
    }
    for (const auto& [field, text] :
         {std::pair<const char*, const std::string*>{"subject", &r.subject()},
          {"author", &r.author()}}) {
      if (text->size() > kMaxTextBytes || !PrintableText(*text)) {
        bad.push_back(
            {absl::StrCat(at, ".", field), "at most 256 bytes without control characters"});
      }
    }
    if (r.changed_files_size() > kMaxChangedFiles) {
      bad.push_back({at + ".changed_files", absl::StrCat("at most ", kMaxChangedFiles)});
    }
    for (const std::string& f : r.changed_files()) {
      changed_bytes += f.size();
      if (f.empty() || f.size() > kMaxPathBytes || !PrintableText(f)) {
        bad.push_back({at + ".changed_files", "each 1..512 bytes without control characters"});
        break;
      }
    }
    if (bad.size() > 20) break;  // enough to act on
  }
  if (changed_bytes > kMaxChangedFilesBytes) {
    bad.push_back(
        {"revisions.changed_files",
         absl::StrCat(changed_bytes, " bytes of paths in all, at most ", kMaxChangedFilesBytes)});
  }
  if (req.spec().operators_size() != 1) {
    bad.push_back({"spec.operators", "a bisection follows exactly one operator"});
  }
  if (req.max_runs_per_revision() < 0 || req.max_runs_per_revision() > kMaxRunsPerRevision) {
    bad.push_back({"max_runs_per_revision", absl::StrCat("must be 1..", kMaxRunsPerRevision,
                                                         " (0: ", kDefaultRunsPerRevision, ")")});
  }
  if (req.max_runs() < 0 || req.max_runs() > kMaxRuns) {
    bad.push_back({"max_runs", absl::StrCat("must be 1..", kMaxRuns, " (0: 16 per revision)")});
  }
  if (req.case_id().size() > kMaxTextBytes || !PrintableText(req.case_id())) {
    bad.push_back({"case_id", "at most 256 bytes without control characters"});
  }
  return bad;
}

}  // namespace

bool BisectionTerminal(v1::BisectionState state) {
  return state == v1::BISECTION_STATE_DONE || state == v1::BISECTION_STATE_REFUSED ||
         state == v1::BISECTION_STATE_FAILED || state == v1::BISECTION_STATE_CANCELLED;
}

Bisections::Bisections(Store& store, Clock& clock, Submit submit, Cancel cancel, OnFinish on_finish)
    : store_(store),
      clock_(clock),
      submit_(std::move(submit)),
      cancel_(std::move(cancel)),
      on_finish_(std::move(on_finish)) {}

absl::StatusOr<v1::StartBisectionResponse> Bisections::Start(const std::string& team,
                                                             const v1::StartBisectionRequest& req) {
  if (std::vector<FieldViolation> bad = CheckRequest(req); !bad.empty()) {
    return InvalidArgumentWithFields(bad);
  }
  if (req.regression_id() < 0) {
    return InvalidArgumentWithFields({{"regression_id", "must be a regression id (or 0)"}});
  }
  if (req.regression_id() > 0) {
    auto reg = store_.GetRegression(team, req.regression_id());
    if (!reg.ok()) return reg.status();  // NOT_FOUND for another team's
  }
  // A team runs a bounded number at once, so no team's many bisections
  // crowd the reaper's round (a resend of a running one's key is answered).
  auto running =
      store_.ListBisections(team, /*include_finished=*/false, kMaxRunningBisectionsPerTeam + 1);
  if (!running.ok()) return running.status();
  bool resend = false;
  for (const BisectionRecord& r : *running)
    resend = resend || r.idempotency_key == req.idempotency_key();
  if (!resend && static_cast<int>(running->size()) >= kMaxRunningBisectionsPerTeam) {
    return absl::ResourceExhaustedError(
        absl::StrCat("team ", team, " has ", running->size(), " bisections running, at most ",
                     kMaxRunningBisectionsPerTeam, ": wait for one to end or cancel one"));
  }
  // Every revision's bundle must be the team's (and is kept from now on).
  std::set<std::string> checked;
  for (int i = 0; i < req.revisions_size(); ++i) {
    const std::string& sha = req.revisions(i).bundle_sha256();
    if (!checked.insert(sha).second) continue;
    auto owned = store_.UseBundle(team, sha, NowMs());
    if (!owned.ok()) return owned.status();
    if (!*owned) {
      return absl::NotFoundError(absl::StrCat(
          "revisions[", i, "].bundle_sha256: bundle ", sha.substr(0, 12), " of ",
          Short(req.revisions(i).commit()), " was not uploaded (UploadBundle) by this team"));
    }
  }
  BisectionRecord rec;
  rec.team = team;
  rec.idempotency_key = req.idempotency_key();
  v1::Bisection& b = rec.bisection;
  b.set_repository(req.repository());
  b.set_operator_name(req.spec().operators(0).name());
  b.set_case_id(req.case_id());
  b.set_metric("duration");
  b.set_state(v1::BISECTION_STATE_MEASURING_ENDS);
  b.set_reason("the good and bad revisions run first");
  for (const v1::BisectionRevision& r : req.revisions()) {
    v1::BisectionRevision* kept = b.add_revisions();
    kept->set_commit(r.commit());
    kept->set_subject(r.subject());
    kept->set_author(r.author());
    kept->set_bundle_sha256(r.bundle_sha256());
    *kept->mutable_changed_files() = r.changed_files();
  }
  const int n = req.revisions_size();
  b.set_max_runs_per_revision(req.max_runs_per_revision() == 0 ? kDefaultRunsPerRevision
                                                               : req.max_runs_per_revision());
  b.set_max_runs(req.max_runs() == 0 ? std::min(kMaxRuns, 16 * n) : req.max_runs());
  *b.mutable_spec() = req.spec();
  v1::OperatorSpec* op = b.mutable_spec()->mutable_operators(0);
  op->set_bundle_sha256(req.revisions(0).bundle_sha256());
  if (!req.case_id().empty()) {
    op->clear_case_ids();
    op->add_case_ids(req.case_id());
  }
  if (b.spec().params().mode() == v1::PROFILE_MODE_UNSPECIFIED) {
    b.mutable_spec()->mutable_params()->set_mode(v1::PROFILE_MODE_QUICK);
  }
  if (b.spec().params().mode() != v1::PROFILE_MODE_QUICK &&
      b.spec().params().mode() != v1::PROFILE_MODE_STANDARD) {
    return InvalidArgumentWithFields({{"spec.params.mode", "must be QUICK or STANDARD"}});
  }
  b.set_explain(!req.no_explain());
  b.set_regression_id(req.regression_id());
  *b.mutable_created_at() = TimeUtil::MillisecondsToTimestamp(NowMs());
  auto inserted = store_.InsertBisection(rec, NowMs());
  if (!inserted.ok()) return inserted.status();
  auto advanced = Advance(std::move(inserted->first));
  if (!advanced.ok()) return advanced.status();
  if (inserted->second) {
    LogInfo("bisections",
            absl::StrCat("bisection ", advanced->bisection.id(), " of ", b.operator_name(),
                         " over ", n - 1, " commits for team ", team, ": ",
                         v1::BisectionState_Name(advanced->bisection.state())));
  }
  v1::StartBisectionResponse resp;
  *resp.mutable_bisection() = std::move(advanced->bisection);
  resp.set_created(inserted->second);
  return resp;
}

absl::StatusOr<v1::GetBisectionResponse> Bisections::Get(const std::string& team,
                                                         const v1::GetBisectionRequest& req) {
  if (req.bisection_id() <= 0) {
    return InvalidArgumentWithFields({{"bisection_id", "must be a bisection id"}});
  }
  auto rec = store_.GetBisection(team, req.bisection_id());
  if (!rec.ok()) return rec.status();
  auto advanced = Advance(*std::move(rec));
  if (!advanced.ok()) return advanced.status();
  v1::GetBisectionResponse resp;
  *resp.mutable_bisection() = std::move(advanced->bisection);
  return resp;
}

absl::StatusOr<v1::ListBisectionsResponse> Bisections::List(const std::string& team,
                                                            const v1::ListBisectionsRequest& req) {
  if (req.limit() < 0 || req.limit() > kMaxListed) {
    return InvalidArgumentWithFields({{"limit", absl::StrCat("must be 1..", kMaxListed)}});
  }
  auto recs =
      store_.ListBisections(team, req.include_finished(), req.limit() == 0 ? 50 : req.limit());
  if (!recs.ok()) return recs.status();
  v1::ListBisectionsResponse resp;
  for (BisectionRecord& r : *recs) {
    r.bisection.clear_steps();
    *resp.add_bisections() = std::move(r.bisection);
  }
  return resp;
}

absl::StatusOr<v1::CancelBisectionResponse> Bisections::CancelOne(
    const std::string& team, const v1::CancelBisectionRequest& req) {
  if (req.bisection_id() <= 0) {
    return InvalidArgumentWithFields({{"bisection_id", "must be a bisection id"}});
  }
  if (req.note().size() > kMaxTextBytes || !PrintableText(req.note())) {
    return InvalidArgumentWithFields({{"note", "at most 256 bytes without control characters"}});
  }
  // A replica advancing it at once may win the compare-and-set with a new
  // run: read again and cancel that one too.
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto rec = store_.GetBisection(team, req.bisection_id());
    if (!rec.ok()) return rec.status();
    v1::CancelBisectionResponse resp;
    if (BisectionTerminal(rec->bisection.state())) {
      *resp.mutable_bisection() = std::move(rec->bisection);
      return resp;
    }
    const std::string reason =
        req.note().empty() ? "cancelled" : absl::StrCat("cancelled: ", req.note());
    CancelRuns(*rec, reason);
    Finish(*rec, v1::BISECTION_STATE_CANCELLED, reason);
    auto stored = store_.UpdateBisection(*rec, NowMs());
    if (absl::IsFailedPrecondition(stored.status())) continue;
    if (!stored.ok()) return stored.status();
    if (on_finish_) on_finish_(v1::BISECTION_STATE_CANCELLED);
    LogInfo("bisections", absl::StrCat("bisection ", req.bisection_id(), " ", reason));
    *resp.mutable_bisection() = std::move(stored->bisection);
    return resp;
  }
  return absl::AbortedError(absl::StrCat("bisection ", req.bisection_id(),
                                         " kept changing while being cancelled: try again"));
}

absl::StatusOr<int> Bisections::AdvancePending() {
  auto pending = store_.ListBisections("", /*include_finished=*/false, kMaxAdvancePerRound);
  if (!pending.ok()) return pending.status();
  int finished = 0;
  absl::Status first_error;
  for (BisectionRecord& rec : *pending) {
    auto advanced = Advance(std::move(rec));
    if (!advanced.ok()) {
      if (first_error.ok()) first_error = advanced.status();
      continue;
    }
    if (BisectionTerminal(advanced->bisection.state())) ++finished;
  }
  if (!first_error.ok()) return first_error;
  return finished;
}

absl::StatusOr<BisectionRecord> Bisections::Advance(BisectionRecord rec) {
  if (BisectionTerminal(rec.bisection.state())) return rec;
  const std::string before = rec.bisection.SerializeAsString();
  std::vector<std::string> submitted;
  if (absl::Status s = RefreshSteps(rec); !s.ok()) return s;
  v1::Bisection& b = rec.bisection;
  if (b.regression_id() > 0 && !BisectionTerminal(b.state())) {
    // Triage of its regression as a false positive cancels it.
    auto reg = store_.GetRegression(rec.team, b.regression_id());
    if (reg.ok() && reg->regression.state == v1::REGRESSION_STATE_FALSE_POSITIVE) {
      const std::string why =
          absl::StrCat("regression ", b.regression_id(), " was triaged as a false positive");
      CancelRuns(rec, why);
      Finish(rec, v1::BISECTION_STATE_CANCELLED, why);
    } else if (!reg.ok() && !absl::IsNotFound(reg.status())) {
      return reg.status();
    }
  }
  if (b.state() == v1::BISECTION_STATE_EXPLAINING) {
    if (absl::Status s = Explain(rec); !s.ok()) return s;
  } else if (!BisectionTerminal(b.state())) {
    std::vector<RevisionSamples> revs = Measure(b);
    int in_flight = 0, runs = 0;
    for (const v1::BisectionStep& s : b.steps()) {
      if (Explaining(s)) continue;
      ++runs;
      if (!IsTerminal(s.state())) ++in_flight;
    }
    auto parallel = Parallelism(b);
    if (!parallel.ok()) return parallel.status();
    const int budget_left = b.max_runs() - runs;
    const int free = std::max(0, std::min(*parallel - in_flight, budget_left));
    BisectionOptions options;
    options.max_runs_per_revision = b.max_runs_per_revision();
    const BisectionDecision d = DecideBisection(revs, free, options);
    const int last = b.revisions_size() - 1;
    if (d.ends) *b.mutable_ends() = ToProto(*d.ends, 0, last);
    b.set_step_pct(d.step * 100);
    b.clear_culprits();
    for (const Culprit& c : d.culprits) {
      v1::BisectionCulprit* out = b.add_culprits();
      const v1::BisectionRevision& r = b.revisions(c.index);
      out->set_revision(c.index);
      out->set_commit(r.commit());
      out->set_subject(r.subject());
      out->set_author(r.author());
      for (int i : c.candidates) out->add_candidates(b.revisions(i).commit());
      out->set_parent_revision(c.parent);
      out->set_parent_commit(b.revisions(c.parent).commit());
      *out->mutable_judgement() = ToProto(c.judgement, c.parent, c.index);
      *out->mutable_changed_files() = r.changed_files();
    }
    b.clear_undecided();
    for (const Undecided& u : d.undecided) *b.add_undecided() = ToProto(u.judgement, u.from, u.to);
    switch (d.phase) {
      case BisectionPhase::kRefused:
        CancelRuns(rec, "the bisection was refused");
        Finish(rec, v1::BISECTION_STATE_REFUSED, d.reason);
        break;
      case BisectionPhase::kDone:
        if (absl::Status s = StartExplaining(rec, &submitted); !s.ok()) return s;
        break;
      case BisectionPhase::kMeasuringEnds:
      case BisectionPhase::kBisecting: {
        b.set_state(d.phase == BisectionPhase::kMeasuringEnds ? v1::BISECTION_STATE_MEASURING_ENDS
                                                              : v1::BISECTION_STATE_BISECTING);
        for (int r : d.to_run) {
          const v1::BisectionRevision& rev = b.revisions(r);
          const char* purpose = (r == 0 || r == last)              ? "end"
                                : rev.runs() + rev.in_flight() > 0 ? "repeat"
                                                                   : "probe";
          if (absl::Status s = SubmitRun(rec, r, purpose, &submitted); !s.ok()) return s;
          if (BisectionTerminal(b.state())) break;
        }
        if (BisectionTerminal(b.state())) break;
        int waiting = in_flight + static_cast<int>(d.to_run.size());
        if (waiting == 0 && budget_left <= 0) {
          Finish(rec, v1::BISECTION_STATE_FAILED,
                 absl::StrCat("the run budget (", b.max_runs(), " runs) was spent before the ",
                              "range was narrowed to single commits",
                              b.culprits_size() > 0 ? "; the culprits listed are confirmed" : ""));
        } else {
          b.set_reason(absl::StrCat(
              d.phase == BisectionPhase::kMeasuringEnds ? "measuring the ends" : "bisecting", ": ",
              waiting, " run(s) queued or running on up to ", *parallel, " device(s)"));
        }
        Measure(b);  // the new runs in the revisions' in_flight
        break;
      }
    }
  }
  if (rec.bisection.SerializeAsString() == before) return rec;
  auto stored = store_.UpdateBisection(rec, NowMs());
  if (absl::IsFailedPrecondition(stored.status())) {
    // Another writer advanced it first: the runs only this pass submitted
    // are nobody's, so they are cancelled (a run both submitted has one
    // collection, by its idempotency key, and is kept).
    auto current = store_.GetBisection(rec.team, rec.bisection.id());
    if (!current.ok()) return current.status();
    std::set<std::string> kept;
    for (const v1::BisectionStep& s : current->bisection.steps()) kept.insert(s.collection_id());
    for (const std::string& id : submitted) {
      if (kept.count(id) == 0) (void)cancel_(rec.team, id, "superseded by another replica");
    }
    return current;
  }
  if (stored.ok() && BisectionTerminal(stored->bisection.state())) {
    if (on_finish_) on_finish_(stored->bisection.state());
    LogInfo("bisections", absl::StrCat("bisection ", stored->bisection.id(), " ",
                                       v1::BisectionState_Name(stored->bisection.state()), ": ",
                                       stored->bisection.reason()));
  }
  return stored;
}

absl::Status Bisections::RefreshSteps(BisectionRecord& rec) {
  v1::Bisection& b = rec.bisection;
  for (v1::BisectionStep& step : *b.mutable_steps()) {
    if (step.collection_id().empty()) continue;
    const bool need_round = step.state() == v1::COLLECTION_STATE_SUCCEEDED && step.round_id() == 0;
    if (IsTerminal(step.state()) && !need_round) continue;
    auto c = store_.GetCollectionPage(rec.team, step.collection_id(), 0, 2);
    if (absl::IsNotFound(c.status())) {  // deleted by a person or by retention
      step.set_state(v1::COLLECTION_STATE_FAILED);
      step.set_reason(absl::StrCat("collection ", step.collection_id(), " is gone"));
      continue;
    }
    if (!c.ok()) return c.status();
    step.set_state(c->state());
    if (!IsTerminal(c->state())) continue;
    if (c->jobs_size() != 1) {
      step.set_state(v1::COLLECTION_STATE_FAILED);
      Finish(rec, v1::BISECTION_STATE_FAILED,
             absl::StrCat("the run of ", Short(b.revisions(step.revision()).commit()), " (",
                          step.collection_id(), ") queued ", c->counts().total(),
                          " jobs, not one: name the case to bisect (case_id)"));
      return absl::OkStatus();
    }
    const v1::Job& job = c->jobs(0);
    if (c->state() != v1::COLLECTION_STATE_SUCCEEDED) {
      step.set_reason(c->state() == v1::COLLECTION_STATE_CANCELLED && !c->cancel_reason().empty()
                          ? c->cancel_reason()
                          : job.reason());
      continue;
    }
    auto round = store_.GetRound(rec.team, job.round_id());
    if (absl::IsNotFound(round.status())) {
      step.set_state(v1::COLLECTION_STATE_FAILED);
      step.set_reason(absl::StrCat("round ", job.round_id(), " is gone"));
      continue;
    }
    if (!round.ok()) return round.status();
    step.set_round_id(round->id());
    const auto& samples = round->evidence().duration().samples_us();
    step.mutable_samples_us()->Assign(
        samples.begin(), samples.begin() + std::min(samples.size(), kMaxSamplesPerRun));
    if (step.samples_us_size() == 0) {
      step.set_state(v1::COLLECTION_STATE_FAILED);
      step.set_reason(absl::StrCat("round ", round->id(), " has no duration samples"));
    }
  }
  return absl::OkStatus();
}

std::vector<RevisionSamples> Bisections::Measure(v1::Bisection& b) const {
  std::vector<RevisionSamples> revs(static_cast<size_t>(b.revisions_size()));
  for (const v1::BisectionStep& s : b.steps()) {
    if (Explaining(s) || s.revision() < 0 || s.revision() >= b.revisions_size()) continue;
    RevisionSamples& r = revs[static_cast<size_t>(s.revision())];
    if (!IsTerminal(s.state())) {
      ++r.in_flight;
    } else if (s.state() == v1::COLLECTION_STATE_SUCCEEDED) {
      ++r.runs;
      r.samples.insert(r.samples.end(), s.samples_us().begin(), s.samples_us().end());
    } else {
      r.failed = true;  // failed or cancelled: skipped, like git bisect skip
    }
  }
  for (int i = 0; i < b.revisions_size(); ++i) {
    const RevisionSamples& r = revs[static_cast<size_t>(i)];
    v1::BisectionRevision* out = b.mutable_revisions(i);
    out->set_runs(r.runs);
    out->set_in_flight(r.in_flight);
    out->set_failed(r.failed);
    out->set_median_us(r.samples.empty() ? 0 : evidence::Median(r.samples));
  }
  return revs;
}

absl::StatusOr<int> Bisections::Parallelism(const v1::Bisection& b) {
  auto agents = store_.ListAgents();
  if (!agents.ok()) return agents.status();
  const auto& socs = b.spec().constraints().socs();
  int devices = 0;
  for (const AgentRecord& a : *agents) {
    if (a.status.state() != "online") continue;
    for (const v1::DeviceStatus& d : a.status.devices()) {
      if (d.state() != "idle" && d.state() != "busy") continue;
      if (!socs.empty() && std::find(socs.begin(), socs.end(), d.soc()) == socs.end()) continue;
      ++devices;
    }
  }
  return std::clamp(devices, 1, kMaxParallel);
}

absl::Status Bisections::SubmitRun(BisectionRecord& rec, int revision, const std::string& purpose,
                                   std::vector<std::string>* submitted) {
  v1::Bisection& b = rec.bisection;
  const v1::BisectionRevision& rev = b.revisions(revision);
  const int step = b.steps_size();
  v1::SubmitCollectionRequest req;
  req.set_idempotency_key(absl::StrCat("npuperf-bisection-", b.id(), "-", step + 1));
  v1::CollectionSpec* spec = req.mutable_spec();
  *spec = b.spec();
  spec->mutable_operators(0)->set_bundle_sha256(rev.bundle_sha256());
  spec->mutable_params()->set_keep_raw_output(false);
  if (purpose == "explain") spec->mutable_params()->set_mode(v1::PROFILE_MODE_STANDARD);
  spec->set_max_concurrent_jobs(1);
  (*spec->mutable_labels())["commit"] = rev.commit();
  spec->set_description(absl::StrCat("bisection ", b.id(), ": ", purpose, " of ",
                                     Short(rev.commit()), " (revision ", revision, " of ",
                                     b.revisions_size() - 1, ")"));
  auto made = submit_(rec.team, req,
                      {{kBisectionLabel, std::to_string(b.id())}, {kRevisionLabel, rev.commit()}});
  if (!made.ok()) {
    if (!SubmissionRefusedForGood(made.status())) return made.status();
    CancelRuns(rec, "the bisection failed");
    Finish(rec, v1::BISECTION_STATE_FAILED,
           absl::StrCat("the ", purpose, " run of ", Short(rev.commit()),
                        " could not be submitted: ", made.status().ToString()));
    return absl::OkStatus();
  }
  if (made->first.counts().total() != 1) {
    (void)cancel_(rec.team, made->first.id(), "a bisection run must be one job");
    CancelRuns(rec, "the bisection failed");
    Finish(
        rec, v1::BISECTION_STATE_FAILED,
        absl::StrCat("the run of ", Short(rev.commit()), " queued ", made->first.counts().total(),
                     " jobs, not one: name the case to bisect (case_id)"));
    return absl::OkStatus();
  }
  v1::BisectionStep* s = b.add_steps();
  s->set_revision(revision);
  s->set_purpose(purpose);
  s->set_collection_id(made->first.id());
  s->set_state(made->first.state());
  if (made->second) submitted->push_back(made->first.id());
  return absl::OkStatus();
}

absl::Status Bisections::StartExplaining(BisectionRecord& rec,
                                         std::vector<std::string>* submitted) {
  v1::Bisection& b = rec.bisection;
  if (b.culprits_size() == 0 || !b.explain()) {
    Finish(rec, v1::BISECTION_STATE_DONE,
           b.culprits_size() == 0
               ? "no culprit: every neighbouring pair was the same or stayed undecided"
               : absl::StrCat(b.culprits_size(), " culprit(s) named"));
    return absl::OkStatus();
  }
  b.set_state(v1::BISECTION_STATE_EXPLAINING);
  if (b.spec().params().mode() == v1::PROFILE_MODE_STANDARD) {
    return Explain(rec);  // the runs are standard rounds already
  }
  std::set<int> asked;
  for (int i = 0; i < b.culprits_size() && i < kMaxExplainedCulprits; ++i) {
    for (int r : {b.culprits(i).parent_revision(), b.culprits(i).revision()}) {
      if (!asked.insert(r).second) continue;
      if (absl::Status s = SubmitRun(rec, r, "explain", submitted); !s.ok()) return s;
      if (BisectionTerminal(b.state())) return absl::OkStatus();
    }
  }
  b.set_reason(absl::StrCat("profiling ", asked.size(),
                            " revisions in standard mode to explain the culprits"));
  return absl::OkStatus();
}

absl::Status Bisections::Explain(BisectionRecord& rec) {
  v1::Bisection& b = rec.bisection;
  const bool standard = b.spec().params().mode() == v1::PROFILE_MODE_STANDARD;
  // The newest succeeded standard round of each revision (explanation runs,
  // or the bisection's own runs when they were standard).
  std::map<int, int64_t> round_of;
  std::map<int, std::string> why_not;
  for (const v1::BisectionStep& s : b.steps()) {
    if (!standard && !Explaining(s)) continue;
    if (!IsTerminal(s.state())) return absl::OkStatus();  // still running
    if (s.state() == v1::COLLECTION_STATE_SUCCEEDED) {
      round_of[s.revision()] = s.round_id();
    } else if (Explaining(s)) {
      why_not[s.revision()] = s.reason();
    }
  }
  v1::CompareOptions defaults;
  auto options = ResolveVerdictOptions(defaults);
  if (!options.ok()) return options.status();
  for (int i = 0; i < b.culprits_size(); ++i) {
    v1::BisectionCulprit* c = b.mutable_culprits(i);
    if (i >= kMaxExplainedCulprits) {
      c->set_explanation_note(
          absl::StrCat("only the first ", kMaxExplainedCulprits, " culprits are explained"));
      continue;
    }
    const auto parent = round_of.find(c->parent_revision());
    const auto culprit = round_of.find(c->revision());
    if (parent == round_of.end() || culprit == round_of.end()) {
      const int missing = parent == round_of.end() ? c->parent_revision() : c->revision();
      c->set_explanation_note(absl::StrCat(
          "the standard run of ", Short(b.revisions(missing).commit()), " failed",
          why_not.count(missing) && !why_not[missing].empty() ? absl::StrCat(": ", why_not[missing])
                                                              : ""));
      continue;
    }
    auto base = store_.GetRound(rec.team, parent->second);
    if (!base.ok()) return base.status();
    auto cand = store_.GetRound(rec.team, culprit->second);
    if (!cand.ok()) return cand.status();
    auto noise = NoiseOfCases(store_, rec.team, {CaseKey(*base)}, *options);
    if (!noise.ok()) return noise.status();
    VerdictOptions with_noise = *options;
    with_noise.noise = &*noise;
    c->set_parent_round_id(base->id());
    c->set_culprit_round_id(cand->id());
    *c->mutable_explanation() = CompareRounds(*base, *cand, with_noise);
  }
  Finish(rec, v1::BISECTION_STATE_DONE,
         absl::StrCat(b.culprits_size(), " culprit(s) named and explained"));
  return absl::OkStatus();
}

void Bisections::CancelRuns(BisectionRecord& rec, const std::string& reason) {
  for (v1::BisectionStep& s : *rec.bisection.mutable_steps()) {
    if (s.collection_id().empty() || IsTerminal(s.state())) continue;
    const absl::Status st = cancel_(rec.team, s.collection_id(), reason);
    if (!st.ok()) {
      LogError("bisections", absl::StrCat("bisection ", rec.bisection.id(), ": cancel ",
                                          s.collection_id(), ": ", st.ToString()));
      continue;
    }
    s.set_state(v1::COLLECTION_STATE_CANCELLED);
    s.set_reason(reason);
  }
}

void Bisections::Finish(BisectionRecord& rec, v1::BisectionState state, const std::string& reason) {
  rec.bisection.set_state(state);
  rec.bisection.set_reason(reason);
  *rec.bisection.mutable_finished_at() = TimeUtil::MillisecondsToTimestamp(NowMs());
}

}  // namespace npuperf::server
