// y[rows] = W x for Q4_K weights (rows of 144-byte blocks, as in the GGUF file) and Q8_K activations
// (quantize_q8_k.cu), for decode: memory-bound, so each weight byte is read once, with 16-byte loads.
//
// One warp per row, 8 lanes per block (4 blocks per warp step): lane t of a block takes qs bytes
// [16t, 16t + 16), i.e. 16 low nibbles of sub-block 2c and 16 high nibbles of sub-block 2c + 1
// (c = t / 2), and does 8 dp4a against the matching activations. Block term as on the CPU:
//   dx * (d * sum_j sc_j * (q_j . x_j) - dmin * sum_j m_j * bsum_j)
// with the integer parts exact; only the float accumulation order differs from the CPU.
#include "prelude.cuh"

// 6-bit scale and min of sub-block j from the 12 packed bytes (../shared/docs/quant-formats.md).
__device__ __forceinline__ void scale_min_k4(int j, const u8* s, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 63, m = s[j + 4] & 63;
  } else {
    sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
    m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

extern "C" __global__ void __launch_bounds__(128)
    gemv_q4_k(const u8* __restrict__ w, const i8* __restrict__ xq, const float* __restrict__ xd,
              const i16* __restrict__ xbs, float* __restrict__ y, int rows, int nb) {
  const int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= rows) return;
  const int lane = threadIdx.x, t = lane & 7, c = t >> 1, h = t & 1;
  const u8* wrow = w + static_cast<u64>(row) * nb * 144;
  float acc = 0.0f;
#pragma unroll 4
  for (int b = lane >> 3; b < nb; b += 4) {
    const u8* bw = wrow + b * 144;
    const uint4 q = *reinterpret_cast<const uint4*>(bw + 16 + 32 * c + 16 * h);
    const u32 dm = *reinterpret_cast<const u32*>(bw);
    const int e = b * 256 + 64 * c + 16 * h;  // first activation of the low-nibble run
    const int4 xl = *reinterpret_cast<const int4*>(xq + e);
    const int4 xh = *reinterpret_cast<const int4*>(xq + e + 32);
    int sl = 0, sh = 0;
    sl = __dp4a(static_cast<int>(q.x & 0x0F0F0F0Fu), xl.x, sl);
    sh = __dp4a(static_cast<int>((q.x >> 4) & 0x0F0F0F0Fu), xh.x, sh);
    sl = __dp4a(static_cast<int>(q.y & 0x0F0F0F0Fu), xl.y, sl);
    sh = __dp4a(static_cast<int>((q.y >> 4) & 0x0F0F0F0Fu), xh.y, sh);
    sl = __dp4a(static_cast<int>(q.z & 0x0F0F0F0Fu), xl.z, sl);
    sh = __dp4a(static_cast<int>((q.z >> 4) & 0x0F0F0F0Fu), xh.z, sh);
    sl = __dp4a(static_cast<int>(q.w & 0x0F0F0F0Fu), xl.w, sl);
    sh = __dp4a(static_cast<int>((q.w >> 4) & 0x0F0F0F0Fu), xh.w, sh);
    int sc0, m0, sc1, m1;
    scale_min_k4(2 * c, bw + 4, sc0, m0);
    scale_min_k4(2 * c + 1, bw + 4, sc1, m1);
    const int isum = sc0 * sl + sc1 * sh;
    const int msum = m0 * xbs[e / 16] + m1 * xbs[e / 16 + 2];
    const float d = f16_to_f32(static_cast<u16>(dm & 0xFFFF)), dmin = f16_to_f32(static_cast<u16>(dm >> 16));
    acc += xd[b] * (d * static_cast<float>(isum) - dmin * static_cast<float>(msum));
  }
  acc = warp_sum(acc);
  if (lane == 0) y[row] = acc;
}
