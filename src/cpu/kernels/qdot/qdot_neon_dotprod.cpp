// Quantized block dot products for NEON with the dotprod extension (sdot): qdot_neon_body.inc, compiled
// with -march=armv8.2-a+dotprod into its own namespace; dispatch.cpp installs these entries in the
// NEON table only when the CPU reports ASIMDDP.
#define TRUENO_ISA neon_dotprod
#define TRUENO_NEON_DOTPROD 1
#include "cpu/kernels/qdot/qdot_variants.h"
#include "cpu/kernels/qdot/qdot_neon_body.inc"
