// NCCL's loader (nccl.h): a reason naming the fix when libnccl.so.2 is absent, the version when present.
// Neither needs a GPU; one of the two skips visibly on any machine.
#include <gtest/gtest.h>

#include <cstdlib>

#include "trueno/comm.h"
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

}  // namespace
}  // namespace trueno::cuda
