#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"

namespace npuperf {

// One answer of an extra HTTP path.
struct HttpReply {
  int status = 200;
  std::string content_type;
  std::string body;
};

// The /metrics port of server and agent, on civetweb (the server
// prometheus-cpp's Exposer is built on; Exposer cannot set the Content-Type
// or serve other paths). GET /metrics answers the Prometheus text format
// 0.0.4 (`text/plain; version=0.0.4; charset=utf-8`) of every collectable,
// in order; each extra path (e.g. the agent's /healthz) answers its
// handler's reply. Handlers run on the listener threads and must be
// thread-safe. A few threads and a read timeout keep slow clients from
// holding every thread. Destruction stops the listener.
class MetricsHttpServer {
 public:
  using Handler = std::function<HttpReply()>;

  // Listens on HOST:PORT (port 0: a free port). UNAVAILABLE names `listen`
  // when it cannot bind.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen, std::vector<std::shared_ptr<prometheus::Collectable>> metrics,
      std::map<std::string, Handler> extra = {});
  ~MetricsHttpServer();

  // The bound port (the chosen one when listen asked for port 0).
  int port() const { return port_; }

 private:
  struct Impl;
  MetricsHttpServer(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_;
};

}  // namespace npuperf
