// libFuzzer target: PERFORMANCE_CASES.json, GOLDEN_PERF_REPORT.json (without
// touching the filesystem), GOLDEN_PERF_REPORT.md and the canonical
// shape/dtype parsers on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "evidence/cases.h"
#include "evidence/golden.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)npuperf::evidence::ParseCaseManifest(text, {});
  (void)npuperf::evidence::ParseGoldenContract(text, /*verify_files=*/false);
  (void)npuperf::evidence::ParseGoldenMarkdown(text);
  if (size < 512) {
    (void)npuperf::evidence::CanonicalizeShape(text);
    (void)npuperf::evidence::CanonicalizeDtype(text);
    (void)npuperf::evidence::CaseDirName(text);
  }
  return 0;
}
