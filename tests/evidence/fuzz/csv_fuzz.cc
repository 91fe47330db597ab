// libFuzzer target: the streaming CSV reader on arbitrary bytes. Every cell
// is also pushed through the number parser. Must never crash or hang.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "evidence/csv_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the read-block size (2..257) so records cross
  // block boundaries and make the block grow.
  size_t block = 2 + data[0];
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto reader = npuperf::evidence::CsvReader::FromStreamForTest(
      std::make_unique<std::istringstream>(std::move(bytes)), "fuzz.csv", block);
  if (!reader.ok()) return 0;
  int cols = static_cast<int>((*reader)->header().size());
  for (int rows = 0; rows < 100000; ++rows) {
    absl::StatusOr<bool> more = (*reader)->Next();
    if (!more.ok() || !*more) break;
    for (int c = 0; c < cols; ++c) (void)(*reader)->Number(c);
  }
  return 0;
}
