#include "common/backoff.h"

#include <algorithm>

namespace npuperf {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, uint64_t seed)
    : initial_(initial), max_(max), rng_(seed) {}

std::chrono::milliseconds Backoff::Next() {
  const int shift = std::min(attempt_, 30);
  const int64_t ceiling = std::min<int64_t>(max_.count(), initial_.count() * (int64_t{1} << shift));
  ++attempt_;
  std::uniform_int_distribution<int64_t> dist(std::max<int64_t>(1, ceiling / 2), ceiling);
  return std::chrono::milliseconds(dist(rng_));
}

}  // namespace npuperf
