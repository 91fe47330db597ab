#include "server/core/request_rules.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "server/core/limits.h"

namespace npuperf::server {
namespace {

// Digits only: SimpleAtoi also takes signs and surrounding spaces.
bool AllDigits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

absl::StatusOr<int64_t> ParseIdToken(const std::string& token, const std::string& field) {
  if (token.empty()) return 0;
  int64_t id = 0;
  if (token.size() > 19 || !AllDigits(token) || !absl::SimpleAtoi(token, &id) || id <= 0) {
    return InvalidArgumentWithFields(
        {{field, "malformed page token; pass the one a response gave"}});
  }
  return id;
}

std::string CollectionToken(int64_t created_ms, const std::string& id) {
  return absl::StrCat(created_ms, ":", id);
}

absl::StatusOr<CollectionCursor> ParseCollectionToken(const std::string& token,
                                                      const std::string& field) {
  CollectionCursor cursor;
  const size_t sep = token.find(':');
  const std::string ms = token.substr(0, sep);
  if (sep == std::string::npos || ms.size() > 19 || !AllDigits(ms) ||
      !absl::SimpleAtoi(ms, &cursor.created_ms) || cursor.created_ms <= 0) {
    return InvalidArgumentWithFields(
        {{field, "malformed page token; pass the one a response gave"}});
  }
  cursor.id = token.substr(sep + 1);
  if (cursor.id.empty() || cursor.id.size() > kMaxCollectionIdBytes) {
    return InvalidArgumentWithFields(
        {{field, "malformed page token; pass the one a response gave"}});
  }
  return cursor;
}

bool KeepJobsPage(v1::Collection* c, int32_t max_jobs) {
  const int before = c->jobs_size();
  KeepFirst(c->mutable_jobs(), max_jobs);
  KeepFirst(c->mutable_jobs(), FitInBytes(c->jobs(), kMaxPageBytes));
  return c->jobs_size() < before;
}

void CheckTimestamp(const google::protobuf::Timestamp& t, const std::string& field,
                    std::vector<FieldViolation>& out) {
  using google::protobuf::util::TimeUtil;
  if (t.seconds() < TimeUtil::kTimestampMinSeconds ||
      t.seconds() > TimeUtil::kTimestampMaxSeconds || t.nanos() < 0 || t.nanos() > 999'999'999) {
    out.push_back({field, "must be a time between years 1 and 9999"});
  }
}

void CheckLabelFilter(const google::protobuf::Map<std::string, std::string>& labels,
                      const std::string& field, std::vector<FieldViolation>& out) {
  if (labels.size() > static_cast<size_t>(kMaxLabels)) {
    out.push_back({field, absl::StrCat("at most ", kMaxLabels, " labels")});
    return;
  }
  for (const auto& [key, value] : labels) {
    if (key.empty() || key.size() > kMaxLabelKeyBytes || value.size() > kMaxLabelValueBytes) {
      out.push_back({field, absl::StrCat("keys 1..", kMaxLabelKeyBytes, " bytes, values up to ",
                                         kMaxLabelValueBytes)});
      return;
    }
  }
}

void CheckLength(const std::string& value, size_t max, const std::string& field,
                 std::vector<FieldViolation>& out) {
  if (value.size() > max) out.push_back({field, absl::StrCat("at most ", max, " bytes")});
}

}  // namespace npuperf::server
