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

// Note [NEON dotprod]
// The NEON table is built at compile time for baseline AArch64. When the CPU reports ASIMDDP (and
// TRUENO_NEON_DOTPROD is not 0), the block dots are replaced once, at first use, by the sdot
// variants (qdot_neon_dotprod.cpp). Both variants sum exactly, so results do not change; the
// contract tests run once with each (the aarch64 CTest suite runs again with TRUENO_NEON_DOTPROD=0).
#if defined(__aarch64__)
const KernelTable* neon_runtime_table() {
  static const KernelTable table = [] {
    KernelTable t = k_neon_table;
    const char* env = std::getenv("TRUENO_NEON_DOTPROD");
    const bool allowed = env == nullptr || std::string_view(env) != "0";
    if (allowed && detail::cpu_features().neon_dotprod) {
      namespace v = neon_dotprod::kernels;
      t.dot_q4_0_q8_0 = v::dot_q4_0_q8_0, t.dot_q8_0_q8_0 = v::dot_q8_0_q8_0;
      t.dot_q4_k_q8_k = v::dot_q4_k_q8_k, t.dot_q5_k_q8_k = v::dot_q5_k_q8_k, t.dot_q6_k_q8_k = v::dot_q6_k_q8_k;
      t.dot_rows_q4_0_q8_0 = v::dot_rows_q4_0_q8_0, t.dot_rows_q8_0_q8_0 = v::dot_rows_q8_0_q8_0;
      t.dot_rows_q4_k_q8_k = v::dot_rows_q4_k_q8_k, t.dot_rows_q5_k_q8_k = v::dot_rows_q5_k_q8_k;
      t.dot_rows_q6_k_q8_k = v::dot_rows_q6_k_q8_k;
      log(LogLevel::Info, "NEON: block dots use the dotprod (sdot) variants");
    }
    return t;
  }();
  return &table;
}
#endif

const KernelTable* table_or_null(Backend b) {
#if defined(__aarch64__)
  if (b == Backend::NEON) return neon_runtime_table();
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
