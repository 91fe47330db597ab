#include "server/metrics.h"

namespace npuperf::server {
namespace {

prometheus::Counter& NewCounter(prometheus::Registry& r, const std::string& name,
                                const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r).Add({});
}

}  // namespace

ServerMetrics::ServerMetrics(prometheus::Registry& r)
    : requests(prometheus::BuildCounter()
                   .Name("npuperf_server_grpc_requests_total")
                   .Help("gRPC requests by method and status code")
                   .Register(r)),
      collections_submitted(NewCounter(r, "npuperf_server_collections_submitted_total",
                                       "Collections created")),
      jobs_leased(NewCounter(r, "npuperf_server_jobs_leased_total", "Job attempts leased")),
      lease_expirations(NewCounter(r, "npuperf_server_lease_expirations_total",
                                   "Leases taken back after their TTL")),
      results_stored(NewCounter(r, "npuperf_server_ingest_rounds_stored_total",
                                "Rounds of evidence stored")),
      results_duplicate(NewCounter(r, "npuperf_server_ingest_duplicates_total",
                                   "Result reports already applied (resends)")),
      results_stale(NewCounter(r, "npuperf_server_ingest_stale_total",
                               "Result or progress reports rejected for a stale fencing token")),
      results_failed(NewCounter(r, "npuperf_server_ingest_failed_attempts_total",
                                "Failed attempts reported by agents")) {}

void ServerMetrics::CountRequest(const std::string& method, const std::string& code) {
  requests.Add({{"method", method}, {"code", code}}).Increment();
}

}  // namespace npuperf::server
