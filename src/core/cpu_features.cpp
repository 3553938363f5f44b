// CPU feature detection. Compiled with baseline flags: it must run on any x86-64 or aarch64.
#include "core/cpu_features.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace trueno::detail {
namespace {

#if defined(__x86_64__)
std::uint64_t xgetbv0() {
  std::uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  const unsigned max_leaf = a;
  __get_cpuid(1, &a, &b, &c, &d);
  f.sse2 = d & (1u << 26);
  f.fma = c & (1u << 12);
  f.osxsave = c & (1u << 27);
  f.avx = c & (1u << 28);
  f.f16c = c & (1u << 29);
  if (f.osxsave) {
    const std::uint64_t xcr0 = xgetbv0();
    f.os_ymm = (xcr0 & 0x6) == 0x6;
    f.os_zmm = f.os_ymm && (xcr0 & 0xe0) == 0xe0;
  }
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f.avx2 = b & (1u << 5);
    f.avx512f = b & (1u << 16);
    f.avx512dq = b & (1u << 17);
    f.avx512bw = b & (1u << 30);
    f.avx512vl = b & (1u << 31);
    f.avx512vnni = c & (1u << 11);
    const bool tile = d & (1u << 24), int8 = d & (1u << 25);
    f.amx_int8 = tile && int8 && f.osxsave && (xgetbv0() & (3ull << 17)) == (3ull << 17);
  }
  unsigned ext = __get_cpuid_max(0x80000000u, nullptr);
  if (ext >= 0x80000004u) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      __get_cpuid(0x80000002u + i, &a, &b, &c, &d);
      std::memcpy(brand + 16 * i, &a, 4), std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &c, 4), std::memcpy(brand + 16 * i + 12, &d, 4);
    }
    f.brand = brand;
    while (!f.brand.empty() && f.brand.back() == ' ') f.brand.pop_back();
  }
  return f;
}
#elif defined(__aarch64__)
CpuFeatures detect() {
  CpuFeatures f;
  f.neon = true;  // Advanced SIMD is mandatory in AArch64
  const unsigned long hw = getauxval(AT_HWCAP);
  f.neon_dotprod = hw & (1ul << 20);  // HWCAP_ASIMDDP
  f.brand = "aarch64";
  return f;
}
#else
CpuFeatures detect() { return {}; }
#endif

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace trueno::detail
