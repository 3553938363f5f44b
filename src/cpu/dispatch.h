// The dispatch tables: one KernelTable per compiled CPU ISA, looked up by Backend.
#pragma once
#include <string_view>

#include "cpu/kernels/kernel_types.h"
#include "trueno/backend.h"

namespace trueno::cpu {

// The table of backend b, or nullptr when b has no CPU kernels in this build.
const KernelTable* table_or_null(Backend b);
// The kernels ops run on for a per-call choice (or the current backend when none), after checking the
// backend is available here; `op` names the caller in the error when it is not.
const KernelTable& kernels(std::optional<Backend> forced, std::string_view op);
// The backend kernels(forced, op) would use.
Backend kernels_backend(std::optional<Backend> forced);

}  // namespace trueno::cpu
