// Builds every compiled ISA's KernelTable at compile time (constant initialization, no start-up
// code) and resolves a Backend to one; the default backend itself is chosen once (backend.cpp).
#include "cpu/dispatch.h"

#include <cstdlib>

#include "core/cpu_features.h"
#include "core/strings.h"
#include "cpu/kernels/qdot/qdot_variants.h"
#include "trueno/error.h"
#include "trueno/log.h"

namespace trueno::cpu {
namespace {

#define TRUENO_ADDRESS(family, op, kind) &k::op,
#define TRUENO_TABLE(isa, Enum)                    \
  constexpr KernelTable isa##_table() {            \
    namespace k = isa::kernels;                    \
    return KernelTable{TRUENO_KERNEL_LIST(TRUENO_ADDRESS)}; \
  }                                                \
  constinit const KernelTable k_##isa##_table = isa##_table();
TRUENO_CPU_ISA_LIST(TRUENO_TABLE)
#undef TRUENO_TABLE
#undef TRUENO_ADDRESS

}  // namespace

// Note [Run-time variants]
// The tables are built at compile time for each ISA's baseline. Where the CPU has an extension that
// only the block dots use, they are replaced once, at first use, by a variant compiled with it:
// NEON + dotprod (sdot; CPU reports ASIMDDP) and AVX-512 + VNNI (vpdpbusd/vpdpwssd; CPUID.7:ECX[11]).
// Every variant sums exactly, so results do not change; TRUENO_NEON_DOTPROD=0 / TRUENO_AVX512_VNNI=0
// keep the baseline, and the test suites run once each way where the extension exists.
bool variant_wanted(const char* env_name, bool cpu_has) {
  const char* env = std::getenv(env_name);
  return cpu_has && (env == nullptr || std::string_view(env) != "0");
}

#define TRUENO_INSTALL_QDOT_VARIANT(t, ns)                                                            \
  t.dot_q4_0_q8_0 = ns::kernels::dot_q4_0_q8_0, t.dot_q8_0_q8_0 = ns::kernels::dot_q8_0_q8_0;          \
  t.dot_q4_k_q8_k = ns::kernels::dot_q4_k_q8_k, t.dot_q5_k_q8_k = ns::kernels::dot_q5_k_q8_k;          \
  t.dot_q6_k_q8_k = ns::kernels::dot_q6_k_q8_k;                                                       \
  t.dot_rows_q4_0_q8_0 = ns::kernels::dot_rows_q4_0_q8_0;                                             \
  t.dot_rows_q8_0_q8_0 = ns::kernels::dot_rows_q8_0_q8_0;                                             \
  t.dot_rows_q4_k_q8_k = ns::kernels::dot_rows_q4_k_q8_k;                                             \
  t.dot_rows_q5_k_q8_k = ns::kernels::dot_rows_q5_k_q8_k;                                             \
  t.dot_rows_q6_k_q8_k = ns::kernels::dot_rows_q6_k_q8_k

#if defined(__aarch64__)
const KernelTable* neon_runtime_table() {
  static const KernelTable table = [] {
    KernelTable t = k_neon_table;
    if (variant_wanted("TRUENO_NEON_DOTPROD", detail::cpu_features().neon_dotprod)) {
      TRUENO_INSTALL_QDOT_VARIANT(t, neon_dotprod);
      log(LogLevel::Info, "NEON: block dots use the dotprod (sdot) variants");
    }
    return t;
  }();
  return &table;
}
#elif defined(__x86_64__)
const KernelTable* avx512_runtime_table() {
  static const KernelTable table = [] {
    KernelTable t = k_avx512_table;
    if (variant_wanted("TRUENO_AVX512_VNNI", detail::cpu_features().avx512vnni)) {
      TRUENO_INSTALL_QDOT_VARIANT(t, avx512_vnni);
      log(LogLevel::Info, "AVX-512: block dots use the VNNI (vpdpbusd/vpdpwssd) variants");
    }
    return t;
  }();
  return &table;
}
#endif
#undef TRUENO_INSTALL_QDOT_VARIANT

const KernelTable* table_or_null(Backend b) {
#if defined(__aarch64__)
  if (b == Backend::NEON) return neon_runtime_table();
#elif defined(__x86_64__)
  if (b == Backend::AVX512) return avx512_runtime_table();
#endif
#define TRUENO_CASE(isa, Enum) \
  if (b == Backend::Enum) return &k_##isa##_table;
  TRUENO_CPU_ISA_LIST(TRUENO_CASE)
#undef TRUENO_CASE
  return nullptr;
}

Backend kernels_backend(std::optional<Backend> forced) { return resolve(forced); }

const KernelTable& kernels(std::optional<Backend> forced, std::string_view op) {
  const Backend b = resolve(forced);
  const KernelTable* t = table_or_null(b);
  if (t == nullptr)
    throw BackendUnavailable(strcat(op, ": backend ", name(b), " has no CPU kernel for this op; use one of ",
                                    join_names(available())));
  static const bool logged = [b] {
    log(LogLevel::Info, strcat("CPU kernels: first op runs on ", name(b), " (best available: ", name(best()), ")"));
    return true;
  }();
  (void)logged;
  return *t;
}

}  // namespace trueno::cpu
