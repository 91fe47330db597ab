#pragma once

#include <string>
#include <string_view>

namespace npuperf {

// Incremental SHA-256 (OpenSSL EVP), lowercase hex output. Not thread-safe.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void Update(std::string_view data);
  // The hex digest; the object must not be updated afterwards.
  std::string HexDigest();

 private:
  void* ctx_;  // EVP_MD_CTX*
};

// One-shot helper.
std::string Sha256Hex(std::string_view data);

// True for 64 lowercase hex digits.
bool IsSha256Hex(std::string_view text);

}  // namespace npuperf
