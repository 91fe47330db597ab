#include "common/metrics_http.h"

#include <cstring>
#include <sstream>

#include "CivetServer.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "prometheus/text_serializer.h"

namespace npuperf {
namespace {

constexpr const char* kThreads = "8";
constexpr const char* kRequestTimeoutMs = "5000";
constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kTextContentType = "text/plain; charset=utf-8";

const char* ReasonOf(int status) {
  switch (status) {
    case 200: return "OK";
    case 302: return "Found";
    case 303: return "See Other";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

bool HasLineBreak(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

HttpReply Plain(int status, std::string body) {
  return HttpReply{status, kTextContentType, std::move(body) + "\n", {}};
}

void Respond(mg_connection* conn, const HttpReply& reply, bool head) {
  const HttpReply* r = &reply;
  HttpReply refused;
  bool ok = !HasLineBreak(r->content_type);
  for (const auto& [name, value] : r->headers)
    ok = ok && !HasLineBreak(name) && !HasLineBreak(value);
  if (!ok) {
    refused = Plain(500, "a response header held a line break");
    r = &refused;
  }
  std::string out = absl::StrCat("HTTP/1.1 ", r->status, " ", ReasonOf(r->status),
                                 "\r\nContent-Type: ", r->content_type,
                                 "\r\nContent-Length: ", r->body.size(), "\r\n");
  for (const auto& [name, value] : r->headers) absl::StrAppend(&out, name, ": ", value, "\r\n");
  out += "Connection: close\r\n\r\n";
  if (!head) out += r->body;
  mg_write(conn, out.data(), out.size());
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::StatusOr<std::string> DecodeComponent(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] != '%') {
      out += s[i];
    } else {
      const int hi = i + 2 < s.size() ? HexValue(s[i + 1]) : -1;
      const int lo = hi >= 0 ? HexValue(s[i + 2]) : -1;
      if (lo < 0) return absl::InvalidArgumentError("a bad %-escape");
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
  }
  return out;
}

// Reads the body: at most kMaxHttpBodyBytes, else 413 in *error.
bool ReadBody(mg_connection* conn, const mg_request_info& ri, std::string* body, HttpReply* error) {
  if (ri.content_length > static_cast<long long>(kMaxHttpBodyBytes)) {
    *error = Plain(413, absl::StrCat("request body over ", kMaxHttpBodyBytes, " bytes"));
    return false;
  }
  char buf[4096];
  for (;;) {
    const int n = mg_read(conn, buf, sizeof(buf));
    if (n <= 0) break;
    body->append(buf, static_cast<size_t>(n));
    if (body->size() > kMaxHttpBodyBytes) {
      *error = Plain(413, absl::StrCat("request body over ", kMaxHttpBodyBytes, " bytes"));
      return false;
    }
  }
  return true;
}

// The request as routes see it, or the error reply that ends it first.
bool BuildRequest(mg_connection* conn, HttpRequest* req, HttpReply* error) {
  const mg_request_info* ri = mg_get_request_info(conn);
  req->method = ri->request_method != nullptr ? ri->request_method : "";
  req->path = ri->local_uri != nullptr ? ri->local_uri : "";
  req->query = ri->query_string != nullptr ? ri->query_string : "";
  req->peer = ri->remote_addr;
  req->tls = ri->is_ssl != 0;
  const char* raw_uri = ri->request_uri != nullptr ? ri->request_uri : "";
  if (std::strlen(raw_uri) + req->query.size() > kMaxHttpTargetBytes) {
    *error = Plain(414, absl::StrCat("path and query over ", kMaxHttpTargetBytes, " bytes"));
    return false;
  }
  for (int i = 0; i < ri->num_headers; ++i) {
    req->headers[absl::AsciiStrToLower(ri->http_headers[i].name)] = ri->http_headers[i].value;
  }
  auto params = ParseUrlEncoded(req->query);
  if (!params.ok()) {
    *error = Plain(400, absl::StrCat("malformed query: ", params.status().message()));
    return false;
  }
  req->params = *std::move(params);
  const std::string length = req->Header("content-length");
  int64_t n = 0;
  if (!length.empty() && (!absl::SimpleAtoi(length, &n) || n < 0)) {
    *error = Plain(400, "malformed Content-Length");
    return false;
  }
  return ReadBody(conn, *ri, &req->body, error);
}

class RouteHandler final : public CivetHandler {
 public:
  explicit RouteHandler(HttpRoute route) : route_(std::move(route)) {}
  bool handleGet(CivetServer*, mg_connection* conn) override { return Serve(conn, false); }
  bool handleHead(CivetServer*, mg_connection* conn) override { return Serve(conn, true); }
  bool handlePost(CivetServer*, mg_connection* conn) override {
    if (!route_.accepts_post) return NotAllowed(conn);
    return Serve(conn, false);
  }
  bool handlePut(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }
  bool handleDelete(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }
  bool handleOptions(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }
  bool handlePatch(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }

 private:
  bool Serve(mg_connection* conn, bool head) {
    HttpRequest req;
    HttpReply error;
    if (!BuildRequest(conn, &req, &error)) {
      Respond(conn, error, head);
      return true;
    }
    Respond(conn, route_.handler(req), head);
    return true;
  }
  bool NotAllowed(mg_connection* conn) {
    HttpReply r = Plain(405, "method not allowed");
    r.headers.emplace_back("Allow", route_.accepts_post ? "GET, HEAD, POST" : "GET, HEAD");
    Respond(conn, r, false);
    return true;
  }

  const HttpRoute route_;
};

}  // namespace

std::string HttpRequest::Header(const std::string& name) const {
  const auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

const std::string* HttpRequest::Param(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return &value;
  }
  return nullptr;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseUrlEncoded(
    std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('&', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view pair = text.substr(start, end - start);
    start = end + 1;
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    auto key = DecodeComponent(pair.substr(0, eq));
    if (!key.ok()) return key.status();
    auto value = DecodeComponent(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (!value.ok()) return value.status();
    out.emplace_back(*std::move(key), *std::move(value));
  }
  return out;
}

std::string UrlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' ||
        c == '~') {
      out += c;
    } else {
      const auto b = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

struct MetricsHttpServer::Impl {
  std::vector<std::unique_ptr<RouteHandler>> handlers;
  std::unique_ptr<CivetServer> server;  // last: stopped before the handlers go
};

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const std::string& listen, std::vector<std::shared_ptr<prometheus::Collectable>> metrics,
    std::map<std::string, HttpRoute> extra) {
  extra["/metrics"].handler = [metrics = std::move(metrics)](const HttpRequest&) {
    std::vector<prometheus::MetricFamily> families;
    for (const auto& c : metrics) {
      auto got = c->Collect();
      families.insert(families.end(), std::make_move_iterator(got.begin()),
                      std::make_move_iterator(got.end()));
    }
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, families);
    return HttpReply{200, kMetricsContentType, out.str(), {}};
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
  for (auto& [path, route] : extra) {
    impl->handlers.push_back(std::make_unique<RouteHandler>(std::move(route)));
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
