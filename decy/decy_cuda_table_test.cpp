// decy's translations against their CUDA originals on identical inputs, table-driven (decy_cuda_cases.h):
// every case's outputs from the CUDA kernel and from decy's SPIR-V on the same device's Vulkan driver,
// compared under the translated kernel's contract in contracts/gpu/decy.yaml (the CUDA output where the
// CPU reference stands in the other decy tests): bit for bit where the contract is exact, cosine and nmse
// elsewhere. Runs where a CUDA device and a Vulkan device exist (the H200); a visible skip elsewhere.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/gpu_contract.h"
#include "decy_cuda_cases.h"

namespace {

#if defined(TRUENO_TESTS_WITH_VULKAN) && defined(DECY_TESTS_WITH_CUDA)
namespace cu = trueno::cuda;
using decy::cases::Elem;

float as_float(const std::byte* at, Elem e) {
  switch (e) {
    case Elem::F32: { float f; std::memcpy(&f, at, 4); return f; }
    case Elem::F16: case Elem::BF16: {
      std::uint16_t h;
      std::memcpy(&h, at, 2);
      if (e == Elem::BF16) { const std::uint32_t w = static_cast<std::uint32_t>(h) << 16; float f; std::memcpy(&f, &w, 4); return f; }
      const std::uint32_t sign = (h & 0x8000u) << 16, ex = (h >> 10) & 0x1f, m = h & 0x3ff;
      float f = ex == 0 ? std::ldexp(static_cast<float>(m), -24) : std::ldexp(static_cast<float>(m | 0x400), static_cast<int>(ex) - 25);
      return sign ? -f : f;
    }
    case Elem::I8: return static_cast<float>(static_cast<std::int8_t>(*at));
    case Elem::I16: { std::int16_t v; std::memcpy(&v, at, 2); return v; }
    case Elem::I32: { std::int32_t v; std::memcpy(&v, at, 4); return static_cast<float>(v); }
    case Elem::U32: { std::uint32_t v; std::memcpy(&v, at, 4); return static_cast<float>(v); }
    case Elem::F64: { double v; std::memcpy(&v, at, 8); return static_cast<float>(v); }
    default: { std::uint64_t v; std::memcpy(&v, at, 8); return static_cast<float>(v); }
  }
}

TEST(DecyVulkanGpu, TranslationsEqualTheirCudaOriginals) {
  DECY_REQUIRE_VULKAN_DEVICE();
  std::string why;
  if (!cu::probe(0, &why)) GTEST_SKIP() << "skipped: no CUDA device: " << why;
  static const std::shared_ptr<cu::Context> cuda = cu::Context::open(0);
  const auto& info = decy::test::context().info();
  if (!info.int64 || !info.storage_16bit || !info.storage_8bit) GTEST_SKIP() << "skipped: the Vulkan device lacks int64, 8- or 16-bit storage";
  for (const auto& k : decy::cases::all_cases()) {
    SCOPED_TRACE(k.label);
    auto p = decy::cases::prepare(k, *cuda, decy::test::context(), decy::test::rng());
    decy::cases::launch_cuda(k, *cuda, p);
    cuda->synchronize();
    trueno::vulkan::Recorder rec(decy::test::context());
    decy::cases::record_vulkan(k, decy::test::context(), p, rec, 1);
    rec.submit();
    const bool exact = trueno::test::gpu_contract_of("decy", k.contract)["obligations"][0]["type"].as<std::string>() == "gpu_vs_cpu_exact";
    for (std::size_t b = 0; b < k.bufs.size(); ++b) {
      if (!k.bufs[b].out) continue;
      const std::size_t bytes = p.host[b].size(), eb = decy::cases::elem_bytes(k.bufs[b].elem);
      std::vector<std::byte> from_cuda(bytes), from_vulkan(bytes);
      p.cuda[b]->download(from_cuda.data(), bytes);
      p.vulkan[b]->download(from_vulkan.data(), bytes);
      const std::string what = k.label + ", output " + std::to_string(b) + " against CUDA";
      if (exact) {
        std::size_t differ = 0;
        for (std::size_t i = 0; i < k.bufs[b].count; ++i) differ += std::memcmp(&from_cuda[i * eb], &from_vulkan[i * eb], eb) != 0;
        std::printf("%s %s: %zu of %zu differ\n", k.contract.c_str(), what.c_str(), differ, k.bufs[b].count);
        EXPECT_EQ(differ, 0u) << what;
        continue;
      }
      std::vector<float> gv, cv;
      for (std::size_t i = 0; i < k.bufs[b].count; ++i)
        gv.push_back(as_float(&from_vulkan[i * eb], k.bufs[b].elem)), cv.push_back(as_float(&from_cuda[i * eb], k.bufs[b].elem));
      trueno::test::expect_gpu_contract("decy", k.contract, gv, cv, what);
    }
  }
}
#else
TEST(DecyVulkanGpu, CudaTableNeedsBothBackends) { GTEST_SKIP() << "skipped: the CUDA or the Vulkan backend is not built"; }
#endif

}  // namespace
