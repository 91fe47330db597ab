// A minimal HTTP/1.1 client over a real socket for tests of the metrics/HTTP
// port: sends the request bytes as given (so tests can send what browsers
// never would) and reads the reply until the server closes.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace npuperf::testing {

struct HttpAnswer {
  int status = 0;
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;

  std::string Header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// Sends `raw` to 127.0.0.1:port; status 0 when the connection failed.
inline HttpAnswer SendHttp(int port, const std::string& raw) {
  HttpAnswer out;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return out;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string got;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    size_t sent = 0;
    while (sent < raw.size()) {
      const ssize_t n = ::send(fd, raw.data() + sent, raw.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    char buf[8192];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) got.append(buf, n);
  }
  ::close(fd);
  const size_t head_end = got.find("\r\n\r\n");
  if (head_end == std::string::npos) return out;
  const std::string head = got.substr(0, head_end);
  out.body = got.substr(head_end + 4);
  size_t line_end = head.find("\r\n");
  const std::string status_line = head.substr(0, line_end);
  const size_t sp = status_line.find(' ');
  if (sp != std::string::npos) (void)absl::SimpleAtoi(status_line.substr(sp + 1, 3), &out.status);
  while (line_end != std::string::npos) {
    const size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    const std::string line =
        head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    out.headers.emplace(absl::AsciiStrToLower(line.substr(0, colon)),
                        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return out;
}

// A request line, Host and the extra header lines ("Name: value\r\n" each),
// and a body with its Content-Length when not empty.
inline std::string HttpRequestText(const std::string& method, const std::string& target, int port,
                                   const std::string& extra_headers = "",
                                   const std::string& body = "") {
  std::string r = absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: 127.0.0.1:", port,
                               "\r\nConnection: close\r\n", extra_headers);
  if (!body.empty() || method == "POST")
    absl::StrAppend(&r, "Content-Length: ", body.size(), "\r\n");
  return r + "\r\n" + body;
}

}  // namespace npuperf::testing
