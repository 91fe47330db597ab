#include "agent/http_endpoint.h"

#include <sstream>
#include <vector>

#include "CivetServer.h"
#include "absl/strings/str_cat.h"
#include "prometheus/text_serializer.h"

namespace npuperf::agent {
namespace {

void Respond(mg_connection* conn, int status, const char* reason, const char* content_type,
             const std::string& body) {
  mg_printf(
      conn,
      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
      status, reason, content_type, body.size());
  mg_write(conn, body.data(), body.size());
}

class MetricsHandler final : public CivetHandler {
 public:
  explicit MetricsHandler(std::shared_ptr<prometheus::Registry> registry)
      : registry_(std::move(registry)) {}
  bool handleGet(CivetServer*, mg_connection* conn) override {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, registry_->Collect());
    Respond(conn, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", out.str());
    return true;
  }

 private:
  const std::shared_ptr<prometheus::Registry> registry_;
};

class HealthHandler final : public CivetHandler {
 public:
  explicit HealthHandler(std::function<HealthReport()> health) : health_(std::move(health)) {}
  bool handleGet(CivetServer*, mg_connection* conn) override {
    const HealthReport r = health_();
    Respond(conn, r.http_status, r.healthy ? "OK" : "Service Unavailable", "application/json",
            r.json + "\n");
    return true;
  }

 private:
  const std::function<HealthReport()> health_;
};

}  // namespace

struct HttpEndpoint::Impl {
  Impl(std::shared_ptr<prometheus::Registry> registry, std::function<HealthReport()> health)
      : metrics(std::move(registry)), healthz(std::move(health)) {}
  MetricsHandler metrics;
  HealthHandler healthz;
  std::unique_ptr<CivetServer> server;  // last: stopped before the handlers go
};

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(
    const std::string& listen, std::shared_ptr<prometheus::Registry> registry,
    std::function<HealthReport()> health) {
  auto impl = std::make_unique<Impl>(std::move(registry), std::move(health));
  try {
    impl->server = std::make_unique<CivetServer>(
        // Enough threads, and a read timeout, that slow clients cannot hold
        // every one of them (probes would fail).
        std::vector<std::string>{"listening_ports", listen, "num_threads", "8",
                                 "request_timeout_ms", "5000"});
  } catch (const CivetException& e) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", listen, ": ", e.what()));
  }
  const std::vector<int> ports = impl->server->getListeningPorts();
  if (ports.empty()) return absl::UnavailableError(absl::StrCat("no listening port for ", listen));
  impl->server->addHandler("/metrics", impl->metrics);
  impl->server->addHandler("/healthz", impl->healthz);
  return std::unique_ptr<HttpEndpoint>(new HttpEndpoint(std::move(impl), ports.front()));
}

HttpEndpoint::HttpEndpoint(std::unique_ptr<Impl> impl, int port)
    : impl_(std::move(impl)), port_(port) {}

HttpEndpoint::~HttpEndpoint() {
  if (impl_ && impl_->server) impl_->server->close();
}

}  // namespace npuperf::agent
