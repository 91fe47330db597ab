#include "common/metrics_http.h"

#include <sstream>

#include "CivetServer.h"
#include "absl/strings/str_cat.h"
#include "prometheus/text_serializer.h"

namespace npuperf {
namespace {

constexpr const char* kThreads = "8";
constexpr const char* kRequestTimeoutMs = "5000";
constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

const char* ReasonOf(int status) {
  switch (status) {
    case 200: return "OK";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

void Respond(mg_connection* conn, const HttpReply& r) {
  mg_printf(
      conn,
      "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
      r.status, ReasonOf(r.status), r.content_type.c_str(), r.body.size());
  mg_write(conn, r.body.data(), r.body.size());
}

class ReplyHandler final : public CivetHandler {
 public:
  explicit ReplyHandler(MetricsHttpServer::Handler handler) : handler_(std::move(handler)) {}
  bool handleGet(CivetServer*, mg_connection* conn) override {
    Respond(conn, handler_());
    return true;
  }

 private:
  const MetricsHttpServer::Handler handler_;
};

}  // namespace

struct MetricsHttpServer::Impl {
  std::vector<std::unique_ptr<ReplyHandler>> handlers;
  std::unique_ptr<CivetServer> server;  // last: stopped before the handlers go
};

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen, std::vector<std::shared_ptr<prometheus::Collectable>> metrics,
    std::map<std::string, Handler> extra) {
  extra["/metrics"] = [metrics = std::move(metrics)] {
    std::vector<prometheus::MetricFamily> families;
    for (const auto& c : metrics) {
      auto got = c->Collect();
      families.insert(families.end(), std::make_move_iterator(got.begin()),
                      std::make_move_iterator(got.end()));
    }
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, families);
    return HttpReply{200, kMetricsContentType, out.str()};
  };
  auto impl = std::make_unique<Impl>();
  try {
    impl->server = std::make_unique<CivetServer>(
        std::vector<std::string>{"listening_ports", listen, "num_threads", kThreads,
                                 "request_timeout_ms", kRequestTimeoutMs});
  } catch (const CivetException& e) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", listen, ": ", e.what()));
  }
  const std::vector<int> ports = impl->server->getListeningPorts();
  if (ports.empty()) return absl::UnavailableError(absl::StrCat("no listening port for ", listen));
  for (auto& [path, handler] : extra) {
    impl->handlers.push_back(std::make_unique<ReplyHandler>(std::move(handler)));
    impl->server->addHandler(path, *impl->handlers.back());
  }
  return std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer(std::move(impl), ports.front()));
}

MetricsHttpServer::MetricsHttpServer(std::unique_ptr<Impl> impl, int port)
    : impl_(std::move(impl)), port_(port) {}

MetricsHttpServer::~MetricsHttpServer() {
  if (impl_ && impl_->server) impl_->server->close();
}

}  // namespace npuperf
