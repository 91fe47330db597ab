#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "prometheus/collectable.h"

namespace npuperf {

// What one route sees of a request. Every field is client input.
struct HttpRequest {
  std::string method;  // "GET", "HEAD" or "POST" (anything else never reaches a route)
  std::string path;    // URL-decoded, without the query
  std::string query;   // raw, after '?'; "" for none
  // The query's parameters, decoded (application/x-www-form-urlencoded), in order.
  std::vector<std::pair<std::string, std::string>> params;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;                            // at most kMaxHttpBodyBytes
  std::string peer;                            // the client's IP address
  bool tls = false;

  // The header's value ("" when absent); `name` lower-case.
  std::string Header(const std::string& name) const;
  // The first parameter named `name`, or nullptr.
  const std::string* Param(std::string_view name) const;
};

// One answer of a route. headers are extra response headers (Set-Cookie,
// Location, Cache-Control ...); a name or value holding CR or LF is refused
// (500) rather than written.
struct HttpReply {
  int status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// A route: its handler, and whether it takes POST besides GET and HEAD.
struct HttpRoute {
  std::function<HttpReply(const HttpRequest&)> handler;
  bool accepts_post = false;
};

// Limits every request is held to before a route sees it.
inline constexpr size_t kMaxHttpBodyBytes = 16 << 10;   // larger: 413
inline constexpr size_t kMaxHttpTargetBytes = 4 << 10;  // path + query longer: 414

// Decodes application/x-www-form-urlencoded text (a query or a form body):
// '+' is a space, %XX a byte. INVALID_ARGUMENT for a bad escape.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseUrlEncoded(
    std::string_view text);
// The inverse for one value: every byte but [A-Za-z0-9-._~] as %XX.
std::string UrlEncode(std::string_view text);

// The /metrics port of server and agent, on civetweb (the server
// prometheus-cpp's Exposer is built on; Exposer cannot set the Content-Type
// or serve other paths). GET /metrics answers the Prometheus text format
// 0.0.4 (`text/plain; version=0.0.4; charset=utf-8`) of every collectable,
// in order; each extra path (e.g. the agent's /healthz, the server's /ui)
// answers its route's reply, for the path itself and every path below it.
// Before a route runs: a method other than GET and HEAD (and POST where
// the route accepts it) gets 405, a body over kMaxHttpBodyBytes 413, a path
// and query over kMaxHttpTargetBytes 414, a malformed query or
// Content-Length 400. HEAD answers GET's headers without the body.
// Handlers run on the listener threads and must be thread-safe. A few
// threads and a read timeout keep slow clients from holding every thread.
// Destruction stops the listener.
class MetricsHttpServer {
 public:
  // Listens on HOST:PORT (port 0: a free port). UNAVAILABLE names `listen`
  // when it cannot bind.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(
      const std::string& listen, std::vector<std::shared_ptr<prometheus::Collectable>> metrics,
      std::map<std::string, HttpRoute> extra = {});
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
