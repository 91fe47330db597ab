#include "server/compare/timelines.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/input_rules.h"
#include "common/status_util.h"
#include "evidence/roofline.h"
#include "server/core/limits.h"
#include "server/core/request_rules.h"

namespace npuperf::server {
namespace {

bool Formal(const v1::Round& r) {
  const std::string& mode = r.evidence().fingerprint().mode();
  return mode == "standard" || mode == "compare";
}

std::vector<FieldViolation> CheckRequest(const v1::SubmitTimelineRequest& req) {
  std::vector<FieldViolation> bad;
  const bool by_rounds = req.round_ids_size() > 0;
  if (by_rounds == !req.collection_id().empty()) {
    bad.push_back({"round_ids", "give exactly one of round_ids and collection_id"});
  }
  if (req.round_ids_size() > kMaxTimelineRounds) {
    bad.push_back({"round_ids",
                   absl::StrCat(req.round_ids_size(), " entries; at most ", kMaxTimelineRounds)});
  } else {
    std::set<int64_t> seen;
    for (int i = 0; i < req.round_ids_size(); ++i) {
      const std::string f = absl::StrCat("round_ids[", i, "]");
      if (req.round_ids(i) <= 0) bad.push_back({f, "must be a round id (> 0)"});
      if (!seen.insert(req.round_ids(i)).second) bad.push_back({f, "is named twice"});
    }
  }
  CheckLength(req.collection_id(), kMaxCollectionIdBytes, "collection_id", bad);
  if (req.tile_dag_attestation().size() > kMaxTileDagAttestationBytes) {
    bad.push_back(
        {"tile_dag_attestation", absl::StrCat(req.tile_dag_attestation().size(), " bytes; at most ",
                                              kMaxTileDagAttestationBytes)});
  }
  if (by_rounds && req.case_ids_size() > 0) {
    bad.push_back({"case_ids", "only with collection_id (a round has one case)"});
  }
  if (req.case_ids_size() > kMaxTimelineRounds) {
    bad.push_back(
        {"case_ids", absl::StrCat(req.case_ids_size(), " entries; at most ", kMaxTimelineRounds)});
  } else {
    std::set<std::string> seen;
    for (int i = 0; i < req.case_ids_size(); ++i) {
      const std::string f = absl::StrCat("case_ids[", i, "]");
      const std::string& id = req.case_ids(i);
      if (id.empty() || id.size() > kMaxCaseIdBytes || !IsPrintableLine(id)) {
        bad.push_back(
            {f, absl::StrCat("must be 1..", kMaxCaseIdBytes, " bytes of printable text")});
      } else if (!seen.insert(id).second) {
        bad.push_back({f, "is named twice"});
      }
    }
  }
  return bad;
}

// The online agent of `host` offering `device`, or why there is none.
std::string DeviceProblem(const std::vector<AgentRecord>& agents, const v1::Fingerprint& fp) {
  for (const AgentRecord& a : agents) {
    if (a.status.host() != fp.host() || a.status.state() != "online") continue;
    for (const v1::DeviceStatus& d : a.status.devices()) {
      if (d.device_id() != fp.device_id()) continue;
      if (!fp.soc().empty() && d.soc() != fp.soc()) {
        return absl::StrCat("the round ran on SoC ", fp.soc(), " but ", fp.host(), " device ",
                            fp.device_id(), " is now ", d.soc());
      }
      return "";
    }
  }
  return absl::StrCat("the round ran on ", fp.host(), " device ", fp.device_id(),
                      ", which no online agent offers now; a timeline must run on the round's "
                      "device");
}

}  // namespace

absl::StatusOr<v1::CollectionSpec> TimelineSpecFor(const v1::Round& round,
                                                   const v1::CollectionSpec& formal) {
  const v1::Fingerprint& fp = round.evidence().fingerprint();
  const v1::OperatorSpec* op = nullptr;
  for (const v1::OperatorSpec& o : formal.operators()) {
    if (o.name() == round.operator_name()) op = &o;
  }
  if (op == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "operator_name: ", round.operator_name(), " is not in collection ", round.collection_id()));
  }
  const std::string& case_id = round.case_id();
  std::string op_name = op->op_name();
  if (auto it = op->op_name_map().find(case_id); op_name.empty() && it != op->op_name_map().end()) {
    op_name = it->second;
  }
  // The round's own record must match the spec it is said to come from.
  const std::pair<const char*, bool> mismatches[] = {
      {"op_name", op_name.empty() || op_name != round.evidence().op_name()},
      {"bundle_sha256", fp.bundle_sha256() != op->bundle_sha256()},
      {"seed", fp.seed() != formal.params().seed()},
      {"warm_up", fp.warm_up() != formal.params().warm_up()},
      {"device", fp.host().empty() || fp.device_id() < 0},
  };
  for (const auto& [field, differs] : mismatches) {
    if (differs) {
      return absl::FailedPreconditionError(
          absl::StrCat(field, ": round ", round.id(), " records another ", field,
                       " than its collection's spec (or none), so its timeline cannot match it"));
    }
  }
  v1::CollectionSpec s;
  s.set_kind(formal.kind());
  v1::ProfilingParams* p = s.mutable_params();
  const v1::ProfilingParams& f = formal.params();
  p->set_mode(v1::PROFILE_MODE_TIMELINE);
  p->set_warm_up(f.warm_up());
  p->set_skip_warm_up(f.skip_warm_up());
  p->set_seed(f.seed());
  p->set_retry(f.retry());
  p->set_timeout_seconds(f.timeout_seconds());
  p->set_repeats(1);
  p->set_keep_raw_output(true);  // the trace, biu_perf.db and ascend_task.db are the archive
  v1::OperatorSpec* o = s.add_operators();
  o->set_name(op->name());
  o->set_bundle_sha256(op->bundle_sha256());
  o->set_runner(op->runner());
  o->set_op_name(op_name);
  o->set_manifest_path(op->manifest_path());
  if (!case_id.empty()) o->add_case_ids(case_id);
  auto launch = op->launch_map().find(case_id);
  o->set_launch(launch != op->launch_map().end() ? launch->second : op->launch());
  *s.mutable_case_selector() = formal.case_selector();
  for (const auto& [key, value] : formal.labels()) {
    if (!absl::StartsWith(key, kServerLabelPrefix)) (*s.mutable_labels())[key] = value;
  }
  s.set_priority(formal.priority());
  s.set_max_concurrent_jobs(1);
  v1::DeviceConstraints* c = s.mutable_constraints();
  if (!fp.soc().empty()) c->add_socs(fp.soc());
  c->set_host(fp.host());
  c->set_device_range(absl::StrCat(fp.device_id()));
  s.set_description(absl::StrCat("instruction timeline of round ", round.id()));
  return s;
}

Timelines::Timelines(Store& store, ServerSubmit submit, ServerCancel cancel)
    : store_(store), submit_(std::move(submit)), cancel_(std::move(cancel)) {}

absl::StatusOr<std::vector<v1::Round>> Timelines::ResolveRounds(
    const std::string& team, const v1::SubmitTimelineRequest& req,
    std::map<std::string, v1::CollectionSpec>* formal) {
  std::vector<v1::Round> rounds;
  std::vector<std::string> fields;
  for (int i = 0; i < req.round_ids_size(); ++i) {
    absl::StatusOr<v1::Round> r = store_.GetRound(team, req.round_ids(i));
    if (absl::IsNotFound(r.status())) {
      return absl::NotFoundError(
          absl::StrCat("round_ids[", i, "]: round ", req.round_ids(i), " not found"));
    }
    if (!r.ok()) return r.status();
    rounds.push_back(*std::move(r));
    fields.push_back(absl::StrCat("round_ids[", i, "]"));
  }
  if (!req.collection_id().empty()) {
    absl::StatusOr<v1::Collection> c = store_.GetCollectionPage(team, req.collection_id(), 0, 1);
    if (!c.ok()) return c.status();
    (*formal)[req.collection_id()] = c->spec();
    // Never more than kMaxTimelineRounds + 1 rounds are read: a collection may hold 100,000.
    RoundFilter f;
    f.team = team;
    f.collection_id = req.collection_id();
    f.limit = kMaxTimelineRounds + 1;
    auto read = [&](const std::string& field) -> absl::StatusOr<bool> {
      absl::StatusOr<RoundPage> page = store_.ListRounds(f);
      if (!page.ok()) return page.status();
      for (v1::Round& r : page->rounds) {
        fields.push_back(field.empty() ? absl::StrCat("collection_id (round ", r.id(), ")")
                                       : field);
        rounds.push_back(std::move(r));
      }
      return !page->rounds.empty();
    };
    for (int i = 0; i < req.case_ids_size() && std::ssize(rounds) <= kMaxTimelineRounds; ++i) {
      f.case_id = req.case_ids(i);
      absl::StatusOr<bool> found = read(absl::StrCat("case_ids[", i, "]"));
      if (!found.ok()) return found.status();
      if (!*found) {
        return absl::NotFoundError(absl::StrCat("case_ids[", i, "]: collection ",
                                                req.collection_id(), " has no round of case ",
                                                req.case_ids(i)));
      }
    }
    if (req.case_ids_size() == 0) {
      if (absl::StatusOr<bool> found = read(""); !found.ok()) return found.status();
    }
    if (rounds.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "collection_id: collection ", req.collection_id(), " has no round (nothing succeeded)"));
    }
    if (std::ssize(rounds) > kMaxTimelineRounds) {
      return InvalidArgumentWithFields(
          {{"collection_id",
            absl::StrCat("more than ", kMaxTimelineRounds, " rounds; one request queues at most ",
                         kMaxTimelineRounds, " timelines: name the cases (case_ids)")}});
    }
  }
  for (size_t i = 0; i < rounds.size(); ++i) {
    if (!Formal(rounds[i])) {
      const std::string& mode = rounds[i].evidence().fingerprint().mode();
      return absl::FailedPreconditionError(absl::StrCat(
          fields[i], ": round ", rounds[i].id(), " is a ", mode.empty() ? "mode-less" : mode,
          " round; a timeline anchors to a formal round (standard or compare mode)"));
    }
  }
  return rounds;
}

absl::StatusOr<v1::TimelineRun> Timelines::SubmitOne(const std::string& team,
                                                     const v1::Round& round,
                                                     const v1::CollectionSpec& timeline_spec) {
  const std::string anchor = absl::StrCat(round.id());
  v1::TimelineRun run;
  run.set_round_id(round.id());
  run.set_operator_name(round.operator_name());
  run.set_case_id(round.case_id());
  CollectionFilter f;
  f.team = team;
  f.labels = {{kTimelineOfLabel, anchor}};
  f.limit = 500;
  absl::StatusOr<std::vector<v1::Collection>> earlier = store_.ListCollections(f);
  if (!earlier.ok()) return earlier.status();
  for (const v1::Collection& c : *earlier) {
    if (c.state() == v1::COLLECTION_STATE_QUEUED || c.state() == v1::COLLECTION_STATE_RUNNING) {
      run.set_collection_id(c.id());
      return run;
    }
  }
  v1::SubmitCollectionRequest req;
  *req.mutable_spec() = timeline_spec;
  req.set_idempotency_key(absl::StrCat("npuperf-timeline-", anchor, "-", earlier->size()));
  auto submitted = submit_(team, req, {{kTimelineOfLabel, anchor}});
  if (!submitted.ok()) return submitted.status();
  run.set_collection_id(submitted->first.id());
  run.set_created(submitted->second);
  return run;
}

absl::StatusOr<v1::SubmitTimelineResponse> Timelines::Submit(const std::string& team,
                                                             const v1::SubmitTimelineRequest& req) {
  if (std::vector<FieldViolation> bad = CheckRequest(req); !bad.empty()) {
    return InvalidArgumentWithFields(bad);
  }
  std::map<std::string, v1::CollectionSpec> formal;  // collection id -> its spec
  absl::StatusOr<std::vector<v1::Round>> rounds = ResolveRounds(team, req, &formal);
  if (!rounds.ok()) return rounds.status();
  absl::StatusOr<std::vector<AgentRecord>> agents = store_.ListAgents();
  if (!agents.ok()) return agents.status();
  // Every round is matched before anything is queued.
  std::vector<v1::CollectionSpec> specs;
  for (const v1::Round& r : *rounds) {
    if (!formal.contains(r.collection_id())) {
      absl::StatusOr<v1::Collection> c = store_.GetCollectionPage(team, r.collection_id(), 0, 1);
      if (!c.ok()) return c.status();
      formal[r.collection_id()] = c->spec();
    }
    absl::StatusOr<v1::CollectionSpec> spec = TimelineSpecFor(r, formal[r.collection_id()]);
    if (!spec.ok()) return spec.status();
    if (!req.tile_dag_attestation().empty()) {
      auto a = evidence::ParseTileDagAttestation(req.tile_dag_attestation(), r.evidence().op_name(),
                                                 absl::StrCat("for round ", r.id()));
      if (!a.ok()) {
        return InvalidArgumentWithFields(
            {{"tile_dag_attestation", std::string(a.status().message())}});
      }
      spec->set_tile_dag_attestation(req.tile_dag_attestation());
    }
    if (const std::string why = DeviceProblem(*agents, r.evidence().fingerprint()); !why.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("device: round ", r.id(), ": ", why));
    }
    specs.push_back(*std::move(spec));
  }
  v1::SubmitTimelineResponse resp;
  for (size_t i = 0; i < rounds->size(); ++i) {
    absl::StatusOr<v1::TimelineRun> run = SubmitOne(team, (*rounds)[i], specs[i]);
    if (!run.ok()) {
      for (const v1::TimelineRun& queued : resp.runs()) {
        if (!queued.created()) continue;
        (void)cancel_(team, queued.collection_id(),
                      absl::StrCat("SubmitTimeline failed for round ", (*rounds)[i].id(), ": ",
                                   run.status().message()));
      }
      return run.status();
    }
    *resp.add_runs() = *std::move(run);
  }
  return resp;
}

}  // namespace npuperf::server
