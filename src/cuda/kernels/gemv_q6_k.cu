// y[rows] = W x for Q6_K weights and Q8_K activations: the kernels of gemv_q6_k.cuh's body.
#include "gemv_q6_k.cuh"

using namespace q6k;

extern "C" __global__ void __launch_bounds__(32 * kWarps, TRUENO_Q6K_MIN_BLOCKS)
    gemv_q6_k(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, int nb, int accumulate) {
  overlap_launch();
  gemv_q6k<false>(t_, xq, xd, nb, accumulate);
}

extern "C" __global__ void __launch_bounds__(32 * kWarps, TRUENO_Q6K_MIN_BLOCKS)
    gemv_q6_k_split(GemvTargets t_, const i8* __restrict__ xq, const float* __restrict__ xd, int nb, int accumulate) {
  overlap_launch();
  gemv_q6k<true>(t_, xq, xd, nb, accumulate);
}
