// Automatic device choice (trueno/offload.h) without needing a device: the policy and its environment
// variable, forcing conflicts, the cache file, and that a device automatic choice excludes (lavapipe in
// CI) is listed as never chosen and never picked, whatever the size.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "api/crossover.h"
#include "trueno/error.h"
#include "trueno/matrix.h"
#include "trueno/offload.h"

namespace trueno {
namespace {

// Sets an environment variable for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1); else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Offload, PolicyFollowsTheEnvironmentUnlessSet) {
  {
    ScopedEnv e("TRUENO_OFFLOAD", "off");
    EXPECT_EQ(current_offload().mode, Offload::Mode::Never);
    EXPECT_EQ(choose_device(DeviceOp::Matmul, 1u << 20), std::nullopt);
    set_offload(Offload::automatic());
    EXPECT_EQ(current_offload().mode, Offload::Mode::Auto);
    reset_offload();
  }
  {
    ScopedEnv e("TRUENO_OFFLOAD", "bogus");
    try {
      current_offload();
      ADD_FAILURE() << "TRUENO_OFFLOAD=bogus accepted";
    } catch (const InvalidArgument& ex) {
      EXPECT_NE(std::string(ex.what()).find("auto, off, or a device"), std::string::npos) << ex.what();
    }
  }
  {
    ScopedEnv e("TRUENO_OFFLOAD", "auto");
    EXPECT_EQ(current_offload().mode, Offload::Mode::Auto);
  }
  EXPECT_THROW(set_offload(Offload::to(Device{DeviceKind::WebGPU, 0})), BackendUnavailable);
}

TEST(Offload, ACpuTierForcedOnAnOperandKeepsTheProductOnTheCpu) {
  EXPECT_EQ(choose_device(DeviceOp::Matmul, 1u << 20, std::nullopt, /*cpu_forced=*/true), std::nullopt);
  set_offload(Offload::never());
  EXPECT_EQ(choose_device(DeviceOp::Matmul, 1u << 20), std::nullopt);
  reset_offload();
  EXPECT_THROW(choose_device(DeviceOp::Matmul, 8, Device{DeviceKind::WebGPU, 0}), BackendUnavailable);
  Matrix a(2, 2, 1.0f);
  EXPECT_THROW(a.on(Device{DeviceKind::WebGPU, 0}), BackendUnavailable);
}

// Every available device that automatic choice excludes (DeviceStatus::automatic false: lavapipe in CI)
// is in the table as never chosen, unmeasured, and is not picked for any size.
TEST(Offload, ADeviceThatIsNotAutomaticIsNeverChosen) {
  ScopedEnv cache("TRUENO_CROSSOVER_CACHE", "off");
  const std::vector<Crossover> table = crossover_table();
  std::size_t excluded = 0;
  for (const DeviceStatus& s : device_report()) {
    if (!s.available || s.automatic) continue;
    ++excluded;
    bool listed = false;
    for (const Crossover& c : table) {
      if (!(c.device == s.device)) continue;
      listed = true;
      EXPECT_FALSE(c.automatic) << c.device.str();
      EXPECT_EQ(c.min_size, 0u) << c.device.str();
      EXPECT_NE(c.detail.find("never chosen automatically"), std::string::npos) << c.detail;
    }
    EXPECT_TRUE(listed) << s.device.str() << " is missing from the crossover table";
    for (std::size_t n : {std::size_t{64}, std::size_t{4096}, std::size_t{1} << 20})
      EXPECT_NE(choose_device(DeviceOp::Matmul, n), std::optional<Device>(s.device)) << s.device.str() << " chosen at n=" << n;
  }
  std::printf("%zu available device(s) excluded from automatic choice\n", excluded);
  // A Matrix product then stays on the CPU tier here (it would be correct elsewhere too; this checks it runs).
  const Matrix c = Matrix::matmul(Matrix(3, 4, 1.0f), Matrix(4, 2, 2.0f));
  EXPECT_EQ(c(2, 1), 8.0f);
}

TEST(Offload, CacheFileRoundTripsThroughATemporaryName) {
  // One folder per process: ctest runs this test alone and inside the qemu suites at the same time.
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / ("trueno_offload_test." + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "sub" / "crossover.tsv").string();
  const std::vector<detail::CachedCrossover> in = {
      {{Device{DeviceKind::CUDA, 0}, DeviceOp::Matmul, true, 512, "n=128: cpu 0.1 ms, device 0.3 ms\twith a tab"}, "00ff"},
      {{Device{DeviceKind::CUDA, 1}, DeviceOp::Matmul, false, 0, "never won"}, "abcd"}};
  ASSERT_TRUE(detail::write_crossover_cache(path, in));
  for (const auto& e : std::filesystem::directory_iterator(dir / "sub"))
    EXPECT_EQ(e.path().filename(), "crossover.tsv") << "left behind: " << e.path();
  std::FILE* f = std::fopen(path.c_str(), "a");
  ASSERT_NE(f, nullptr);
  std::fputs("garbage line\ncuda:2\tmatmul\t1\tnot-a-number\tkey\tx\n", f);
  std::fclose(f);
  const auto out = detail::read_crossover_cache(path);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].entry.device, (Device{DeviceKind::CUDA, 0}));
  EXPECT_TRUE(out[0].entry.automatic);
  EXPECT_EQ(out[0].entry.min_size, 512u);
  EXPECT_EQ(out[0].entry.detail, "n=128: cpu 0.1 ms, device 0.3 ms with a tab");
  EXPECT_EQ(out[0].key, "00ff");
  EXPECT_FALSE(out[1].entry.automatic);
  EXPECT_TRUE(detail::read_crossover_cache((dir / "missing.tsv").string()).empty());
  std::filesystem::remove_all(dir);
}

TEST(Offload, OperandsForcedToTwoPlacesAreRefused) {
  for (const DeviceStatus& s : device_report()) {
    if (!s.available || s.detail.find("fake device") != std::string::npos) continue;
    Matrix a(2, 2, 1.0f), b(2, 2, 1.0f);
    a.on(s.device);
    b.on(Backend::Scalar);
    EXPECT_THROW(Matrix::matmul(a, b), InvalidArgument) << s.device.str();
    return;
  }
  GTEST_SKIP() << "skipped: no available device to force an operand onto";
}

}  // namespace
}  // namespace trueno
