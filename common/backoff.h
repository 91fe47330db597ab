#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace npuperf {

// Capped exponential backoff with full jitter ("AWS architecture blog" style):
// the n-th delay is uniform in [initial * 2^n / 2, min(max, initial * 2^n)].
// Not thread-safe; one instance per retry loop.
class Backoff {
 public:
  // REQUIRES: 0 < initial <= max.
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, uint64_t seed);

  // The delay to wait before the next try; grows until max.
  std::chrono::milliseconds Next();
  // Back to the initial delay (after a success).
  void Reset() { attempt_ = 0; }
  int attempt() const { return attempt_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds max_;
  int attempt_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace npuperf
