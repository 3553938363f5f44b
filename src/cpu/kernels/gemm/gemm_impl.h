// f32 GEMM (BLIS-style: pack B panels and A blocks, register-blocked micro-kernel), matvec and
// transpose, written once over the vector API. Each ISA's file sets the micro-kernel shape
// kMR x (kNRV * Vec::W) before including this. Row-major throughout.
#pragma once
#include <cstddef>

#include "core/parallel.h"
#include "cpu/kernels/kernel_types.h"
#include "cpu/kernels/reduce/reduce_helpers.h"

namespace trueno::cpu::TRUENO_ISA {

constexpr std::size_t kNR = kNRV * Vec::W;
constexpr std::size_t kKC = 256;                           // depth of one packed block
constexpr std::size_t kMC = (128 / kMR) * kMR;             // rows of A packed per task
constexpr std::size_t kNC = (4096 / kNR) * kNR;            // columns of B packed at once

inline std::size_t min_sz(std::size_t a, std::size_t b) { return a < b ? a : b; }

// C[mr][nr] (+)= Apanel[kc][kMR] * Bpanel[kc][kNR]; full tiles stored directly, edges via a buffer.
inline void micro_kernel(std::size_t kc, const float* a, const float* b, float* c, std::size_t ldc,
                         bool accumulate, std::size_t mr, std::size_t nr) {
  Vec acc[kMR][kNRV];
  for (int i = 0; i < kMR; ++i)
    for (int j = 0; j < kNRV; ++j) acc[i][j] = zero();
  for (int i = 0; i < kMR; ++i) __builtin_prefetch(c + i * ldc, 1);  // C is needed after the loop
  auto step = [&](const float* ap, const float* bp) {
    Vec bv[kNRV];
    for (int j = 0; j < kNRV; ++j) bv[j] = load(bp + j * Vec::W);
    for (int i = 0; i < kMR; ++i) {
      const Vec av = set1(ap[i]);
      for (int j = 0; j < kNRV; ++j) acc[i][j] = fmadd(av, bv[j], acc[i][j]);
    }
  };
  std::size_t p = 0;
  for (; p + 4 <= kc; p += 4, a += 4 * kMR, b += 4 * kNR) {
    __builtin_prefetch(a + 8 * kMR);
    step(a, b), step(a + kMR, b + kNR), step(a + 2 * kMR, b + 2 * kNR), step(a + 3 * kMR, b + 3 * kNR);
  }
  for (; p < kc; ++p, a += kMR, b += kNR) step(a, b);
  if (mr == kMR && nr == kNR) {
    for (int i = 0; i < kMR; ++i)
      for (int j = 0; j < kNRV; ++j) {
        float* cp = c + i * ldc + j * Vec::W;
        store(cp, accumulate ? add(load(cp), acc[i][j]) : acc[i][j]);
      }
    return;
  }
  float tile[kMR * kNR];
  for (int i = 0; i < kMR; ++i)
    for (int j = 0; j < kNRV; ++j) store(tile + i * kNR + j * Vec::W, acc[i][j]);
  for (std::size_t i = 0; i < mr; ++i)
    for (std::size_t j = 0; j < nr; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + tile[i * kNR + j] : tile[i * kNR + j];
}

// B[kc][nc] (row stride ldb) -> panels of kNR columns: out[panel][p][kNR], zero-padded.
inline void pack_b_panel(std::size_t kc, std::size_t nr, const float* b, std::size_t ldb, float* out) {
  for (std::size_t p = 0; p < kc; ++p, b += ldb, out += kNR) {
    std::size_t j = 0;
    for (; j < nr; ++j) out[j] = b[j];
    for (; j < kNR; ++j) out[j] = 0.0f;
  }
}

// A[mc][kc] (row stride lda) -> panels of kMR rows: out[panel][p][kMR], zero-padded.
inline void pack_a(std::size_t mc, std::size_t kc, const float* a, std::size_t lda, float* out) {
  for (std::size_t i0 = 0; i0 < mc; i0 += kMR) {
    const std::size_t mr = min_sz(kMR, mc - i0);
    for (std::size_t p = 0; p < kc; ++p, out += kMR) {
      std::size_t i = 0;
      for (; i < mr; ++i) out[i] = a[(i0 + i) * lda + p];
      for (; i < kMR; ++i) out[i] = 0.0f;
    }
  }
}

struct GemmJob {
  std::size_t m, n, k, lda, ldb, ldc;
  const float* a;
  const float* b;
  float* c;
  std::size_t jc, nc, pc, kc;
  float* packed_b;
  std::size_t blocks;  // row blocks of A, a multiple of the thread count when that keeps them <= kMC
};

// Block b covers rows [row_start(b), row_start(b + 1)): boundaries on multiples of kMR, sizes within
// kMR of each other, so every thread gets the same work.
inline std::size_t row_start(const GemmJob& g, std::size_t block) {
  const std::size_t panels = (g.m + kMR - 1) / kMR;
  return min_sz(g.m, panels * block / g.blocks * kMR);
}

inline void pack_b_task(void* ctx, std::size_t panel) {
  const GemmJob& g = *static_cast<const GemmJob*>(ctx);
  const std::size_t j0 = panel * kNR;
  pack_b_panel(g.kc, min_sz(kNR, g.nc - j0), g.b + g.pc * g.ldb + g.jc + j0, g.ldb, g.packed_b + panel * g.kc * kNR);
}

inline void block_task(void* ctx, std::size_t block) {
  const GemmJob& g = *static_cast<const GemmJob*>(ctx);
  const std::size_t ic = row_start(g, block), mc = row_start(g, block + 1) - ic;
  float* packed_a = detail::thread_scratch(detail::ScratchSlot::kPackA, kMC * kKC);
  pack_a(mc, g.kc, g.a + ic * g.lda + g.pc, g.lda, packed_a);
  for (std::size_t j0 = 0; j0 < g.nc; j0 += kNR) {
    const float* bp = g.packed_b + (j0 / kNR) * g.kc * kNR;
    for (std::size_t i0 = 0; i0 < mc; i0 += kMR) {
      micro_kernel(g.kc, packed_a + (i0 / kMR) * g.kc * kMR, bp, g.c + (ic + i0) * g.ldc + g.jc + j0, g.ldc,
                   g.pc > 0, min_sz(kMR, mc - i0), min_sz(kNR, g.nc - j0));
    }
  }
}

struct MatvecJob {
  std::size_t k, lda;
  const float* a;
  const float* x;
  float* y;
  std::size_t rows_per_task, m;
};

inline void matvec_task(void* ctx, std::size_t task) {
  const MatvecJob& g = *static_cast<const MatvecJob*>(ctx);
  const std::size_t end = min_sz(g.m, (task + 1) * g.rows_per_task);
  for (std::size_t i = task * g.rows_per_task; i < end; ++i) g.y[i] = dot4(g.a + i * g.lda, g.x, g.k);
}

// Row blocks: enough that none exceeds kMC rows, rounded up to a multiple of the thread count
// (9 blocks on 2 threads would leave one thread idle for a ninth of the time).
inline std::size_t row_blocks(std::size_t m) {
  const std::size_t threads = static_cast<std::size_t>(detail::pool_threads());
  const std::size_t panels = (m + kMR - 1) / kMR, per_block = kMC / kMR;
  std::size_t blocks = (panels + per_block - 1) / per_block;
  if (threads > 1) blocks = (blocks + threads - 1) / threads * threads;
  return min_sz(blocks, panels);
}

namespace kernels {

void matmul(std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda, const float* b,
            std::size_t ldb, float* c, std::size_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = 0.0f;
    return;
  }
  float* packed_b = detail::thread_scratch(detail::ScratchSlot::kPackB, kKC * kNC);
  GemmJob g{m, n, k, lda, ldb, ldc, a, b, c, 0, 0, 0, 0, packed_b, row_blocks(m)};
  for (g.jc = 0; g.jc < n; g.jc += kNC) {
    g.nc = min_sz(kNC, n - g.jc);
    for (g.pc = 0; g.pc < k; g.pc += kKC) {
      g.kc = min_sz(kKC, k - g.pc);
      detail::parallel_run((g.nc + kNR - 1) / kNR, pack_b_task, &g);
      detail::parallel_run(g.blocks, block_task, &g);
    }
  }
}

void matvec(std::size_t m, std::size_t k, const float* a, std::size_t lda, const float* x, float* y) {
  // Split rows only when the work amortizes waking the pool (~64K multiply-adds per task).
  const std::size_t rows = k == 0 ? m : (65536 + k - 1) / k;
  MatvecJob g{k, lda, a, x, y, rows < 1 ? 1 : rows, m};
  detail::parallel_run((m + g.rows_per_task - 1) / g.rows_per_task, matvec_task, &g);
}

void transpose(std::size_t rows, std::size_t cols, const float* a, std::size_t lda, float* b, std::size_t ldb) {
  constexpr std::size_t kTile = 32;  // two 4 KiB tiles stay in L1
  for (std::size_t i0 = 0; i0 < rows; i0 += kTile)
    for (std::size_t j0 = 0; j0 < cols; j0 += kTile) {
      const std::size_t ie = min_sz(rows, i0 + kTile), je = min_sz(cols, j0 + kTile);
      for (std::size_t j = j0; j < je; ++j)
        for (std::size_t i = i0; i < ie; ++i) b[j * ldb + i] = a[i * lda + j];
    }
}

}  // namespace kernels
}  // namespace trueno::cpu::TRUENO_ISA
