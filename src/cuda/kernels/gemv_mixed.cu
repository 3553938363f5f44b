// GEMVs of two weight types in one launch (Note [Q4_K and Q6_K in one launch]).
#include "gemv_k45.cuh"
#include "gemv_q6_k.cuh"

// Note [Q4_K and Q6_K in one launch]
// A Q4_K_M model's q and k are Q4_K and, in half its layers, v is Q6_K: two decode launches there (a 7B's
// 2 x 9.4 MB, then 13.8 MB), each too short to stream at the rate one longer launch reaches (the 7B's
// gate + up, 50.7 MB in one launch, 2.85 TB/s on the H200), and the second waits for the first. Here one
// launch takes all three: blocks [0, blocks4 x n4) run the Q4_K body over the n4 Q4_K matrices (blocks4
// each), the rest the Q6_K body (split layout) over the Q6_K matrix. Each block computes the rows, loads
// and sums its own kernel's block would, so y is the two launches' bit for bit (a test checks).
extern "C" __global__ void __launch_bounds__(32 * k45::kWarps, TRUENO_Q6K_MIN_BLOCKS)
    gemv_q4_k_q6_k_split(GemvTargets t4, GemvTargets t6, const i8* __restrict__ xq, const float* __restrict__ xd,
                         const i16* __restrict__ xbs, int nb, int blocks4, int n4, int accumulate) {
  overlap_launch();
  const int b = blockIdx.x;
  if (b < blocks4 * n4) k45::gemv_k45<false>(t4, xq, xd, xbs, nb, accumulate, b % blocks4, b / blocks4);
  else q6k::gemv_q6k<true>(t6, xq, xd, nb, accumulate, b - blocks4 * n4, 0);
}
