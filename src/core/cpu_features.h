// What the CPU and the OS support, read once: CPUID leaves 1 and 7 plus XGETBV on x86-64, the
// architecture itself on aarch64.
#pragma once
#include <string>

namespace trueno::detail {

struct CpuFeatures {
  bool sse2 = false, osxsave = false, avx = false, fma = false, f16c = false, avx2 = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false, avx512vnni = false;
  bool os_ymm = false;  // XCR0 bits 1,2: the OS saves SSE and AVX state
  bool os_zmm = false;  // XCR0 bits 5,6,7: opmask and upper ZMM state
  bool amx_int8 = false;  // AMX-TILE + AMX-INT8 (CPUID.7:EDX[24,25]) and XCR0 bits 17,18 (tile state)
  bool neon = false, neon_dotprod = false;
  std::string brand;
};

const CpuFeatures& cpu_features();

}  // namespace trueno::detail
