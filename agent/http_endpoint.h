#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/health.h"
#include "common/metrics_http.h"
#include "prometheus/registry.h"

namespace npuperf::agent {

// The agent's HTTP port: GET /metrics (Prometheus text format of `registry`)
// with the process and build metrics (common/process_metrics.h), and GET
// /healthz (HealthReport: 200 or 503 with a JSON body), both served by
// common/metrics_http.h. Owns its listener threads; destruction stops them.
// Thread-safe.
class HttpEndpoint {
 public:
  // Listens on HOST:PORT (port 0: any free port). `health` is called on the
  // listener threads and must be thread-safe.
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(
      const std::string& listen, std::shared_ptr<prometheus::Registry> registry,
      std::function<HealthReport()> health);
  ~HttpEndpoint();

  // The bound port (the chosen one when listen asked for port 0).
  int port() const { return http_->port(); }

 private:
  explicit HttpEndpoint(std::unique_ptr<MetricsHttpServer> http) : http_(std::move(http)) {}
  std::unique_ptr<MetricsHttpServer> http_;
};

}  // namespace npuperf::agent
