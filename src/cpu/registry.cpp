// The kernel list (kernels.inc) as data.
#include "cpu/registry.h"

namespace trueno::cpu {
namespace {
#define TRUENO_INFO(family, op, kind) \
  KernelInfo{#family, #op, Kind::kind, [](const KernelTable& t) { return reinterpret_cast<AnyFn>(t.op); }},
constexpr KernelInfo kRegistry[] = {TRUENO_KERNEL_LIST(TRUENO_INFO)};
#undef TRUENO_INFO
}  // namespace

std::span<const KernelInfo> kernel_registry() { return kRegistry; }

const KernelInfo* find_kernel(std::string_view name) {
  for (const auto& k : kRegistry)
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace trueno::cpu
