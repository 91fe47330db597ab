#include "common/version.h"

#include "absl/strings/str_cat.h"

#ifndef NPUPERF_VERSION
#error "NPUPERF_VERSION is set by common/CMakeLists.txt"
#endif

namespace npuperf {
namespace internal {
extern const char kCommit[];  // defined in the build's generated version_commit.cc
}  // namespace internal

absl::string_view Version() { return NPUPERF_VERSION; }

absl::string_view Commit() { return internal::kCommit; }

std::string VersionLine(absl::string_view program) {
  return absl::StrCat(program, " ", Version(), " (commit ", Commit(), ")");
}

}  // namespace npuperf
