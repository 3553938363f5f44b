// The public device ops (trueno/device_ops.h) on a Vulkan device against the CPU ops, by the contracts
// `tensor_*` of contracts/gpu/vulkan.yaml (VulkanGpu.*: lavapipe in CI, a visible skip without a device).
#include <gtest/gtest.h>

#include "api/crossover.h"
#include "support/device_grad_cases.h"
#include "support/device_ops_cases.h"
#include "support/device_train_case.h"
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

TEST(VulkanGpu, TensorMatmulBackwardMatchesTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 109);
  test::check_matmul_backward(device(), "vulkan", rng);
}

TEST(VulkanGpu, TensorBackwardOpsMatchTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 110);
  test::check_backward(device(), "vulkan", rng);
}

TEST(VulkanGpu, TensorTrainingBackwardOpsMatchTheCpu) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 111);
  test::check_training_backward(device(), "vulkan", rng);
}

// The CPU tiers' toy training (src/grad/train_test.cpp) with its tensors on the device, to the same loss.
TEST(VulkanGpu, TensorTrainingReachesTheCpuLoss) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  test::check_rings_training(device());
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

TEST(VulkanGpu, MatrixMatmulForcedOntoTheDevice) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  std::mt19937_64 rng(test_seed() + 108);
  test::check_matrix_forced(device(), "vulkan", rng);
}

// The measurement behind the crossover table runs on this device (Note [Measured crossover]; small sizes
// to keep CI fast): it times both sides and reports them. Automatic choice still never uses lavapipe
// (Offload.ADeviceThatIsNotAutomaticIsNeverChosen); what lavapipe measures is printed, not asserted.
TEST(VulkanGpu, CrossoverMeasurementTimesBothSides) {
  TRUENO_REQUIRE_VULKAN_DEVICE();
  for (const DeviceStatus& s : device_report()) {
    if (!(s.device == device())) continue;
    const std::size_t sizes[] = {32, 64};
    const Crossover c = detail::measure_crossover(s, sizes);
    std::printf("%s matmul: %s (min_size %zu)\n", c.device.str().c_str(), c.detail.c_str(), c.min_size);
    EXPECT_NE(c.detail.find("n=32: cpu "), std::string::npos) << c.detail;
    EXPECT_NE(c.detail.find("n=64: cpu "), std::string::npos) << c.detail;
    EXPECT_EQ(c.automatic, c.min_size != 0);
    return;
  }
  FAIL() << device().str() << " is not in the device report";
}

}  // namespace
}  // namespace trueno::vulkan
