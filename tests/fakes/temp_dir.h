#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace npuperf::testing {

// A fresh temp directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    // Named after the test for whoever reads /tmp, unique per instance
    // (mkdtemp): a test may hold several, and a second one must never
    // remove the first one's files.
    std::string name = (std::filesystem::temp_directory_path() /
                        (std::string("npuperf_") + info->test_suite_name() + "_" + info->name() +
                         "_" + std::to_string(::getpid()) + "_XXXXXX"))
                           .string();
    if (::mkdtemp(name.data()) == nullptr) std::abort();
    path_ = name;
    // 0755 as before mkdtemp (0700): tests that run children as other users
    // (run-as, the per-device pool) need to reach their directories below.
    std::filesystem::permissions(
        path_, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                   std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                   std::filesystem::perms::others_exec);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace npuperf::testing
