// The persistent thread pool behind trueno::parallel_for and every multithreaded kernel.
// Why a pool and not OpenMP: docs/THREADS.md.
#include "trueno/threads.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "core/strings.h"
#include "trueno/error.h"

namespace trueno {
namespace {

thread_local bool t_in_task = false;

// The CPUs this process may run on (sched_getaffinity; WebAssembly has no affinity: the engine's
// count, which is 1 without -pthread).
bool affinity_set(cpu_set_t* set) {
#if defined(__EMSCRIPTEN__)
  (void)set;
  return false;
#else
  return sched_getaffinity(0, sizeof(*set), set) == 0;
#endif
}

int affinity_cpus() {
  cpu_set_t set;
  if (affinity_set(&set)) return CPU_COUNT(&set);
  const unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}

int env_threads() {
  const char* s = std::getenv("TRUENO_THREADS");
  if (s == nullptr || *s == '\0') return 0;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (*end != '\0' || v < 1 || v > 4096)
    throw InvalidArgument(strcat("TRUENO_THREADS='", s, "': expected an integer from 1 to 4096"));
  return static_cast<int>(v);
}

inline void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

// Workers spin for a while after each region before sleeping on a condition variable: waking a
// sleeping thread costs ~100 us on a VM (measured), more than a whole 256^3 GEMM.
constexpr auto kSpin = std::chrono::microseconds(200);

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  void run(std::size_t n, detail::TaskFn fn, void* ctx, int threads) {
    const std::size_t t = std::min<std::size_t>(n, static_cast<std::size_t>(threads));
    if (t <= 1 || t_in_task) {
      const bool was = t_in_task;
      t_in_task = true;
      for (std::size_t i = 0; i < n; ++i) fn(ctx, i);
      t_in_task = was;
      return;
    }
    std::lock_guard<std::mutex> serial(run_mu_);  // one parallel region at a time
    grow(static_cast<int>(t) - 1);
    job_ = {n, fn, ctx, t};
    next_.store(0, std::memory_order_relaxed);
    // Every worker (also those beyond t, which run nothing) checks in, so job_ is never rewritten
    // while a worker may still read it.
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    {
      std::lock_guard<std::mutex> lock(mu_);
    }
    wake_.notify_all();
    t_in_task = true;
    run_tasks(n, fn, ctx);
    t_in_task = false;
    const auto start = std::chrono::steady_clock::now();
    for (unsigned spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      cpu_relax();
      if ((spins & 255) == 0 && std::chrono::steady_clock::now() - start > kSpin) {
        std::unique_lock<std::mutex> lock(mu_);
        done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
      }
    }
  }

 private:
  struct Job {
    std::size_t n = 0;
    detail::TaskFn fn = nullptr;
    void* ctx = nullptr;
    std::size_t threads = 0;
  };

  // A new worker starts from the current generation, so it waits for the next job instead of
  // taking the previous one (whose job_ the caller is about to overwrite: a race that qemu-aarch64
  // exposed as a lost task and a crash).
  void grow(int workers) {
    while (static_cast<int>(workers_.size()) < workers) {
      const std::size_t id = workers_.size() + 1;
      const std::uint64_t start = generation_.load(std::memory_order_acquire);
      workers_.emplace_back([this, id, start] { loop(id, start); });
    }
  }

  std::uint64_t await_generation(std::uint64_t seen) {
    const auto start = std::chrono::steady_clock::now();
    for (unsigned spins = 0;; ++spins) {
      const std::uint64_t g = generation_.load(std::memory_order_acquire);
      if (g != seen || stop_.load()) return g;
      cpu_relax();
      if ((spins & 255) == 0 && std::chrono::steady_clock::now() - start > kSpin) break;
    }
    std::unique_lock<std::mutex> lock(mu_);
    wake_.wait(lock, [&] { return stop_.load() || generation_.load(std::memory_order_acquire) != seen; });
    return generation_.load(std::memory_order_acquire);
  }

  void loop(std::size_t id, std::uint64_t seen) {
    t_in_task = true;
    for (;;) {
      seen = await_generation(seen);
      if (stop_.load()) return;
      const Job job = job_;
      if (id < job.threads) run_tasks(job.n, job.fn, job.ctx);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu_);
        done_.notify_one();
      }
    }
  }

  // Note [Dynamic task assignment]
  // Threads take the next task index from a shared counter instead of a fixed stride: on a VM a core
  // that is slow for a moment no longer holds everyone up. Memory-bound quant matvec on the 16-core
  // Xeon went from 50-55 to 59-70 GB/s, 7B decode from 15.3 to 16.7 tok/s (docs/THREADS.md). Which
  // thread runs a task never changes a result: tasks write disjoint outputs.
  void run_tasks(std::size_t n, detail::TaskFn fn, void* ctx) {
    for (std::size_t i = next_.fetch_add(1, std::memory_order_relaxed); i < n; i = next_.fetch_add(1, std::memory_order_relaxed))
      fn(ctx, i);
  }
  std::atomic<std::size_t> next_{0};
  std::mutex run_mu_, mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  Job job_;
  std::atomic<int> pending_{0};
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
};

Pool& pool() {
  static Pool p;
  return p;
}

std::atomic<int> g_threads{0};

}  // namespace

int physical_cores() {
#if defined(__EMSCRIPTEN__)
  // WebAssembly: the engine's count (1 without -pthread), at most the worker pool made at start-up
  // (TRUENO_WASM_MAX_THREADS, cmake/TruenoWasm.cmake): a thread beyond it would start only after the
  // caller returned to the event loop, which a parallel_for waiting for it never does.
  static const int wasm_cores = std::min(affinity_cpus(), TRUENO_WASM_MAX_THREADS);
  return wasm_cores;
#else
  static const int cores = [] {
    std::set<std::pair<std::string, std::string>> ids;
    cpu_set_t set;
    const bool have_set = affinity_set(&set);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (have_set && !CPU_ISSET(cpu, &set)) continue;
      const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      std::ifstream pkg(base + "physical_package_id"), core(base + "core_id");
      std::string p, c;
      if (!(pkg >> p) || !(core >> c)) continue;
      ids.emplace(p, c);
    }
    const int n = static_cast<int>(ids.size());
    const int cpus = affinity_cpus();
    return n > 0 && n <= cpus ? n : cpus;
  }();
  return cores;
#endif
}

int num_threads() {
  const int n = g_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
  static const int initial = [] {
    const int env = env_threads();
    return env > 0 ? env : physical_cores();
  }();
  return initial;
}

void set_num_threads(int n) {
  if (n < 1) throw InvalidArgument(strcat("set_num_threads(", n, "): the thread count must be >= 1"));
  g_threads.store(n, std::memory_order_relaxed);
}

void parallel_for(std::size_t n_tasks, const std::function<void(std::size_t)>& fn) {
  struct Ctx {
    const std::function<void(std::size_t)>* fn;
    std::mutex mu;
    std::exception_ptr error;
  } ctx{&fn, {}, nullptr};
  detail::parallel_run(
      n_tasks,
      [](void* p, std::size_t task) {
        auto* c = static_cast<Ctx*>(p);
        try {
          (*c->fn)(task);
        } catch (...) {
          std::lock_guard<std::mutex> lock(c->mu);
          if (!c->error) c->error = std::current_exception();
        }
      },
      &ctx);
  if (ctx.error) std::rethrow_exception(ctx.error);
}

namespace detail {

void parallel_run(std::size_t n_tasks, TaskFn fn, void* ctx) {
  if (n_tasks == 0) return;
  pool().run(n_tasks, fn, ctx, num_threads());
}

int pool_threads() { return num_threads(); }

float* thread_scratch(ScratchSlot slot, std::size_t floats) {
  struct Buffers {
    float* p[static_cast<int>(ScratchSlot::kCount)] = {};
    std::size_t cap[static_cast<int>(ScratchSlot::kCount)] = {};
    ~Buffers() {
      for (float* b : p) std::free(b);
    }
  };
  thread_local Buffers buffers;
  const int s = static_cast<int>(slot);
  if (buffers.cap[s] < floats) {
    std::free(buffers.p[s]);
    const std::size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    buffers.p[s] = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (buffers.p[s] == nullptr) throw Error(strcat("out of memory allocating ", bytes, " bytes of kernel scratch"));
    buffers.cap[s] = floats;
  }
  return buffers.p[s];
}

}  // namespace detail
}  // namespace trueno
