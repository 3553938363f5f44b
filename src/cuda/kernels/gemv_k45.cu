// y[rows] = W x for Q4_K and Q5_K weights and Q8_K activations: the kernels of gemv_k45.cuh's body, and the
// persistent chain's benchmark kernels (Note [A persistent GEMV chain]).
#include "gemv_k45.cuh"

using namespace k45;

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q4_k(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, const i16* __restrict__ xbs,
              int nb, int accumulate) {
  overlap_launch();
  gemv_k45<false>(t_, xq, xd, xbs, nb, accumulate);
}

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q5_k(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, const i16* __restrict__ xbs,
              int nb, int accumulate) {
  overlap_launch();
  gemv_k45<true>(t_, xq, xd, xbs, nb, accumulate);
}

// The same products, each warp over several row groups (Note [A warp's loads across its row groups]).
extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q4_k_stream(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, const i16* __restrict__ xbs,
                     int nb, int accumulate) {
  overlap_launch();
  gemv_k45_stream<false>(t_, xq, xd, xbs, nb, accumulate);
}

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    gemv_q5_k_stream(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, const i16* __restrict__ xbs,
                     int nb, int accumulate) {
  overlap_launch();
  gemv_k45_stream<true>(t_, xq, xd, xbs, nb, accumulate);
}

// Note [A persistent GEMV chain]
// What a persistent decode (issue 15 item 1) would gain over one launch per GEMV, measured on the GEMVs
// alone (BM_CudaGemvChain, src/cuda/cuda_bench.cpp): bench_gemv_chain runs a list of Q4_K GEMVs
// ("phases") in one launch of as many blocks as fit at once, each block taking every gridDim.x-th block
// of a phase. With `barriers`, a phase waits for every block of the previous one (a counter per phase,
// zeroed before the launch): each warp issues its first weight loads, then waits (Note [Weights before
// the wait]); without, the phases stream back to back (an upper bound: no dependency honoured).
// Measured on the H200 (docs/PERFORMANCE.md, 2026-12-03): the barriers cost more than kernel boundaries.
namespace {
struct ChainOp {
  GemvTargets t;
  const i8* xq;
  const float* xd;
  const i16* xbs;
  int nb, accumulate, grid_x, ny;
};
// Spins until *counter reaches target (one thread; acquire: the writes counted before are visible).
__device__ __forceinline__ void spin_until(const unsigned* counter, unsigned target) {
  unsigned v;
  do asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
  while (v < target);
}

// Waits (once per phase, lane 0 of each warp) until the previous phase's counter reaches every block.
struct PhaseWait {
  const unsigned* counter;  // null: no wait
  unsigned blocks;
  bool* waited;
  __device__ void operator()(bool after) const {
    if (!after || counter == nullptr || *waited) return;
    if (threadIdx.x == 0) spin_until(counter, blocks);
    __syncwarp();
    *waited = true;
  }
};
}  // namespace

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    bench_gemv_chain(const ChainOp* __restrict__ ops, int n_ops, unsigned* __restrict__ counters, int barriers) {
  for (int i = 0; i < n_ops; ++i) {
    const ChainOp op = ops[i];
    bool waited = false;
    const PhaseWait pw{barriers && i > 0 ? counters + i - 1 : nullptr, gridDim.x, &waited};
    const int total = op.grid_x * op.ny;
    for (int v = blockIdx.x; v < total; v += gridDim.x)
      gemv_k45<false, PhaseWait>(op.t, op.xq, op.xd, op.xbs, op.nb, op.accumulate, v % op.grid_x, v / op.grid_x, pw);
    pw(true);  // a block without work in this phase still waits for the previous one
    if (barriers) {
      __syncthreads();
      if (threadIdx.x == 0 && threadIdx.y == 0) {
        __threadfence();
        atomicAdd(counters + i, 1u);
      }
    }
  }
}

// The chain again with each phase's block steps split evenly over every resident warp (contiguous runs of
// (row group, step) units, partial row sums added to y atomically) and the weights through a ring of
// kChainStages units in shared memory that runs ahead across phases: the next phase's weights are copied
// while the warp waits for the previous phase (per-warp counters). The bench's y is scratch.
#ifndef TRUENO_CHAIN_STAGES
#define TRUENO_CHAIN_STAGES 4
#endif
namespace {
constexpr int kChainStages = TRUENO_CHAIN_STAGES;

struct ChainCursor {
  int phase, unit, end;  // this warp's units [unit, end) of ops[phase]; phase == n_ops: done
};
__device__ __forceinline__ int chain_steps(const ChainOp& op) { return (op.nb + 3) / 4; }
__device__ __forceinline__ long long chain_units(const ChainOp& op) {
  return static_cast<long long>((op.t.rows[0] + kRows - 1) / kRows) * op.ny * chain_steps(op);
}
__device__ __forceinline__ void chain_seek(const ChainOp* ops, int n_ops, int warp, int warps, ChainCursor& c) {
  while (c.phase < n_ops) {
    const long long units = chain_units(ops[c.phase]);
    c.unit = static_cast<int>(units * warp / warps), c.end = static_cast<int>(units * (warp + 1) / warps);
    if (c.unit < c.end) return;
    ++c.phase;
  }
}
__device__ __forceinline__ void chain_next(const ChainOp* ops, int n_ops, int warp, int warps, ChainCursor& c) {
  if (++c.unit < c.end) return;
  ++c.phase;
  chain_seek(ops, n_ops, warp, warps, c);
}
}  // namespace

extern "C" __global__ void __launch_bounds__(32 * kWarps)
    bench_gemv_chain_ring(const ChainOp* __restrict__ ops, int n_ops, unsigned* __restrict__ counters, int barriers) {
  constexpr int kStep = 4 * 144, kPieces = kStep / 16;
  __shared__ __align__(16) uint4 ring[kWarps][kChainStages][kRows][kPieces];
  const int lane = threadIdx.x, j = lane >> 3, t = lane & 7, c = t >> 1, h = t & 1;
  const int warp = blockIdx.x * kWarps + threadIdx.y, warps = gridDim.x * kWarps;
  uint4 (*slots)[kRows][kPieces] = ring[threadIdx.y];
  ChainCursor prod{0, 0, 0};
  chain_seek(ops, n_ops, warp, warps, prod);
  ChainCursor cons = prod;
  const auto issue = [&](int slot) {
    if (prod.phase < n_ops) {
      const ChainOp& op = ops[prod.phase];
      const int steps = chain_steps(op), groups = (op.t.rows[0] + kRows - 1) / kRows;
      const int tgt = prod.unit / (groups * steps), rg = prod.unit % (groups * steps) / steps, st = prod.unit % steps;
      const int rows = op.t.rows[tgt], pieces = min(4, op.nb - 4 * st) * 9;
      const u64 row_bytes = static_cast<u64>(op.nb) * 144;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const u8* src = op.t.w[tgt] + static_cast<u64>(min(rg * kRows + r, rows - 1)) * row_bytes + static_cast<u64>(st) * kStep;
#pragma unroll
        for (int p0 = 0; p0 < kPieces; p0 += 32)
          if (p0 + lane < pieces) copy_async_16(shared_address(&slots[slot][r][p0 + lane]), src + 16 * (p0 + lane));
      }
      chain_next(ops, n_ops, warp, warps, prod);
    }
    commit_copies();
  };
#pragma unroll
  for (int s = 0; s < kChainStages; ++s) issue(s);
  const auto arrive = [&](int from, int to) {  // phases [from, to) done by this warp
    if (!barriers || lane != 0) return;
    __threadfence();
    for (int p = from; p < to; ++p) atomicAdd(counters + p, 1u);
  };
  arrive(0, cons.phase);
  float acc[kRows] = {};
  int slot = 0;
  while (cons.phase < n_ops) {
    const ChainOp& op = ops[cons.phase];
    const int steps = chain_steps(op), groups = (op.t.rows[0] + kRows - 1) / kRows;
    const int tgt = cons.unit / (groups * steps), rg = cons.unit % (groups * steps) / steps, st = cons.unit % steps;
    if (barriers && cons.phase > 0 && cons.unit == static_cast<int>(chain_units(op) * warp / warps)) {  // a phase's first unit
      if (lane == 0) spin_until(counters + cons.phase - 1, static_cast<unsigned>(warps));
      __syncwarp();
    }
    wait_copies<kChainStages - 1>();
    __syncwarp();
    const int b = 4 * st + j;
    if (b < op.nb) {
      const int e = b * 256 + 64 * c + 16 * h;
      const int4 xl = *reinterpret_cast<const int4*>(op.xq + e), xh = *reinterpret_cast<const int4*>(op.xq + e + 32);
      const int bsl = op.xbs[e / 16], bsh = op.xbs[e / 16 + 2];
      const float dx = op.xd[b];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const uint4* blk = slots[slot][r] + j * 9;
        acc[r] += term<false>(blk[0], blk[1 + t], make_uint4(0, 0, 0, 0), c, xl, xh, bsl, bsh, dx);
      }
    }
    __syncwarp();
    issue(slot);
    slot = slot + 1 == kChainStages ? 0 : slot + 1;
    ChainCursor next = cons;
    chain_next(ops, n_ops, warp, warps, next);
    const bool flush = next.phase != cons.phase || next.unit / steps != cons.unit / steps;  // another row group
    if (flush) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const float v = warp_sum(acc[r]);
        acc[r] = 0.0f;
        if (lane == 0 && rg * kRows + r < op.t.rows[tgt]) atomicAdd(op.t.y[tgt] + rg * kRows + r, v);
      }
    }
    if (next.phase != cons.phase) arrive(cons.phase, next.phase);
    cons = next;
  }
}
