#pragma once

#include <cstddef>
#include <functional>

namespace npuperf::client {

// Calls fn(i) once for every i in [0, n), on up to `threads` threads (the
// calling thread among them; 0 counts as 1), each thread taking the next i
// until none is left; returns when every call has returned. fn must be safe
// to call from several threads at once, and its calls may finish in any
// order. For the CLI's independent pieces of one command (bundles of a
// submit, batches of a collection's JSON), so that they use the machine's
// cores instead of one.
void RunParallel(size_t n, size_t threads, const std::function<void(size_t)>& fn);

}  // namespace npuperf::client
