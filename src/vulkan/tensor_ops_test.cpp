// The public device ops (trueno/device_ops.h) on a Vulkan device against the CPU ops, by the contracts
// `tensor_*` of contracts/gpu/vulkan.yaml (VulkanGpu.*: lavapipe in CI, a visible skip without a device).
#include <gtest/gtest.h>

#include "support/device_ops_cases.h"
#include "vulkan/vulkan_test_support.h"

namespace trueno::vulkan {
namespace {

using testing::test_device;
using testing::test_seed;

Device device() { return Device{DeviceKind::Vulkan, test_device()}; }

TEST(VulkanGpu, TensorElementwiseMatchesTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 101);
  test::check_elementwise(device(), "vulkan", rng);
}

TEST(VulkanGpu, TensorReductionsMatchTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 102);
  test::check_reductions(device(), "vulkan", rng);
}

TEST(VulkanGpu, TensorRowOpsMatchTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 103);
  test::check_rows(device(), "vulkan", rng);
}

TEST(VulkanGpu, TensorMatmulMatchesTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 104);
  test::check_matmul(device(), "vulkan", rng);
}

TEST(VulkanGpu, TensorMatvecOfEveryWeightTypeMatchesTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 105);
  test::check_matvec(device(), "vulkan", rng);
}

TEST(VulkanGpu, TensorConversionsEqualTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 106);
  test::check_conversions(device(), "vulkan", rng);
}

TEST(VulkanGpu, TensorOpsChainWithOneSynchronization) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 107);
  test::check_chain(device(), rng);
}

}  // namespace
}  // namespace trueno::vulkan
