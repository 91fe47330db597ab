#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace npuperf {

// Capped exponential backoff with equal jitter (the AWS architecture blog's
// "Exponential Backoff And Jitter" names it so): with c = min(max, initial *
// 2^n), the n-th delay is uniform in [c/2, c], so a retry never comes sooner
// than half the step (full jitter would draw from [0, c]).
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
