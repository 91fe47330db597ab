#include "common/device_range.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace npuperf {
namespace {

constexpr int kMaxDeviceId = 1023;

absl::StatusOr<int> ParseId(absl::string_view text, absl::string_view item) {
  int value = -1;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0 || value > kMaxDeviceId) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad device id '", text, "' in '", item, "' (want 0..", kMaxDeviceId, ")"));
  }
  return value;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseDeviceRange(absl::string_view text) {
  std::set<int> ids;
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError("empty device list");
  }
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::vector<absl::string_view> ends = absl::StrSplit(item, absl::MaxSplits('-', 1));
    auto first = ParseId(ends[0], item);
    if (!first.ok()) return first.status();
    int last = *first;
    if (ends.size() == 2) {
      auto parsed = ParseId(ends[1], item);
      if (!parsed.ok()) return parsed.status();
      last = *parsed;
      if (last < *first) {
        return absl::InvalidArgumentError(absl::StrCat("reversed device range '", item, "'"));
      }
    }
    for (int id = *first; id <= last; ++id) ids.insert(id);
  }
  return std::vector<int>(ids.begin(), ids.end());
}

std::string FormatDeviceRange(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) absl::StrAppend(&out, "-", ids[j]);
    i = j + 1;
  }
  return out;
}

absl::StatusOr<std::map<int, std::string>> ParseDeviceMap(absl::string_view text) {
  std::map<int, std::string> out;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    if (kv.size() != 2 || absl::StripAsciiWhitespace(kv[1]).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad device map item '", item, "' (want RANGE=VALUE)"));
    }
    auto ids = ParseDeviceRange(kv[0]);
    if (!ids.ok()) return ids.status();
    for (int id : *ids) {
      if (!out.emplace(id, std::string(absl::StripAsciiWhitespace(kv[1]))).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("device ", id, " named twice in '", text, "'"));
      }
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("empty device map");
  return out;
}

}  // namespace npuperf
