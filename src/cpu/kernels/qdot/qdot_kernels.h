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

}  // namespace trueno::cpu::TRUENO_ISA::kernels
