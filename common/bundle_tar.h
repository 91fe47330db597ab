#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace npuperf {

// Operator bundles: an operator directory packed as a POSIX ustar/pax tar
// (libarchive). Packing is deterministic (sorted entries, zero mtimes, no
// owners), so the same directory always has the same sha256.

// Makes libarchive read and write UTF-8 path names (a bundle holding 说明.md):
// LC_CTYPE from the environment when that is a UTF-8 locale, else C.UTF-8. Only
// LC_CTYPE changes: numbers keep the "C" locale's formatting and parsing. Call
// once at the start of every binary that packs or unpacks bundles (client,
// server, agent), before it starts threads. Returns the LC_CTYPE now in use
// ("C" when no UTF-8 locale exists on the host: then only ASCII names work).
std::string UseUtf8PathNames();

// Packs regular files and directories under dir (symlinks, sockets and
// devices are refused; .git, __pycache__, .msprof and docs/perf are skipped:
// they are outputs, not inputs). Fails past max_bytes.
absl::StatusOr<std::string> PackBundle(const std::filesystem::path& dir, int64_t max_bytes);

// Packs regular files held in memory (relative path without "..", content)
// at the top level of the bundle, as PackBundle packs a directory: sorted,
// zero mtimes, mode 0644, no owners. The server's built-in canary operator
// is packed so: the same bytes, so the same sha256, on every replica.
absl::StatusOr<std::string> PackBundleFiles(std::vector<std::pair<std::string, std::string>> files);

// Checks a tar without extracting: only regular files and directories,
// relative paths without "..", total size under max_bytes.
absl::Status VerifyBundle(const std::string& tar, int64_t max_bytes);

// VerifyBundle of the tar in the file open as fd (read from its start; the
// offset moves).
absl::Status VerifyBundleFd(int fd, int64_t max_bytes);

// The content of the regular file at `path` (a bundle path such as a
// manifest_path, common/input_rules.h) in the tar, after VerifyBundle's checks
// with max_bytes; NOT_FOUND when the tar holds no such file,
// RESOURCE_EXHAUSTED when it is larger than max_file_bytes. Messages never
// quote the path.
absl::StatusOr<std::string> BundleFileContent(const std::string& tar, const std::string& path,
                                              int64_t max_bytes, int64_t max_file_bytes);

// Extracts into dest (created if missing), after the same checks; never
// writes outside dest.
absl::Status UnpackBundle(const std::string& tar, const std::filesystem::path& dest,
                          int64_t max_bytes);

// Raw output archives (artifacts, issue 19): a directory tree packed as a
// gzip-compressed pax tar, streamed file by file (never whole in memory).

// Packs the regular files and directories under dir into a new file at out
// (mode 0600), sorted, zero mtimes, no owners; symlinks, sockets and devices
// are left out. Returns the number of entries written.
absl::StatusOr<int64_t> PackRawArchive(const std::filesystem::path& dir,
                                       const std::filesystem::path& out);

// Checks the gzip tar in the file open as fd without extracting (the same
// rules as UnpackRawArchiveFd: only regular files and directories, relative
// paths without "..", at most max_unpacked bytes). Reads from its start.
absl::Status VerifyRawArchiveFd(int fd, int64_t max_unpacked);

// Extracts the gzip tar in the file open as fd into dest, which must not
// exist or be an empty directory (FAILED_PRECONDITION otherwise): absolute
// paths, "..", links, devices and other special entries are refused
// (INVALID_ARGUMENT naming the entry), as is more than max_unpacked bytes in
// total (RESOURCE_EXHAUSTED); files are created without following links.
// Nothing is written outside dest.
absl::Status UnpackRawArchiveFd(int fd, const std::filesystem::path& dest, int64_t max_unpacked);

}  // namespace npuperf
