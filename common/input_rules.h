#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"

namespace npuperf {

// Rules on untrusted names and paths that the server (at submission) and the
// agent (before it uses them) both apply, so that the two always agree. Each
// answers "" when the value is acceptable, else why not (a description for
// a google.rpc.BadRequest field violation that never quotes the value).
// Pure; thread-safe.

// The longest bundle path (runner, manifest_path) and case_env name; part of
// the server's limits table (server/core/limits.h, docs/api.md).
inline constexpr size_t kMaxBundlePathBytes = 256;
inline constexpr size_t kMaxCaseEnvBytes = 64;
// SubmitTimelineRequest.tile_dag_attestation, the JSON file's text: the
// server's limit, and what `npuperf timeline` reads of the file.
inline constexpr size_t kMaxTileDagAttestationBytes = 64 << 10;

// A discovery report (npuperf.v1.DiscoveryResult): the agent keeps at most
// this much, the server refuses more (server/core/discovery_validator.h).
// Candidates, launches shown per candidate, notes; the text limits (bytes)
// of an op name, task type, op type, incidental reason, source and note.
inline constexpr int kMaxDiscoveryCandidates = 64;
inline constexpr int kMaxDiscoveryLaunches = 8;
inline constexpr int kMaxDiscoveryNotes = 16;
inline constexpr size_t kMaxDiscoveryOpNameBytes = 1024;
inline constexpr size_t kMaxDiscoveryTaskTypeBytes = 64;
inline constexpr size_t kMaxDiscoveryOpTypeBytes = 256;
inline constexpr size_t kMaxDiscoveryReasonBytes = 256;
inline constexpr size_t kMaxDiscoveryTextBytes = 1024;

// Prefixes and exact names a case_env selector may not name: the device
// mask (ASCEND_RT_VISIBLE_DEVICES, TILE_FWK_DEVICE_ID), the loader, the
// interpreter, and the variables npuperf, the profiler and the runner
// protocol set themselves.
inline constexpr const char* kReservedEnvPrefixes[] = {"ASCEND_",     "LD_",      "PYTHON",
                                                       "PYPTO_PERF_", "NPUPERF_", "MSPROF_"};
inline constexpr const char* kReservedEnvNames[] = {"PATH", "TILE_FWK_DEVICE_ID"};

// A case_env name: [A-Z_][A-Z0-9_]*, 1..max_bytes, neither a reserved name
// nor under a reserved prefix.
std::string EnvNameProblem(absl::string_view name, size_t max_bytes);

// A path inside an operator bundle (runner, manifest_path): 1..max_bytes,
// relative, '/'-separated, normalised (no empty, "." or ".." component, no
// trailing '/'), without backslash, NUL or other control characters.
std::string BundlePathProblem(absl::string_view path, size_t max_bytes);

// Printable text: no byte below 0x20 and no DEL (tabs and newlines
// included: these fields are one line). UTF-8 beyond ASCII is allowed.
bool IsPrintableLine(absl::string_view text);

// Free text (descriptions, reasons, warnings): no NUL and no control byte
// other than tab, newline and carriage return.
bool IsCleanText(absl::string_view text);

// The length (2..4) of the valid multi-byte UTF-8 sequence at text[i], with
// its code point in *code_point; 0 when there is none (an ASCII or stray
// continuation byte, a cut sequence, an overlong form, a surrogate, a code
// point past U+10FFFF). The one UTF-8 decoder of common/ and client/ (report/
// keeps its own: it includes nothing of common/).
size_t Utf8SequenceLength(std::string_view text, size_t i, uint32_t* code_point);

// Well-formed UTF-8: no overlong form, surrogate or code point past U+10FFFF.
bool IsValidUtf8(absl::string_view text);

// A note a person writes (a triage note, a device release note): at most
// max_bytes, valid UTF-8, no control character other than tab and newline.
// The problem as a field-violation description, or "".
std::string NoteProblem(absl::string_view note, size_t max_bytes);

// Text an agent reports about someone else's program (failure reasons,
// progress details: stderr tails may carry escapes): control bytes other than
// tab and newline become '?', and the text is cut at max_bytes (on a UTF-8
// character boundary). Stored this way rather than refused, so a job never
// hangs on an unreportable failure.
std::string CleanReportedText(absl::string_view text, size_t max_bytes);

}  // namespace npuperf
