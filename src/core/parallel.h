// Internal, ISA-safe entry points into the thread pool and per-thread scratch memory.
// Kernels compiled with ISA flags call these plain functions instead of using std::function or
// std::vector themselves (Note [ISA namespaces] in cpu/kernels/kernel_types.h).
#pragma once
#include <cstddef>

namespace trueno::detail {

using TaskFn = void (*)(void* ctx, std::size_t task);
// Runs fn(ctx, task) for every task in [0, n_tasks) on the library's pool; see trueno::parallel_for.
void parallel_run(std::size_t n_tasks, TaskFn fn, void* ctx);
// Threads the pool uses now.
int pool_threads();

// 64-byte aligned scratch of at least `floats` floats, owned by the calling thread, one per slot.
// Valid until the same thread asks for the same slot again.
enum class ScratchSlot { kPackA, kPackB, kGather, kQuantX, kRow, kRowsOut, kGateUp, kAmxPack, kAmxWeights, kCount };
float* thread_scratch(ScratchSlot slot, std::size_t floats);

}  // namespace trueno::detail
