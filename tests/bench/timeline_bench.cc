// timeline_bench: the streaming timeline reader (evidence/timeline.h) on a
// generated Chrome trace of a given size, with its wall time, throughput and
// peak RSS (ru_maxrss), for tests/bench/timeline_bench.sh, which compares it
// with Python's json module reading the same file.
//   timeline_bench --generate FILE --bytes N   write a trace of >= N bytes
//   timeline_bench FILE [--op-name NAME]        summarize it and print figures
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/clock.h"
#include "evidence/timeline.h"

namespace {

constexpr const char* kTarget = "MatMulV3_0";
constexpr int kLanes = 16;

// Lane l runs tiles back to back: MTE2 load, then compute overlapping the next
// load (a pipelined kernel), MTE3 store, a scalar and a wait event.
int Generate(const char* path, long long bytes) {
  std::FILE* f = std::fopen(path, "wb");
  if (f == nullptr) return std::perror(path), 1;
  const long long base_ns = 1780000000000000000LL;  // 1.78e18 ns: beyond 2^53
  std::fprintf(f, "[\n");
  for (int l = 0; l < kLanes; ++l) {
    std::fprintf(f,
                 "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2000,\"tid\":%d,\"args\":{"
                 "\"name\":\"Group%d-aiv%d\"}},\n",
                 l, l / 2, l % 2);
  }
  const long long tiles_per_lane = bytes / (kLanes * 5LL * 150) + 1;
  const long long window_ns = tiles_per_lane * 1000 + 1000;
  std::fprintf(f,
               "{\"name\":\"%s\",\"ph\":\"X\",\"pid\":1000,\"tid\":48,\"ts\":\"%lld.%03lld\","
               "\"dur\":\"%lld.%03lld\",\"args\":{\"Task Type\":\"AI_CORE\"}}",
               kTarget, base_ns / 1000, base_ns % 1000, window_ns / 1000, window_ns % 1000);
  static const char* kNames[] = {"MTE2", "VEC", "MTE3", "SCALAR", "WAIT_FLAG"};
  static const long long kOffset[] = {0, 400, 900, 950, 980}, kDur[] = {600, 500, 80, 20, 15};
  for (long long t = 0; t < tiles_per_lane; ++t) {
    for (int l = 0; l < kLanes; ++l) {
      for (int k = 0; k < 5; ++k) {
        const long long ts = base_ns + t * 1000 + kOffset[k];
        std::fprintf(f,
                     ",\n{\"name\":\"%s\",\"pid\":2000,\"tid\":%d,\"ts\":\"%lld.%03lld\","
                     "\"dur\":\"0.%03lld\",\"ph\":\"X\",\"args\":{\"Core Type\":\"AIV\","
                     "\"Block Id\":\"%d\",\"Checkpoint Info\":\"%lld\"}}",
                     kNames[k], l, ts / 1000, ts % 1000, kDur[k], l, t);
      }
    }
  }
  std::fprintf(f, "\n]\n");
  return std::fclose(f) == 0 ? 0 : 1;
}

int Parse(const char* path, const std::string& op_name) {
  npuperf::evidence::TimelineOptions o;
  o.op_name = op_name;
  npuperf::RealClock clock;  // the one clock a bench may read
  const auto start = clock.MonotonicNow();
  auto t = npuperf::evidence::SummarizeTimeline(path, o);
  const double s = std::chrono::duration<double>(clock.MonotonicNow() - start).count();
  if (!t.ok()) {
    std::fprintf(stderr, "%s\n", std::string(t.status().message()).c_str());
    return 1;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "timeline_bench: %.1f MB, %llu events in %.2f s (%.0f MB/s; CPU %.2f s), peak RSS %.1f MB, "
      "%d pass(es), %s, overlap %s us, %lld raw pairs\n",
      static_cast<double>(t->trace_bytes) / 1e6, static_cast<unsigned long long>(t->trace_events),
      s, static_cast<double>(t->trace_bytes) / 1e6 / s,
      static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
          static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
      static_cast<double>(ru.ru_maxrss) / 1024.0, t->passes, t->attribution_status.c_str(),
      npuperf::evidence::FormatNanosAsMicros(t->overlap_ns).c_str(),
      static_cast<long long>(t->raw_event_pairs));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "--generate") == 0 &&
      std::strcmp(argv[3], "--bytes") == 0) {
    return Generate(argv[2], std::atoll(argv[4]));
  }
  if (argc == 2) return Parse(argv[1], kTarget);
  if (argc == 4 && std::strcmp(argv[2], "--op-name") == 0) return Parse(argv[1], argv[3]);
  std::fprintf(stderr,
               "usage: timeline_bench --generate FILE --bytes N | timeline_bench FILE "
               "[--op-name NAME]\n");
  return 2;
}
