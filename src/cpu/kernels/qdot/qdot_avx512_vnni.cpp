// Quantized block dots for AVX-512 with VNNI (vpdpwssd, vpdpbusd): the AVX-512 bodies compiled with
// -mavx512vnni into their own namespace; dispatch.cpp installs these entries in the AVX-512 table only
// when the CPU reports AVX512_VNNI (Note [Run-time variants]).
#define TRUENO_ISA avx512_vnni
#define TRUENO_QDOT_VNNI 1
#define TRUENO_QDOT_WIDE_KQUANTS 1
#define TRUENO_QDOT_WIDE_B32 1
#include "cpu/kernels/qdot/qdot_variants.h"
#include "cpu/kernels/qdot/qdot_avx2_body.inc"
#include "cpu/kernels/qdot/qdot_avx512_body.inc"
#include "cpu/kernels/qdot/qdot_avx512_b32.inc"
