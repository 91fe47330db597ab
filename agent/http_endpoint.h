#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "agent/health.h"
#include "prometheus/registry.h"

namespace npuperf::agent {

// The agent's HTTP port: GET /metrics (Prometheus text format of `registry`)
// and GET /healthz (HealthReport: 200 or 503 with a JSON body), both served by
// civetweb, the server prometheus-cpp's Exposer is built on. Exposer cannot
// serve anything but metrics, hence this small replacement (agent/README.md).
// Owns its listener threads; destruction stops them. Thread-safe.
class HttpEndpoint {
 public:
  // Listens on HOST:PORT (port 0: any free port). `health` is called on the
  // listener threads and must be thread-safe.
  static absl::StatusOr<std::unique_ptr<HttpEndpoint>> Start(
      const std::string& listen, std::shared_ptr<prometheus::Registry> registry,
      std::function<HealthReport()> health);
  ~HttpEndpoint();

  // The bound port (the chosen one when listen asked for port 0).
  int port() const { return port_; }

 private:
  struct Impl;
  explicit HttpEndpoint(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_;
};

}  // namespace npuperf::agent
