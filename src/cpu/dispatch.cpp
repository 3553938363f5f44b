// Builds every compiled ISA's KernelTable at compile time (constant initialization, no start-up
// code) and resolves a Backend to one; the default backend itself is chosen once (backend.cpp).
#include "cpu/dispatch.h"

#include "core/strings.h"
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

const KernelTable* table_or_null(Backend b) {
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
