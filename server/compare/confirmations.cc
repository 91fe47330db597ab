#include "server/compare/confirmations.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_util.h"
#include "evidence/op_summary.h"
#include "google/protobuf/util/time_util.h"
#include "server/compare/comparator.h"
#include "server/compare/round_reads.h"
#include "server/core/confirmation_rules.h"
#include "server/core/health_rules.h"
#include "server/core/job_state.h"
#include "server/core/limits.h"
#include "server/core/scheduler.h"

namespace npuperf::server {
namespace {

using google::protobuf::util::TimeUtil;

// The server labels of a step's collection (core/limits.h kServerLabelPrefix).
constexpr char kConfirmationLabel[] = "npuperf.confirmation";
constexpr char kSideLabel[] = "npuperf.confirmation_side";

// The job that stored a round, with its collection's spec: one page of one
// job, so a 10,000-job collection is not read whole.
absl::StatusOr<v1::Collection> SourceOf(Store& store, const std::string& team,
                                        const v1::Round& round) {
  auto c = store.GetCollectionPage(team, round.collection_id(), round.job_id() - 1, 1);
  if (!c.ok()) return c.status();
  if (c->jobs_size() != 1 || c->jobs(0).id() != round.job_id()) {
    return absl::NotFoundError(absl::StrCat("job ", round.job_id(), " of round ", round.id(),
                                            " not found in collection ", round.collection_id()));
  }
  return c;
}

// Where a round was measured: its job's placement (the fingerprint's host
// and device when the job has none).
v1::DevicePlacement PlacementOf(const v1::Round& round, const v1::Collection& source) {
  v1::DevicePlacement p = source.jobs(0).placement();
  const v1::Fingerprint& f = round.evidence().fingerprint();
  if (p.host().empty()) {
    p.set_host(f.host());
    p.set_device_id(f.device_id());
  }
  if (p.soc().empty()) p.set_soc(f.soc());
  return p;
}

// One side's reruns as one round: their samples pooled, the median as the
// aggregate, every rerun's errors, and a DVFS-suspect rerun's clock check.
v1::Round Pooled(const std::vector<v1::Round>& rounds) {
  v1::Round out = rounds.front();
  v1::Evidence* e = out.mutable_evidence();
  std::vector<double> all;
  for (size_t i = 0; i < rounds.size(); ++i) {
    const v1::Evidence& r = rounds[i].evidence();
    all.insert(all.end(), r.duration().samples_us().begin(), r.duration().samples_us().end());
    if (i == 0) continue;
    for (const v1::EvidenceError& err : r.errors()) *e->add_errors() = err;
    if (DvfsSuspect(r)) {
      *e->mutable_dvfs() = r.dvfs();
      e->mutable_fingerprint()->set_clock_state(r.fingerprint().clock_state());
    }
  }
  *e->mutable_duration()->mutable_samples_us() = {all.begin(), all.end()};
  e->mutable_duration()->set_aggregate_us(all.empty() ? 0 : evidence::Median(all));
  return out;
}

}  // namespace

Confirmations::Confirmations(Store& store, Clock& clock, Submit submit)
    : store_(store), clock_(clock), submit_(std::move(submit)) {}

absl::StatusOr<v1::RequestConfirmationResponse> Confirmations::Request(
    const std::string& team, const v1::RequestConfirmationRequest& req) {
  std::vector<FieldViolation> bad;
  if (req.baseline_round_id() <= 0) bad.push_back({"baseline_round_id", "must be a round id"});
  if (req.candidate_round_id() <= 0) bad.push_back({"candidate_round_id", "must be a round id"});
  if (req.baseline_round_id() > 0 && req.baseline_round_id() == req.candidate_round_id()) {
    bad.push_back({"candidate_round_id", "must differ from baseline_round_id"});
  }
  if (req.pairs() < 0 || req.pairs() > kMaxConfirmationPairs) {
    bad.push_back({"pairs", absl::StrCat("must be 1..", kMaxConfirmationPairs,
                                         " (0: ", kDefaultConfirmationPairs, ")")});
  }
  auto options = ResolveVerdictOptions(req.options());
  if (!options.ok()) return options.status();
  if (!bad.empty()) return InvalidArgumentWithFields(bad);
  auto baseline = store_.GetRound(team, req.baseline_round_id());
  if (!baseline.ok()) return baseline.status();
  auto candidate = store_.GetRound(team, req.candidate_round_id());
  if (!candidate.ok()) return candidate.status();
  if (CaseKey(*baseline) != CaseKey(*candidate)) {
    return absl::FailedPreconditionError(
        absl::StrCat("rounds ", baseline->id(), " and ", candidate->id(), " are of ",
                     CaseKey(*baseline), " and ", CaseKey(*candidate),
                     ": a confirmation reruns "
                     "one operator and case"));
  }
  auto noise = NoiseOfCases(store_, team, {CaseKey(*baseline)}, *options);
  if (!noise.ok()) return noise.status();
  options->noise = &*noise;
  const v1::RoundComparison comparison = CompareRounds(*baseline, *candidate, *options);
  if (!Confirmable(comparison.verdict())) {
    return absl::FailedPreconditionError(
        absl::StrCat("rounds ", baseline->id(), " and ", candidate->id(), " compare ",
                     v1::Verdict_Name(comparison.verdict()), " (", comparison.rule(),
                     "): only a REGRESSED or IMPROVED comparison can be confirmed"));
  }
  auto made = Confirm(team, *baseline, *candidate, comparison, req.options(), req.pairs());
  if (!made.ok()) return made.status();
  v1::RequestConfirmationResponse resp;
  *resp.mutable_confirmation() = std::move(made->first);
  resp.set_created(made->second);
  return resp;
}

absl::StatusOr<std::pair<v1::Confirmation, bool>> Confirmations::Confirm(
    const std::string& team, const v1::Round& baseline, const v1::Round& candidate,
    const v1::RoundComparison& comparison, const v1::CompareOptions& options, int pairs) {
  ConfirmationRecord rec;
  rec.team = team;
  rec.options = options;
  v1::Confirmation& c = rec.confirmation;
  c.set_baseline_round_id(baseline.id());
  c.set_candidate_round_id(candidate.id());
  c.set_operator_name(baseline.operator_name());
  c.set_case_id(baseline.case_id());
  c.set_original_verdict(comparison.verdict());
  c.set_original_rule(comparison.rule());
  c.set_state(v1::CONFIRMATION_STATE_PENDING);
  *c.mutable_created_at() = TimeUtil::MillisecondsToTimestamp(NowMs());
  for (v1::ConfirmationStep& s : RerunSteps(pairs == 0 ? kDefaultConfirmationPairs : pairs)) {
    *c.add_steps() = std::move(s);
  }
  auto base_source = SourceOf(store_, team, baseline);
  if (!base_source.ok()) return base_source.status();
  auto cand_source = SourceOf(store_, team, candidate);
  if (!cand_source.ok()) return cand_source.status();
  const std::vector<v1::DevicePlacement> originals = {PlacementOf(baseline, *base_source),
                                                      PlacementOf(candidate, *cand_source)};
  auto agents = store_.ListAgents();
  if (!agents.ok()) return agents.status();
  // A quarantined device reads "quarantined" and is never chosen: a rerun
  // must not land on the device whose rounds are in doubt.
  auto quarantined = store_.ListQuarantines(/*include_released=*/false, kMaxQuarantinesPage);
  if (!quarantined.ok()) return quarantined.status();
  OverlayQuarantines(*quarantined, &*agents);
  std::vector<v1::AgentStatus> statuses;
  for (const AgentRecord& a : *agents) statuses.push_back(a.status);
  RerunDevice device = ChooseRerunDevice(originals[0].soc(), originals, statuses);
  if (device.device) {
    *c.mutable_device() = *device.device;
  } else {
    Finish(rec, v1::CONFIRMATION_STATE_UNCONFIRMED, device.reason);
  }
  auto inserted = store_.InsertConfirmation(rec, NowMs());
  if (!inserted.ok()) return inserted.status();
  auto advanced = Advance(std::move(inserted->first));
  if (!advanced.ok()) return advanced.status();
  if (inserted->second) {
    LogInfo("confirmations",
            absl::StrCat("confirmation ", advanced->confirmation.id(), " of rounds ", baseline.id(),
                         " and ", candidate.id(), " for team ", team, ": ",
                         v1::ConfirmationState_Name(advanced->confirmation.state())));
  }
  return std::pair{std::move(advanced->confirmation), inserted->second};
}

absl::StatusOr<v1::GetConfirmationResponse> Confirmations::Get(
    const std::string& team, const v1::GetConfirmationRequest& req) {
  if (req.confirmation_id() <= 0) {
    return InvalidArgumentWithFields({{"confirmation_id", "must be a confirmation id"}});
  }
  auto rec = store_.GetConfirmation(team, req.confirmation_id());
  if (!rec.ok()) return rec.status();
  auto advanced = Advance(*std::move(rec));
  if (!advanced.ok()) return advanced.status();
  v1::GetConfirmationResponse resp;
  *resp.mutable_confirmation() = std::move(advanced->confirmation);
  return resp;
}

absl::StatusOr<int> Confirmations::AdvancePending() {
  auto pending = store_.ListPendingConfirmations(kMaxAdvancePerRound);
  if (!pending.ok()) return pending.status();
  int finished = 0;
  absl::Status first_error;
  for (ConfirmationRecord& rec : *pending) {
    auto advanced = Advance(std::move(rec));
    if (!advanced.ok()) {
      if (first_error.ok()) first_error = advanced.status();
      continue;
    }
    if (ConfirmationTerminal(advanced->confirmation.state())) ++finished;
  }
  if (!first_error.ok()) return first_error;
  return finished;
}

absl::StatusOr<ConfirmationRecord> Confirmations::Advance(ConfirmationRecord rec) {
  const std::string before = rec.confirmation.SerializeAsString();
  v1::Confirmation& c = rec.confirmation;
  // Each pass moves one step forward or stops: at most two passes per step
  // (submit, then see it finish) and one to evaluate.
  for (int pass = 0; pass <= 2 * c.steps_size() && !ConfirmationTerminal(c.state()); ++pass) {
    const ConfirmationMove move = NextConfirmationMove(c);
    if (move.kind == ConfirmationMove::kSubmit) {
      if (absl::Status s = SubmitStep(rec, move.step); !s.ok()) return s;
      continue;
    }
    if (move.kind == ConfirmationMove::kWait) {
      v1::ConfirmationStep* step = c.mutable_steps(move.step);
      auto why = RefreshStep(rec.team, step);
      if (!why.ok()) return why.status();
      if (!IsTerminal(step->state())) {
        c.set_reason(absl::StrCat(
            "waiting for the ", StepName(c, move.step), " (", step->collection_id(), ", ",
            step->state() == v1::COLLECTION_STATE_RUNNING ? "running" : "queued", ")"));
        break;
      }
      c.set_reason(*why);  // what kGiveUp names when the step failed
      continue;
    }
    if (move.kind == ConfirmationMove::kGiveUp) {
      const v1::ConfirmationStep& step = c.steps(move.step);
      Finish(
          rec, v1::CONFIRMATION_STATE_UNCONFIRMED,
          absl::StrCat("the ", StepName(c, move.step), " (", step.collection_id(), ") ",
                       step.state() == v1::COLLECTION_STATE_CANCELLED ? "was cancelled" : "failed",
                       c.reason().empty() ? "" : ": ", c.reason()));
      break;
    }
    if (absl::Status s = Evaluate(rec); !s.ok()) return s;
  }
  if (rec.confirmation.SerializeAsString() == before) return rec;
  auto stored = store_.UpdateConfirmation(rec, NowMs());
  if (absl::IsFailedPrecondition(stored.status())) {  // another writer advanced it first
    return store_.GetConfirmation(rec.team, rec.confirmation.id());
  }
  if (stored.ok() && ConfirmationTerminal(stored->confirmation.state())) {
    LogInfo("confirmations", absl::StrCat("confirmation ", stored->confirmation.id(), " ",
                                          v1::ConfirmationState_Name(stored->confirmation.state()),
                                          ": ", stored->confirmation.reason()));
  }
  return stored;
}

absl::Status Confirmations::SubmitStep(ConfirmationRecord& rec, int step) {
  v1::Confirmation& c = rec.confirmation;
  v1::ConfirmationStep* s = c.mutable_steps(step);
  const int64_t round_id =
      s->side() == kBaselineSide ? c.baseline_round_id() : c.candidate_round_id();
  auto round = store_.GetRound(rec.team, round_id);
  if (!round.ok()) return round.status();
  auto source = SourceOf(store_, rec.team, *round);
  if (!source.ok()) return source.status();
  const v1::CollectionSpec& was = source->spec();
  const v1::Job& job = source->jobs(0);
  const v1::OperatorSpec* op = nullptr;
  for (const v1::OperatorSpec& o : was.operators()) {
    if (o.name() == round->operator_name()) op = &o;
  }
  if (op == nullptr) {
    return absl::InternalError(absl::StrCat("collection ", round->collection_id(),
                                            " has no operator ", round->operator_name()));
  }
  v1::SubmitCollectionRequest req;
  req.set_idempotency_key(absl::StrCat("npuperf-confirmation-", c.id(), "-", step + 1));
  v1::CollectionSpec* spec = req.mutable_spec();
  spec->set_kind(was.kind());
  *spec->mutable_params() = was.params();
  spec->mutable_params()->set_keep_raw_output(false);
  *spec->mutable_case_selector() = was.case_selector();
  spec->set_priority(was.priority());
  spec->set_max_concurrent_jobs(1);
  spec->set_description(absl::StrCat("confirmation ", c.id(), ": ", StepName(c, step), " of ",
                                     CaseKey(*round), " (round ", round->id(), ")"));
  v1::DeviceConstraints* on = spec->mutable_constraints();
  on->add_socs(c.device().soc());
  on->set_host(c.device().host());
  on->set_device_range(std::to_string(c.device().device_id()));
  v1::OperatorSpec* rerun = spec->add_operators();
  *rerun = *op;
  rerun->clear_case_ids();
  rerun->clear_op_name_map();
  rerun->clear_launch_map();
  rerun->set_op_name(job.op_name());
  if (!round->case_id().empty()) {
    rerun->add_case_ids(round->case_id());
    if (auto it = op->launch_map().find(round->case_id()); it != op->launch_map().end()) {
      rerun->set_launch(it->second);
    }
  }
  auto submitted = submit_(rec.team, req,
                           {{kConfirmationLabel, std::to_string(c.id())}, {kSideLabel, s->side()}});
  if (!submitted.ok()) {
    if (!SubmissionRefusedForGood(submitted.status())) return submitted.status();
    Finish(rec, v1::CONFIRMATION_STATE_UNCONFIRMED,
           absl::StrCat("the ", StepName(c, step),
                        " could not be submitted: ", submitted.status().ToString()));
    return absl::OkStatus();
  }
  s->set_collection_id(submitted->first.id());
  s->set_state(submitted->first.state());
  return absl::OkStatus();
}

absl::StatusOr<std::string> Confirmations::RefreshStep(const std::string& team,
                                                       v1::ConfirmationStep* step) {
  auto c = store_.GetCollectionPage(team, step->collection_id(), 0, 1);
  if (!c.ok()) return c.status();
  step->set_state(c->state());
  if (c->jobs_size() == 0) return std::string();
  const v1::Job& job = c->jobs(0);
  step->set_round_id(job.round_id());
  step->set_kernel_time_us(job.kernel_time_us());
  if (c->state() == v1::COLLECTION_STATE_CANCELLED && !c->cancel_reason().empty()) {
    return c->cancel_reason();
  }
  if (c->state() == v1::COLLECTION_STATE_FAILED || c->state() == v1::COLLECTION_STATE_CANCELLED) {
    return job.reason();
  }
  return std::string();
}

absl::Status Confirmations::Evaluate(ConfirmationRecord& rec) {
  v1::Confirmation& c = rec.confirmation;
  std::vector<v1::Round> sides[2];
  for (const v1::ConfirmationStep& s : c.steps()) {
    auto round = store_.GetRound(rec.team, s.round_id());
    if (!round.ok()) return round.status();
    sides[s.side() == kBaselineSide ? 0 : 1].push_back(*std::move(round));
  }
  auto options = ResolveVerdictOptions(rec.options);
  if (!options.ok()) return options.status();
  auto noise = NoiseOfCases(store_, rec.team, {CaseKey(sides[0].front())}, *options);
  if (!noise.ok()) return noise.status();
  options->noise = &*noise;
  *c.mutable_rerun() = CompareRounds(Pooled(sides[0]), Pooled(sides[1]), *options);
  const ConfirmationOutcome outcome = DecideConfirmation(c.original_verdict(), c.rerun());
  Finish(rec, outcome.state, outcome.reason);
  return absl::OkStatus();
}

void Confirmations::Finish(ConfirmationRecord& rec, v1::ConfirmationState state,
                           const std::string& reason) {
  rec.confirmation.set_state(state);
  rec.confirmation.set_reason(reason);
  *rec.confirmation.mutable_finished_at() = TimeUtil::MillisecondsToTimestamp(NowMs());
}

}  // namespace npuperf::server
