#pragma once

#include <ostream>
#include <vector>

#include "tests/chaos/checker.h"
#include "tests/chaos/faults.h"
#include "tests/chaos/fleet.h"

namespace npuperf::chaos {

// How long the fleet took to work again after one fault: from the fault's end
// (restart, SIGCONT, disk freed, the sim run that took it; a PostgreSQL
// restart's return) to the next lease granted on the devices it touched (any
// device for PostgreSQL and for a replica, whose agents' devices are meant);
// for a replica also from the kill to its first healthy /healthz. -1: none.
struct Recovery {
  int64_t to_lease_ms = -1;
  int64_t to_answer_ms = -1;
};
Recovery RecoveryOf(const FaultRecord& r, const Fleet& fleet, const std::vector<Lease>& leases);

// The soak's report: faults by kind (injected, skipped, recovery p50/max),
// job figures, then every violation with its facts.
void PrintReport(std::ostream& out, const std::vector<FaultRecord>& faults, const Fleet& fleet,
                 const CheckResult& check, double wall_s);

}  // namespace npuperf::chaos
