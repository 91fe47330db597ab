#include "client/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace npuperf::client {

void RunParallel(size_t n, size_t threads, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < std::min(n, threads); ++t) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
}

}  // namespace npuperf::client
