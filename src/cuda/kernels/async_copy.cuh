// Global -> shared copies that hold no registers while in flight (cp.async, sm_80 and later): the flash
// prefill attention's tiles, the weight ring of the persistent GEMV chain (gemv_k45.cu) and the split
// decode attention's ring (attention_split.cu).
#pragma once
#include "prelude.cuh"

__device__ __forceinline__ u32 shared_address(const void* p) {
  u32 a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}

// 16 bytes global -> shared, asynchronously; zeros when !valid (keys past the cache: their V must not be
// garbage, since 0 x NaN is NaN in the product).
__device__ __forceinline__ void copy_async_16(u32 dst, const void* src, bool valid = true) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}
// 4 bytes the same way (through L1: cp.async.cg takes only 16), e.g. a row's f16 scales.
__device__ __forceinline__ void copy_async_4(u32 dst, const void* src, bool valid = true) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0) : "memory");
}
__device__ __forceinline__ void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most kPending of this thread's groups of copies are still in flight; other threads see
// the copies after a barrier (__syncwarp within a warp, __syncthreads within the block).
template <int kPending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}
