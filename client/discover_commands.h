#pragma once

#include <ostream>

#include "absl/status/statusor.h"
#include "client/commands.h"
#include "npuperf/v1/collection.pb.h"

namespace npuperf::client {

// Discovery on the service (docs/evidence.md "Discovery", docs/api.md):
//
//   npuperf discover OPDIR... [--batch DIR] [--case-id ID ... --case-arg/--case-env]
//                    [--runner R] [--soc SOC] [--devices R] [--label k=v] [--job-timeout S]
//
// submits a PROFILE_MODE_DISCOVER collection (the operator directories bundled
// as submit does), follows it like submit's watch and prints the candidate
// table of every job: text, one block per job with the columns count,
// task_type, total_duration_us, launches, incidental, exact_op_name
// (tab-separated, the name last as it runs long); --format json: the finished
// collection (jobs[].discovery). Incidental reasons are this client's
// (evidence/candidates.h IncidentalReason, the one documented list), not the
// agent's. Exit codes: 0 every job succeeded, 1 a discovery job failed (its
// reason is printed), 2 usage, 5 unavailable, 6 not found.
int RunDiscover(Session& s, const SubmitArgs& args, std::ostream& out, std::ostream& err);

// submit --op-name-auto, client-side: runs discovery of args' operators (and
// cases) first and returns args with discovered_op_names filled: per job, the
// one candidate that is not a known incidental kernel (evidence
// PickAutoCandidate). FAILED_PRECONDITION listing the candidates when a job
// has none or several, or left candidates out (over the report's bounds);
// FAILED_PRECONDITION naming the job when its discovery failed; call errors
// as they are.
absl::StatusOr<SubmitArgs> DiscoverOpNames(Session& s, const SubmitArgs& args, std::ostream& err);

// The text table of one job's discovery (RunDiscover's text output).
void PrintDiscovery(const v1::Job& job, std::ostream& out);

}  // namespace npuperf::client
