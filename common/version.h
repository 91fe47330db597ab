#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace npuperf {

// The release this binary was built from: CMake's project version, e.g. "0.1.0".
absl::string_view Version();

// The source commit, `git describe --always --dirty` at build time (e.g.
// "358cc9e1a2b3" or "358cc9e1a2b3-dirty"); "unknown" when built outside git.
absl::string_view Commit();

// One line for `--version`: "<program> <version> (commit <commit>)".
std::string VersionLine(absl::string_view program);

}  // namespace npuperf
