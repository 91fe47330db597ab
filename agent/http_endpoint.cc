#include "agent/http_endpoint.h"

#include "common/process_metrics.h"

namespace npuperf::agent {

absl::StatusOr<std::unique_ptr<HttpEndpoint>> HttpEndpoint::Start(
    const std::string& listen, std::shared_ptr<prometheus::Registry> registry,
    std::function<HealthReport()> health) {
  auto http = MetricsHttpServer::Start(
      listen, {std::move(registry), std::make_shared<ProcessCollector>()},
      {{"/healthz", {[health = std::move(health)](const HttpRequest&) {
          const HealthReport r = health();
          return HttpReply{r.http_status, "application/json", r.json + "\n", {}};
        }}}});
  if (!http.ok()) return http.status();
  return std::unique_ptr<HttpEndpoint>(new HttpEndpoint(*std::move(http)));
}

HttpEndpoint::~HttpEndpoint() = default;

}  // namespace npuperf::agent
