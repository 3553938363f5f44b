// Backend names, detection, forcing and its errors.
#include <gtest/gtest.h>

#include <algorithm>

#include "trueno/trueno.h"

namespace trueno {
namespace {

TEST(Backend, NamesRoundTrip) {
  for (Backend b : kAllBackends) EXPECT_EQ(parse_backend(name(b)), b);
  EXPECT_EQ(parse_backend("AVX2"), Backend::AVX2);
  EXPECT_EQ(parse_backend("avx-512"), Backend::AVX512);
}

TEST(Backend, UnknownNameListsTheValidOnes) {
  try {
    parse_backend("avx3");
    FAIL() << "no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 'avx3'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("avx2"), std::string::npos) << e.what();
  }
}

TEST(Backend, ReportCoversEveryBackendWithAReason) {
  const auto report = backend_report();
  ASSERT_EQ(report.size(), std::size(kAllBackends));
  for (const auto& s : report) EXPECT_FALSE(s.reason.empty()) << name(s.backend);
  EXPECT_TRUE(is_available(Backend::Scalar));
#if defined(__wasm__)
  EXPECT_TRUE(is_available(Backend::WasmSIMD));  // Note [WASM SIMD availability] (core/backend.cpp)
#else
  EXPECT_FALSE(is_available(Backend::WasmSIMD));
#endif
}

TEST(Backend, BestIsAvailableAndTheWidest) {
  const Backend b = best();
  EXPECT_TRUE(is_available(b));
  const auto av = available();
  EXPECT_NE(std::find(av.begin(), av.end(), b), av.end());
#if defined(__x86_64__)
  if (is_available(Backend::AVX512)) {
    EXPECT_EQ(b, Backend::AVX512);
  } else if (is_available(Backend::AVX2)) {
    EXPECT_EQ(b, Backend::AVX2);
  }
  EXPECT_TRUE(is_available(Backend::SSE2));  // part of x86-64
  EXPECT_FALSE(is_available(Backend::NEON));
#elif defined(__aarch64__)
  EXPECT_EQ(b, Backend::NEON);
  EXPECT_FALSE(is_available(Backend::AVX2));
#elif defined(__wasm__)
  EXPECT_EQ(b, Backend::WasmSIMD);
  EXPECT_FALSE(is_available(Backend::SSE2));
#endif
}

TEST(Backend, TiersAreNested) {
  // A CPU with a tier has every lower x86 tier (AVX2 implies AVX implies SSE2).
  if (is_available(Backend::AVX512)) {
    EXPECT_TRUE(is_available(Backend::AVX2));
  }
  if (is_available(Backend::AVX2)) {
    EXPECT_TRUE(is_available(Backend::AVX));
  }
  if (is_available(Backend::AVX)) {
    EXPECT_TRUE(is_available(Backend::SSE2));
  }
}

TEST(Backend, ForcingAnUnavailableBackendNamesItAndTheMissingFeature) {
  for (const auto& s : backend_report()) {
    if (s.available) continue;
    try {
      set_backend(s.backend);
      FAIL() << "forcing " << name(s.backend) << " did not throw";
    } catch (const BackendUnavailable& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::string(name(s.backend))), std::string::npos) << msg;
      EXPECT_NE(msg.find(s.reason), std::string::npos) << msg;
    }
    EXPECT_THROW(ops::sum(std::vector<float>{1.0f}, s.backend), BackendUnavailable);
  }
}

TEST(Backend, GlobalAndScopedForcing) {
  const Backend before = current_backend();
  {
    ScopedBackend scope(Backend::Scalar);
    EXPECT_EQ(current_backend(), Backend::Scalar);
    {
      ScopedBackend inner(best());
      EXPECT_EQ(current_backend(), best());
    }
    EXPECT_EQ(current_backend(), Backend::Scalar);
  }
  EXPECT_EQ(current_backend(), before);
  set_backend(Backend::Scalar);
  EXPECT_EQ(resolve(std::nullopt), Backend::Scalar);
  EXPECT_EQ(resolve(best()), best());
  reset_backend();
  EXPECT_EQ(current_backend(), before);
}

}  // namespace
}  // namespace trueno
