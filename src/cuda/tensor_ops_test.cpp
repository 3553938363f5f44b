// The public device ops (trueno/device_ops.h) on a CUDA device against the CPU ops, by the contracts
// `tensor_*` of contracts/gpu/cuda.yaml (CudaGpu.*: a visible skip without a device; run on the H200).
#include <gtest/gtest.h>

#include "support/device_ops_cases.h"
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

}  // namespace
}  // namespace trueno::cuda
