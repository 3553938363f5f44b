// The qdot kernel entries of an ISA that has no hand-written variant of them: the generic bodies.
// Include after qdot_impl.h; an ISA file that hand-writes an entry defines it itself instead and
// sets the matching TRUENO_QDOT_HAVE_* macro before including this.
#pragma once

namespace trueno::cpu::TRUENO_ISA::kernels {

#ifndef TRUENO_QDOT_HAVE_Q8_0
float dot_q8_0_q8_0(const void* w, const void* x, std::size_t nb) { return generic_dot_q8_0_q8_0(w, x, nb); }
#endif
#ifndef TRUENO_QDOT_HAVE_Q4_0
float dot_q4_0_q8_0(const void* w, const void* x, std::size_t nb) { return generic_dot_q4_0_q8_0(w, x, nb); }
#endif
#ifndef TRUENO_QDOT_HAVE_Q4_K
float dot_q4_k_q8_k(const void* w, const void* x, std::size_t nb) {
  return generic_dot_k45<quant::BlockQ4_K, false>(w, x, nb);
}
#endif
#ifndef TRUENO_QDOT_HAVE_Q5_K
float dot_q5_k_q8_k(const void* w, const void* x, std::size_t nb) {
  return generic_dot_k45<quant::BlockQ5_K, true>(w, x, nb);
}
#endif
#ifndef TRUENO_QDOT_HAVE_Q6_K
float dot_q6_k_q8_k(const void* w, const void* x, std::size_t nb) { return generic_dot_q6_k_q8_k(w, x, nb); }
#endif

#ifndef TRUENO_QDOT_HAVE_X8_Q4_K
void dot_x8_q4_k_q8_k(const void* w, const void* x, std::size_t nb, float* out) {
  generic_dot_x8_q4_k_q8_k(w, x, nb, out);
}
#endif
#ifndef TRUENO_QDOT_HAVE_X8_Q8_0
void dot_x8_q8_0_q8_0(const void* w, const void* x, std::size_t nb, float* out) {
  generic_dot_x8_q8_0_q8_0(w, x, nb, out);
}
#endif
#ifndef TRUENO_QDOT_HAVE_X8_Q6_K
void dot_x8_q6_k_q8_k(const void* w, const void* x, std::size_t nb, float* out) {
  generic_dot_x8_q6_k_q8_k(w, x, nb, out);
}
#endif

// Multi-row entries without a hand-written variant: the single-row dot per activation row.
#define TRUENO_QDOT_ROWS_LOOP(name, single)                                                              \
  void name(const void* w, const void* xq, std::size_t stride, std::size_t m, std::size_t nb, float* out) { \
    for (std::size_t i = 0; i < m; ++i) out[i] = single(w, static_cast<const unsigned char*>(xq) + i * stride, nb); \
  }
#ifndef TRUENO_QDOT_HAVE_ROWS_Q4_0
TRUENO_QDOT_ROWS_LOOP(dot_rows_q4_0_q8_0, dot_q4_0_q8_0)
#endif
#ifndef TRUENO_QDOT_HAVE_ROWS_Q8_0
TRUENO_QDOT_ROWS_LOOP(dot_rows_q8_0_q8_0, dot_q8_0_q8_0)
#endif
#ifndef TRUENO_QDOT_HAVE_ROWS_Q4_K
TRUENO_QDOT_ROWS_LOOP(dot_rows_q4_k_q8_k, dot_q4_k_q8_k)
#endif
#ifndef TRUENO_QDOT_HAVE_ROWS_Q5_K
TRUENO_QDOT_ROWS_LOOP(dot_rows_q5_k_q8_k, dot_q5_k_q8_k)
#endif
#ifndef TRUENO_QDOT_HAVE_ROWS_Q6_K
TRUENO_QDOT_ROWS_LOOP(dot_rows_q6_k_q8_k, dot_q6_k_q8_k)
#endif
#undef TRUENO_QDOT_ROWS_LOOP

}  // namespace trueno::cpu::TRUENO_ISA::kernels
