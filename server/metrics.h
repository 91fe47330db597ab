#pragma once

#include <string>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace npuperf::server {

// Every metric of npuperf-server, registered once (style.md R15). Names
// follow npuperf_<subsystem>_<noun>_<unit>; labels are bounded sets.
// Thread-safe (prometheus-cpp metrics are atomic).
struct ServerMetrics {
  explicit ServerMetrics(prometheus::Registry& registry);

  // Counts one finished RPC by method and status code name.
  void CountRequest(const std::string& method, const std::string& code);

  prometheus::Family<prometheus::Counter>& requests;
  prometheus::Counter& collections_submitted;
  prometheus::Counter& jobs_leased;
  prometheus::Counter& lease_expirations;
  prometheus::Counter& results_stored;
  prometheus::Counter& results_duplicate;
  prometheus::Counter& results_stale;
  prometheus::Counter& results_failed;
};

}  // namespace npuperf::server
