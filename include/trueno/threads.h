// The library's one threading mechanism: a persistent pool (see docs/THREADS.md for why not OpenMP).
#pragma once
#include <cstddef>
#include <functional>

namespace trueno {

// Threads used by multithreaded kernels: TRUENO_THREADS if set (>= 1), else the number of physical cores.
int num_threads();
// Overrides the thread count for later calls (>= 1); the pool grows or shrinks lazily.
void set_num_threads(int n);
// Physical cores (distinct core ids per package from sysfs), falling back to hardware_concurrency().
int physical_cores();

// Runs fn(task) for task in [0, n_tasks) on up to num_threads() threads, the caller included, and
// returns when all are done. Tasks are handed out statically (task i -> thread i % T) so a result
// never depends on scheduling. Nested calls run serially in the calling thread.
void parallel_for(std::size_t n_tasks, const std::function<void(std::size_t task)>& fn);

}  // namespace trueno
