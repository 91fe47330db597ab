#include "agent/channel_tls.h"

#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "agent/host_setup.h"

namespace npuperf::agent {
namespace {

// The PEM text of path, which must hold `marker` ("-----BEGIN" at least).
absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path,
                                    const std::string& marker) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": cannot open"));
  std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (pem.find("-----BEGIN") == std::string::npos || pem.find(marker) == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": not a PEM file holding a ", marker));
  }
  return pem;
}

}  // namespace

absl::StatusOr<ChannelTls> LoadChannelTls(const ChannelTlsFiles& files, uid_t owner) {
  ChannelTls tls;
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(files.cert.empty() ? "--tls-key needs --tls-cert"
                                                         : "--tls-cert needs --tls-key");
  }
  if (!files.cert.empty() && files.ca.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert needs --tls-ca: a client certificate is only presented over TLS");
  }
  if (!files.ca.empty()) {
    auto ca = ReadPem("--tls-ca", files.ca, "CERTIFICATE");
    if (!ca.ok()) return ca.status();
    tls.root_pem = *std::move(ca);
  }
  if (files.cert.empty()) return tls;
  auto cert = ReadPem("--tls-cert", files.cert, "CERTIFICATE");
  if (!cert.ok()) return cert.status();
  if (auto s = CheckPrivateFile("--tls-key", files.key, owner); !s.ok()) return s;
  auto key = ReadPem("--tls-key", files.key, "PRIVATE KEY");
  if (!key.ok()) return key.status();
  tls.cert_pem = *std::move(cert);
  tls.key_pem = *std::move(key);
  return tls;
}

}  // namespace npuperf::agent
