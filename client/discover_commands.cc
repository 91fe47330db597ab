#include "client/discover_commands.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/format.h"
#include "evidence/candidates.h"

namespace npuperf::client {
namespace ev = npuperf::evidence;
namespace {

// "inplace_add_rmsnorm" or "inplace_add_rmsnorm case c1".
std::string JobName(const v1::Job& job) {
  return job.case_id().empty() ? job.operator_name()
                               : absl::StrCat(job.operator_name(), " case ", job.case_id());
}

// The candidate as the evidence library holds it, with this client's
// incidental reason.
ev::OpCandidate CandidateOf(const v1::DiscoveryCandidate& c) {
  ev::OpCandidate k;
  k.op_name = c.op_name();
  k.task_type = c.task_type();
  k.op_type = c.op_type();
  k.count = c.count();
  k.total_duration_us = c.total_duration_us();
  k.incidental = ev::IncidentalReason(c.op_name(), c.op_type(), c.task_type());
  return k;
}

// "#1:0/3,#2:0/7,+4 more" (N/A where the table had no stream or task id).
std::string LaunchesText(const v1::DiscoveryCandidate& c) {
  std::string text;
  auto id = [](int64_t v) { return v < 0 ? std::string("N/A") : absl::StrCat(v); };
  for (const v1::DiscoveryLaunch& l : c.launches()) {
    absl::StrAppend(&text, text.empty() ? "" : ",", "#", l.index(), ":", id(l.stream_id()), "/",
                    id(l.task_id()));
  }
  if (c.count() > c.launches_size())
    absl::StrAppend(&text, text.empty() ? "" : ",", "+", c.count() - c.launches_size(), " more");
  return text;
}

SubmitArgs DiscoveryArgs(const SubmitArgs& given) {
  SubmitArgs a = given;
  a.mode = v1::PROFILE_MODE_DISCOVER;
  a.op_name.clear();
  a.op_name_map.clear();
  a.launch.clear();
  a.idempotency_key.clear();  // the key belongs to the collection submitted after it
  a.repeats = 0;
  a.warm_up = -1;
  a.wait = true;
  a.op_name_auto = false;
  a.discovered_op_names.clear();
  return a;
}

// The one target of a finished discovery job, or why there is none.
absl::StatusOr<std::string> PickTarget(const v1::Job& job) {
  if (job.state() != v1::JOB_STATE_SUCCEEDED) {
    return absl::FailedPreconditionError(absl::StrCat("discovery of ", JobName(job), " ",
                                                      StateName(job.state()), ": ", job.reason(),
                                                      "; give --op-name"));
  }
  std::vector<ev::OpCandidate> candidates;
  for (const auto& c : job.discovery().candidates()) candidates.push_back(CandidateOf(c));
  const std::string source = absl::StrCat(JobName(job), " (", job.discovery().source(), ")");
  if (job.discovery().candidates_left_off() > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("discovery of ", JobName(job), " left ", job.discovery().candidates_left_off(),
                     " candidates out of its report; cannot tell a single target; give --op-name"));
  }
  absl::StatusOr<ev::OpCandidate> one = ev::PickAutoCandidate(candidates, source);
  if (!one.ok()) return one.status();
  return one->op_name;
}

}  // namespace

void PrintDiscovery(const v1::Job& job, std::ostream& out) {
  const v1::DiscoveryResult& d = job.discovery();
  out << JobName(job) << ": ";
  if (job.state() != v1::JOB_STATE_SUCCEEDED) {
    out << StateName(job.state()) << ": " << job.reason() << "\n";
    return;
  }
  out << d.candidates_size() << " candidates"
      << (d.candidates_left_off() > 0 ? absl::StrCat(" (", d.candidates_left_off(), " left out)")
                                      : "")
      << " from " << d.source() << "\n";
  out << "count\ttask_type\ttotal_duration_us\tlaunches\tincidental\texact_op_name\n";
  for (const v1::DiscoveryCandidate& c : d.candidates()) {
    char total[64];
    std::snprintf(total, sizeof(total), "%.3f", c.total_duration_us());
    const std::string why = CandidateOf(c).incidental;
    out << c.count() << "\t" << (c.task_type().empty() ? "-" : c.task_type()) << "\t" << total
        << "\t" << LaunchesText(c) << "\t" << (why.empty() ? "-" : why) << "\t" << c.op_name()
        << "\n";
  }
}

int RunDiscover(Session& s, const SubmitArgs& args, std::ostream& out, std::ostream& err) {
  if (!args.op_name.empty() || !args.op_name_map.empty() || !args.launch.empty()) {
    return ReportUsage("discover", "discovery takes no --op-name, --op-name-map or --launch",
                       s.config(), out, err);
  }
  absl::StatusOr<v1::Collection> c = SubmitAndFollow(s, DiscoveryArgs(args), err);
  if (!c.ok()) return ReportError(c.status(), s.config(), out, err);
  if (s.config().format == OutputFormat::kJson) {
    out << ToJson(*c) << "\n";
  } else {
    for (const v1::Job& job : c->jobs()) PrintDiscovery(job, out);
  }
  return c->state() == v1::COLLECTION_STATE_SUCCEEDED ? kExitOk : kExitError;
}

absl::StatusOr<SubmitArgs> DiscoverOpNames(Session& s, const SubmitArgs& args, std::ostream& err) {
  absl::StatusOr<v1::Collection> c = SubmitAndFollow(s, DiscoveryArgs(args), err);
  if (!c.ok()) return c.status();
  SubmitArgs named = args;
  for (const v1::Job& job : c->jobs()) {
    absl::StatusOr<std::string> target = PickTarget(job);
    if (!target.ok()) return target.status();
    err << "discovered " << JobName(job) << ": " << *target << "\n";
    named.discovered_op_names[{job.operator_name(), job.case_id()}] = *target;
  }
  return named;
}

}  // namespace npuperf::client
