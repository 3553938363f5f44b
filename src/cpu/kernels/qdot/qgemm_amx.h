// Prefill on AMX (Intel AMX-INT8 tiles): a Q4_K or Q6_K weight matrix times many activation rows quantized to
// Q8_K, 16 weight rows x 16 activation rows per tile step, one tile multiply per 32-element sub-block
// (so each sub-block's 6-bit scale can be applied to its exact integer sum). Integer sums are exact
// and the float steps are the single-row dot's, lane by lane: results are bit-identical to
// quant_matvec's (tested). Used by quant_matmul when amx::usable(); elsewhere the multi-row block dots.
#pragma once
#include <cstddef>

namespace trueno::cpu::amx {

#if defined(__x86_64__)
// The CPU has AMX-INT8, the OS granted this process the tile state (arch_prctl), and TRUENO_AMX != 0.
bool usable();

// Bytes of the packed activations for m rows of nb Q8_K blocks (groups of 16 rows, tile layout).
std::size_t packed_activation_bytes(std::size_t m, std::size_t nb);
// Repacks the activations of rows [16 g, 16 g + 16) (rows past m repeat the last one) into pack.
void pack_activation_group(const void* xq, std::size_t xq_row_bytes, std::size_t m, std::size_t nb, std::size_t g, void* pack);
// Bytes of scratch q4k_rows needs per call (the unpacked weight tile).
std::size_t weight_scratch_bytes(std::size_t nb);
// y[i * ldy + r] for weight rows r in [r0, r0 + nr), nr <= 16, all m activation rows.
void q4k_rows(const void* w, std::size_t row_bytes, std::size_t r0, std::size_t nr, const void* pack, std::size_t m,
              std::size_t nb, float* y, std::size_t ldy, void* scratch);

// The same for Q6_K weights (16-element sub-blocks: one tile multiply each, K = 16).
void q6k_rows(const void* w, std::size_t row_bytes, std::size_t r0, std::size_t nr, const void* pack, std::size_t m,
              std::size_t nb, float* y, std::size_t ldy, void* scratch);
#else
// Not x86-64: never usable, so the rest is never called.
inline bool usable() { return false; }
inline std::size_t packed_activation_bytes(std::size_t, std::size_t) { return 0; }
inline void pack_activation_group(const void*, std::size_t, std::size_t, std::size_t, std::size_t, void*) {}
inline std::size_t weight_scratch_bytes(std::size_t) { return 0; }
inline void q4k_rows(const void*, std::size_t, std::size_t, std::size_t, const void*, std::size_t, std::size_t, float*, std::size_t, void*) {}
inline void q6k_rows(const void*, std::size_t, std::size_t, std::size_t, const void*, std::size_t, std::size_t, float*, std::size_t, void*) {}
#endif

}  // namespace trueno::cpu::amx
