#include "evidence/parallel.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace npuperf::evidence {

void ForEachIndex(size_t n, int threads, const std::function<void(size_t)>& fn) {
  size_t workers = std::min(n, static_cast<size_t>(std::max(threads, 1)));
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto drain = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (size_t w = 1; w < workers; ++w) {
    try {
      pool.emplace_back(drain);
    } catch (const std::system_error&) {
      break;  // no thread to spare (RLIMIT_NPROC on a shared host): fewer do it all
    }
  }
  drain();
  for (std::thread& t : pool) t.join();
}

int DefaultFileThreads() {
  unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw, 1u, 4u));
}

int FileThreads(int requested) { return requested > 0 ? requested : DefaultFileThreads(); }

}  // namespace npuperf::evidence
