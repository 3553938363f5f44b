// The run-time block-dot variants (Note [Run-time variants], cpu/dispatch.cpp) are installed exactly
// when the CPU has the extension and the environment does not opt out; the contract tests then check
// whichever entries the table holds, so this is what makes them cover the variants.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "core/cpu_features.h"
#include "cpu/dispatch.h"
#include "cpu/kernels/qdot/qdot_variants.h"
#include "trueno/backend.h"

namespace trueno::cpu {
namespace {

bool opted_out(const char* env_name) {
  const char* env = std::getenv(env_name);
  return env != nullptr && std::string_view(env) == "0";
}

template <class Fn>
void expect_variant(Backend b, bool cpu_has, const char* env_name, Fn* variant, Fn* baseline, Fn* installed) {
  const bool want = cpu_has && !opted_out(env_name);
  std::printf("%s: CPU extension %s, %s=%s -> %s block dots\n", std::string(name(b)).c_str(), cpu_has ? "present" : "absent",
              env_name, std::getenv(env_name) ? std::getenv(env_name) : "(unset)", want ? "variant" : "baseline");
  EXPECT_EQ(installed, want ? variant : baseline);
}

TEST(QdotVariants, InstalledExactlyWhenTheCpuHasTheExtension) {
#if defined(__x86_64__)
  if (!is_available(Backend::AVX512)) GTEST_SKIP() << "no AVX-512 on this CPU: the VNNI variant cannot be installed";
  const KernelTable* t = table_or_null(Backend::AVX512);
  expect_variant(Backend::AVX512, detail::cpu_features().avx512vnni, "TRUENO_AVX512_VNNI",
                 &avx512_vnni::kernels::dot_q4_k_q8_k, &avx512::kernels::dot_q4_k_q8_k, t->dot_q4_k_q8_k);
  expect_variant(Backend::AVX512, detail::cpu_features().avx512vnni, "TRUENO_AVX512_VNNI",
                 &avx512_vnni::kernels::dot_rows_q6_k_q8_k, &avx512::kernels::dot_rows_q6_k_q8_k, t->dot_rows_q6_k_q8_k);
#elif defined(__aarch64__)
  const KernelTable* t = table_or_null(Backend::NEON);
  expect_variant(Backend::NEON, detail::cpu_features().neon_dotprod, "TRUENO_NEON_DOTPROD",
                 &neon_dotprod::kernels::dot_q4_k_q8_k, &neon::kernels::dot_q4_k_q8_k, t->dot_q4_k_q8_k);
#else
  GTEST_SKIP() << "no run-time variants on this architecture";
#endif
}

}  // namespace
}  // namespace trueno::cpu
