#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/status_util.h"
#include "google/protobuf/map.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "google/protobuf/timestamp.pb.h"
#include "npuperf/v1/collection.pb.h"

namespace npuperf::server {

// The checks read requests share (read_queries.h, comparison_queries.h):
// page tokens, page fitting, timestamps and label filters. A token a client
// sends back is untrusted: anything but what the server issued is
// INVALID_ARGUMENT naming the field (never an exception, never a partial
// parse). Pure; thread-safe.

// A timestamp a request gives: seconds in 0001-01-01..9999-12-31 and nanos
// in 0..999,999,999 (so converting it cannot overflow); else a violation.
void CheckTimestamp(const google::protobuf::Timestamp& t, const std::string& field,
                    std::vector<FieldViolation>& out);

// A label filter: at most kMaxLabels pairs, keys 1..kMaxLabelKeyBytes,
// values up to kMaxLabelValueBytes.
void CheckLabelFilter(const google::protobuf::Map<std::string, std::string>& labels,
                      const std::string& field, std::vector<FieldViolation>& out);

// A string field a request gives, over max bytes: a violation.
void CheckLength(const std::string& value, size_t max, const std::string& field,
                 std::vector<FieldViolation>& out);

// An id token ("<id>", decimal, 1..2^63-1): the last job of a GetCollection
// page, the last round of a ListRounds page. "" parses as 0 (from the start).
absl::StatusOr<int64_t> ParseIdToken(const std::string& token, const std::string& field);

// The ListCollections token "<created_ms>:<collection id>" of the last
// collection of a page.
struct CollectionCursor {
  int64_t created_ms = 0;
  std::string id;
};
std::string CollectionToken(int64_t created_ms, const std::string& id);
absl::StatusOr<CollectionCursor> ParseCollectionToken(const std::string& token,
                                                      const std::string& field);

// How many of items, from the first, fit in budget serialized bytes: at
// least one (a page always makes progress), then as many as stay under it.
template <typename T>
int FitInBytes(const google::protobuf::RepeatedPtrField<T>& items, size_t budget) {
  size_t used = 0;
  int n = 0;
  for (const T& item : items) {
    used += item.ByteSizeLong() + 8;  // field tag and length
    if (n > 0 && used > budget) break;
    ++n;
  }
  return n;
}

// Removes the items past the first n.
template <typename T>
void KeepFirst(google::protobuf::RepeatedPtrField<T>* items, int n) {
  if (items->size() > n) items->DeleteSubrange(n, items->size() - n);
}

// Keeps the first page of c's jobs (at most max_jobs, and under
// kMaxPageBytes); true when jobs were dropped. GetCollection pages this way,
// and SubmitCollection and CancelCollection answer with the first page.
bool KeepJobsPage(v1::Collection* c, int32_t max_jobs);

}  // namespace npuperf::server
