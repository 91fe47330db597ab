#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "evidence/labels.h"
#include "gtest/gtest.h"

namespace npuperf::evidence::testing {

// A fresh directory removed at scope end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "npuperf_ev_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Writes `bytes` exactly (no newline translation), creating parent dirs.
inline void WriteFile(const std::filesystem::path& p, std::string_view bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << p;
}

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline std::filesystem::path TestData(std::string_view rel) {
  return std::filesystem::path(NPUPERF_EVIDENCE_TESTDATA) / rel;
}

// The edge names of label enums (labels.h), so assertions read like the JSON.
template <typename E>
std::vector<std::string> Names(const std::vector<E>& values) {
  std::vector<std::string> out;
  for (E v : values) out.push_back(NameOf(v));
  return out;
}

}  // namespace npuperf::evidence::testing
