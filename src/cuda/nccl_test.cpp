// NCCL's loader (nccl.h): a reason naming the fix when libnccl.so.2 is absent, the version when present.
// Neither needs a GPU; one of the two skips visibly on any machine. Then a group over two GPUs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <future>
#include <thread>

#include "trueno/comm.h"
#include "trueno/cuda/context.h"
#include "trueno/cuda/nccl.h"
#include "trueno/error.h"

namespace trueno::cuda {
namespace {

TEST(CudaNcclLoader, SaysWhyWhenAbsent) {
  std::string why;
  if (const Nccl* n = nccl(&why)) GTEST_SKIP() << "skipped: NCCL is present here (" << n->library << ")";
  const char* env = std::getenv("TRUENO_NCCL");
  EXPECT_NE(why.find(env && *env ? env : "libnccl.so.2"), std::string::npos) << why;
  EXPECT_NE(why.find("TRUENO_NCCL="), std::string::npos) << why;
  const CollectiveStatus s = multi_device_status();
  EXPECT_FALSE(s.available);
  EXPECT_EQ(s.detail, why);
  EXPECT_THROW(nccl_unique_id(), BackendUnavailable);
}

TEST(CudaNcclLoader, LoadsWhenPresent) {
  std::string why;
  const Nccl* n = nccl(&why);
  if (n == nullptr) GTEST_SKIP() << "skipped: no NCCL: " << why;
  EXPECT_EQ(n->major, 2);
  const CollectiveStatus s = multi_device_status();
  EXPECT_TRUE(s.available);
  EXPECT_NE(s.detail.find("NCCL 2."), std::string::npos) << s.detail;
  std::printf("%s\n", s.detail.c_str());
}

// The NCCL communicator on real devices: one rank per GPU, as threads of this process, the id through
// the TCP bootstrap (the path separate processes and hosts take). Needs 2 CUDA devices and NCCL.
TEST(CudaGpuNccl, AllReduceAndAllGatherAcrossTwoDevices) {
  std::string why;
  const int devices = device_count(&why);
  if (devices < 2) GTEST_SKIP() << "skipped: needs 2 CUDA devices, " << devices << " here" << (why.empty() ? "" : ": " + why);
  if (nccl(&why) == nullptr) GTEST_SKIP() << "skipped: no NCCL: " << why;
  constexpr std::size_t kN = 4099;  // not a multiple of anything NCCL chunks by
  std::promise<int> port;
  std::shared_future<int> known = port.get_future().share();
  std::vector<std::vector<float>> sums(2), gathered(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      try {
        auto ctx = Context::open(r);
        ctx->make_current();
        BootstrapOptions o;
        o.rank = r, o.world_size = 2, o.port = 0, o.timeout_s = 60;
        if (r == 0) o.on_listen = [&](int p) { port.set_value(p); };
        else o.port = known.get();
        auto comm = nccl_join(o, ctx->stream());
        std::vector<float> x(kN);
        for (std::size_t i = 0; i < kN; ++i) x[i] = static_cast<float>(r + 1) * 0.25f * static_cast<float>(i % 97);
        DeviceBuffer a(*ctx, kN * 4), g(*ctx, 2 * kN * 4);
        a.upload(x.data(), kN * 4);
        comm->all_gather(reinterpret_cast<const float*>(a.ptr()), reinterpret_cast<float*>(g.ptr()), kN);
        comm->all_reduce_sum(reinterpret_cast<float*>(a.ptr()), kN);
        ctx->synchronize();
        sums[r].resize(kN), gathered[r].resize(2 * kN);
        a.download(sums[r].data(), kN * 4), g.download(gathered[r].data(), 2 * kN * 4);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : ranks) t.join();
  ASSERT_EQ(errors[0] + errors[1], "");
  for (int r = 0; r < 2; ++r)
    for (std::size_t i = 0; i < kN; ++i) {
      const float v = 0.25f * static_cast<float>(i % 97);
      ASSERT_EQ(sums[r][i], v + 2 * v) << "rank " << r << " element " << i;  // two addends: exact in any order
      ASSERT_EQ(gathered[r][i], v);
      ASSERT_EQ(gathered[r][kN + i], 2 * v);
    }
}

}  // namespace
}  // namespace trueno::cuda
