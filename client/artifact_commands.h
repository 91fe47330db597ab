#pragma once
// `npuperf artifacts ROUND` and `npuperf fetch ROUND DIR` (issue 19): the raw
// msprof output the server keeps for a round (keep_raw_output), listed and
// downloaded, so that `npuperf summarize` can be rerun offline on exactly
// what was measured. docs/api.md, "Artifacts".
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>

#include "CLI/CLI.hpp"
#include "client/cli.h"
#include "client/commands.h"

namespace npuperf::client {

// The largest total fetch unpacks per artifact by default
// (--max-unpacked-mib): 16 GiB.
inline constexpr int64_t kDefaultMaxUnpackedMib = 16 << 10;

struct FetchArgs {
  int64_t round_id = 0;
  std::filesystem::path dir;  // created; must not exist or be empty
  // Only the artifact with this sha256 (empty: every artifact of the round).
  std::string sha256;
  int64_t max_unpacked_mib = kDefaultMaxUnpackedMib;
};

// Lists the round's artifacts: name, sha256, size, created (text), or the
// round's artifacts as JSON ({"artifacts": [...]}).
int RunArtifacts(Session& s, int64_t round_id, std::ostream& out, std::ostream& err);

// Downloads each artifact of the round (DownloadArtifact, streamed to an
// unlinked file in DIR, never whole in memory), checks its size and sha256
// (DATA_LOSS otherwise, nothing unpacked) and unpacks it safely into
// DIR/<name without .tar.gz> (UnpackRawArchiveFd: no absolute paths, "..",
// links or devices; at most max_unpacked_mib). Prints each directory
// written. kExitNotFound when the round has no artifact (or not that one).
int RunFetch(Session& s, const FetchArgs& args, std::ostream& out, std::ostream& err);

// artifacts, fetch.
void AddArtifactCommands(CLI::App& app, ServerCommand& chosen);

}  // namespace npuperf::client
