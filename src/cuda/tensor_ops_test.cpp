// The public device ops (trueno/device_ops.h) on a CUDA device against the CPU ops, by the contracts
// `tensor_*` of contracts/gpu/cuda.yaml (CudaGpu.*: a visible skip without a device; run on the H200).
#include <gtest/gtest.h>
#include <unistd.h>

#include "support/device_grad_cases.h"
#include "support/device_ops_cases.h"
#include "support/device_train_case.h"
#include "cuda/cuda_test_support.h"

namespace trueno::cuda {
namespace {

using testing::test_seed;

Device device() { return Device{DeviceKind::CUDA, 0}; }

TEST(CudaGpu, TensorElementwiseMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 101);
  test::check_elementwise(device(), "cuda", rng);
}

TEST(CudaGpu, TensorReductionsMatchTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 102);
  test::check_reductions(device(), "cuda", rng);
}

TEST(CudaGpu, TensorRowOpsMatchTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 103);
  test::check_rows(device(), "cuda", rng);
}

TEST(CudaGpu, TensorMatmulMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 104);
  test::check_matmul(device(), "cuda", rng);
}

TEST(CudaGpu, TensorMatmulBackwardMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 109);
  test::check_matmul_backward(device(), "cuda", rng);
}

TEST(CudaGpu, TensorBackwardOpsMatchTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 110);
  test::check_backward(device(), "cuda", rng);
}

TEST(CudaGpu, TensorTrainingBackwardOpsMatchTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 111);
  test::check_training_backward(device(), "cuda", rng);
}

// The CPU tiers' toy training (src/grad/train_test.cpp) with its tensors on the device, to the same loss.
TEST(CudaGpu, TensorTrainingReachesTheCpuLoss) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  test::check_rings_training(device());
}

TEST(CudaGpu, TensorMatvecOfEveryWeightTypeMatchesTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 105);
  test::check_matvec(device(), "cuda", rng);
}

TEST(CudaGpu, TensorConversionsEqualTheCpu) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 106);
  test::check_conversions(device(), "cuda", rng);
}

TEST(CudaGpu, TensorOpsChainWithOneSynchronization) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 107);
  test::check_chain(device(), rng);
}

TEST(CudaGpu, MatrixMatmulForcedOntoTheDevice) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(test_seed() + 108);
  test::check_matrix_forced(device(), "cuda", rng);
}

// Note [Measured crossover] on a real device: calibrate() times the products and caches the entry under
// its key; the table then reads it back without measuring. Prints the measurements (docs/DEVICE_OPS.md).
TEST(CudaGpu, CrossoverIsMeasuredAndCached) {
  TRUENO_REQUIRE_CUDA_DEVICE();
  const std::string path = ::testing::TempDir() + "trueno_crossover_test." + std::to_string(getpid()) + ".tsv";
  std::remove(path.c_str());
  setenv("TRUENO_CROSSOVER_CACHE", path.c_str(), 1);
  const std::vector<Crossover> table = calibrate();
  bool found = false;
  for (const Crossover& c : table) {
    std::printf("crossover %s matmul: %s n >= %zu (%s)\n", c.device.str().c_str(), c.automatic ? "automatic from" : "never;", c.min_size,
                c.detail.c_str());
    if (!(c.device == device())) continue;
    found = true;
    EXPECT_NE(c.detail.find("n=128: cpu"), std::string::npos) << c.detail;
    EXPECT_EQ(c.automatic, c.min_size != 0);
  }
  EXPECT_TRUE(found);
  bool cached = false;
  for (const auto& c : cached_crossovers()) cached = cached || (c && c->device == device());
  EXPECT_TRUE(cached) << path;
  unsetenv("TRUENO_CROSSOVER_CACHE");
}

}  // namespace
}  // namespace trueno::cuda
