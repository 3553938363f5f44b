// Devices (trueno/device.h): names, the backend list's report, and the CPU op API's independence from them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "trueno/trueno.h"
#include "trueno/device.h"

namespace trueno {
namespace {

bool fake_requested() { return std::getenv("TRUENO_FAKE_DEVICE") != nullptr; }

TEST(Device, NamesParseWithAndWithoutIndex) {
  for (DeviceKind k : kAllDeviceKinds) {
    const auto d = parse_device(name(k));
    ASSERT_TRUE(d.has_value()) << name(k);
    EXPECT_EQ(*d, (Device{k, 0}));
    EXPECT_EQ(parse_device(std::string(name(k)) + ":3"), (Device{k, 3}));
  }
  EXPECT_EQ(parse_device("CUDA:1"), (Device{DeviceKind::CUDA, 1}));
  EXPECT_EQ((Device{DeviceKind::Vulkan, 2}).str(), "vulkan:2");
  EXPECT_FALSE(parse_device("avx2").has_value());  // a CPU tier is not a device
  EXPECT_FALSE(parse_device("bogus").has_value());
  for (const char* bad : {"cuda:", "cuda:x", "cuda:-1", "cuda:1x"}) {
    try {
      parse_device(bad);
      ADD_FAILURE() << bad << " parsed";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(Device, ACpuBackendIsNeverADevice) {
  // The CPU op API takes tiers only: a device name is refused with a pointer to where devices go.
  try {
    parse_backend("cuda");
    FAIL() << "parse_backend accepted a device";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("is a device, not a CPU backend"), std::string::npos) << e.what();
  }
  for (const auto& s : backend_report()) EXPECT_FALSE(parse_device(name(s.backend)).has_value()) << name(s.backend);
}

TEST(Device, ReportCoversEveryKindInListOrderWithADetail) {
  const auto report = device_report();
  ASSERT_FALSE(report.empty());
  std::size_t next_kind = 0;
  for (const auto& s : report) {
    EXPECT_FALSE(s.detail.empty()) << s.device.str();
    while (next_kind < std::size(kAllDeviceKinds) && kAllDeviceKinds[next_kind] != s.device.kind) ++next_kind;
    EXPECT_LT(next_kind, std::size(kAllDeviceKinds)) << s.device.str() << " out of the list's order";
    const bool fake = s.detail.find("fake device") != std::string::npos;
    if (!built(s.device.kind) && !fake) {  // Note [Fake device]: a fake one may stand for an unbuilt kind
      EXPECT_FALSE(s.available) << s.device.str();
      EXPECT_NE(s.detail.find("not built"), std::string::npos) << s.detail;
    }
  }
  for (DeviceKind k : kAllDeviceKinds) {
    bool listed = false;
    for (const auto& s : report) listed |= s.device.kind == k;
    EXPECT_TRUE(listed) << name(k) << " missing from the report";
  }
}

TEST(Device, AnAbsentDeviceIsAnErrorNamingIt) {
  const Device far{DeviceKind::CUDA, 99};
  EXPECT_FALSE(is_available(far));
  try {
    require_available(far);
    FAIL() << "cuda:99 is available?";
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:99"), std::string::npos) << e.what();
  }
}

// Note [Fake device]: the suite's second run registers one; this checks the registration took, so that run
// is not silently the same as the first.
TEST(Device, FakeDeviceIsListedWhenRequested) {
  if (!fake_requested()) GTEST_SKIP() << "skipped: TRUENO_FAKE_DEVICE is not set (the fake-device run sets it)";
  const auto kind = parse_device(std::getenv("TRUENO_FAKE_DEVICE"));
  ASSERT_TRUE(kind.has_value());
  bool found = false;
  for (const auto& s : device_report())
    found |= s.available && s.device.kind == kind->kind && s.detail.find("fake") != std::string::npos;
  EXPECT_TRUE(found);
  EXPECT_FALSE(available_devices().empty());
}

}  // namespace
}  // namespace trueno
