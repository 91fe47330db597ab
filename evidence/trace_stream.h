#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// A streaming reader of Chrome trace files (msprof's msprof_<ts>.json
// timeline): the events of a top-level array or of the `traceEvents` array of
// a top-level object, one at a time, through a fixed-size buffer. Memory does
// not grow with the file (only with the longest single string). The JSON is
// validated as it is read (a malformed file is an InvalidArgument naming the
// byte offset); numbers are kept as their text, never converted to binary
// floats. Not thread-safe; one reader per file.
namespace npuperf::evidence {

// One trace event. Only the fields the timeline rules read are kept: their
// scalar values as text (a JSON string decoded, a number or literal as
// written); an object or array value leaves the field absent. `args` holds the
// scalar members of the `args` object (at most kMaxArgs, file order).
struct TraceEvent {
  static constexpr size_t kMaxArgs = 32;
  std::string name, ph, ts, dur, pid, tid;
  bool has_name = false, has_ph = false, has_ts = false, has_dur = false;
  bool has_pid = false, has_tid = false;
  // args[0, arg_count) are valid; entries beyond are reused buffers.
  std::vector<std::pair<std::string, std::string>> args;
  size_t arg_count = 0;
  // Byte offset of the event's '{' in the file.
  uint64_t offset = 0;
  // Ordinal among the array's entries (0-based).
  uint64_t index = 0;

  // The value of args[key], or nullptr.
  const std::string* Arg(std::string_view key) const;
};

// What a full read saw besides the events.
struct TraceReadStats {
  uint64_t bytes = 0;
  uint64_t events = 0;
  // Array entries that were not objects (skipped).
  uint64_t non_object_entries = 0;
  // The top-level array ended at end of file without ']' (Chrome's JSON Array
  // Format allows it).
  bool unterminated_array = false;
};

class TraceStream {
 public:
  // Default: 1 MiB.
  static constexpr size_t kDefaultBufferBytes = 1 << 20;
  // Nesting deeper than this is rejected (InvalidArgument).
  static constexpr int kMaxDepth = 256;
  // A single string longer than this is rejected (InvalidArgument).
  static constexpr size_t kMaxStringBytes = 16 << 20;

  // NotFound / PermissionDenied style errors name the file.
  static absl::StatusOr<std::unique_ptr<TraceStream>> Open(
      const std::filesystem::path& path, size_t buffer_bytes = kDefaultBufferBytes);
  ~TraceStream();
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;

  // Reads the whole file, calling `on_event` for each event object in order
  // (the reference stays valid only during the call). Stops at the first
  // non-OK status of `on_event` and returns it. May be called once.
  absl::StatusOr<TraceReadStats> ForEach(
      const std::function<absl::Status(const TraceEvent&)>& on_event);

 private:
  TraceStream(std::FILE* f, std::filesystem::path path, size_t buffer_bytes);
  bool Refill();
  int Peek();
  int Take();  // Peek, then past it unless at end of file
  void SkipWs();
  absl::Status Error(std::string_view what) const;
  absl::Status Expect(char c);
  absl::Status ReadString(std::string* out);
  absl::Status ReadEscape(std::string* out);
  absl::Status ReadScalar(std::string* out);
  absl::Status SkipValue(int depth);
  absl::Status SkipContainer(int depth, char close);
  absl::Status ReadEvent();
  absl::Status ReadEventField(const std::string& key);
  absl::Status ReadArgs();
  absl::Status ReadEventArray(bool top_level);
  absl::Status ReadTop();

  std::FILE* file_;
  std::filesystem::path path_;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t consumed_ = 0;  // bytes before buf_[0]
  bool eof_ = false;
  std::string key_;
  TraceEvent event_;
  TraceReadStats stats_;
  const std::function<absl::Status(const TraceEvent&)>* on_event_ = nullptr;
};

}  // namespace npuperf::evidence
