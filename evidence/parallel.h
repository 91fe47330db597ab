// Runs independent per-file work of one evidence build on a few threads.
//
// Why: a PROF group holds seven metric runs whose op_summary CSVs are read and
// selected independently, and a round archives dozens of CSVs; at 200,000 rows
// a run's read and its copy are each tens of milliseconds, so doing them one
// after the other leaves the machine's other cores idle. The work items share
// nothing, and the caller merges their results in item order, so the evidence
// (warnings and notes included) is the same whatever the thread count.
#ifndef NPUPERF_EVIDENCE_PARALLEL_H_
#define NPUPERF_EVIDENCE_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace npuperf::evidence {

// Calls fn(i) once for every i in [0, n) on up to `threads` threads (the
// calling thread is one of them) and returns when all calls have returned.
// threads <= 1 or n <= 1 runs everything on the calling thread, in order;
// when the system refuses a thread, the threads already running do it all.
// fn must not throw and must not touch state another index touches.
void ForEachIndex(size_t n, int threads, const std::function<void(size_t)>& fn);

// Threads for file work: the hardware's concurrency, at most 4 (reads and
// copies of page-cached CSVs stop scaling past the memory bandwidth of a few
// cores), at least 1.
int DefaultFileThreads();

// `requested` when it is positive, else DefaultFileThreads().
int FileThreads(int requested);

}  // namespace npuperf::evidence

#endif  // NPUPERF_EVIDENCE_PARALLEL_H_
