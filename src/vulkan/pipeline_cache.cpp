// The on-disk pipeline cache (Note [Vulkan pipeline cache]).
//
// Note [Vulkan pipeline cache]
// Building a pipeline compiles SPIR-V to the device's code (lavapipe: LLVM, tens of milliseconds per
// pipeline; a GPU driver: similar). Each Context keeps a VkPipelineCache, loaded at open from
//   <dir>/<vendorID>-<deviceID>-<key>.vkpc,  key = hash(pipelineCacheUUID, driverVersion, shaders_identity())
// and written back (to a temporary file, then renamed: concurrent writers leave one whole file) when the
// context built pipelines. <dir> is default_cache_dir(): TRUENO_VULKAN_CACHE ("off" turns the cache off),
// else $XDG_CACHE_HOME/trueno/vulkan, else $HOME/.cache/trueno/vulkan (as the cubin cache, nvrtc.cpp).
// A file is: our header (magic "TRNVKPC1", payload size, FNV-1a hash of the payload) and the driver's data,
// whose own header (VkPipelineCacheHeaderVersionOne) must name this device's vendor, device and
// pipelineCacheUUID. A file that fails any check (truncated, flipped bits, another device) is logged as
// corrupt, not given to the driver, and rewritten once the context has built its pipelines again.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <vector>

#include "core/strings.h"
#include "trueno/log.h"
#include "trueno/vulkan/context.h"

namespace trueno::vulkan {
namespace {

constexpr char kMagic[8] = {'T', 'R', 'N', 'V', 'K', 'P', 'C', '1'};

struct Header {
  char magic[8];
  std::uint64_t size, payload_hash;
};

std::uint64_t fnv1a(const void* p, std::size_t n, std::uint64_t h = 1469598103934665603ull) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

std::string hex(std::uint64_t v, int width = 16) {
  std::ostringstream os;
  os << std::hex << std::setw(width) << std::setfill('0') << v;
  return os.str();
}

// Why `bytes` is not a valid entry for device `d`, or "" when it is; *payload receives the driver's data.
std::string validate(const std::vector<char>& bytes, const DeviceInfo& d, std::vector<char>* payload) {
  if (bytes.size() < sizeof(Header)) return strcat("file of ", bytes.size(), " bytes, shorter than its header");
  Header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return "bad magic";
  if (h.size != bytes.size() - sizeof(Header)) return strcat("payload of ", bytes.size() - sizeof(Header), " bytes, header says ", h.size);
  if (fnv1a(bytes.data() + sizeof(Header), h.size) != h.payload_hash) return "payload hash mismatch";
  VkPipelineCacheHeaderVersionOne vh{};
  if (h.size < sizeof vh) return "driver data shorter than its header";
  std::memcpy(&vh, bytes.data() + sizeof(Header), sizeof vh);
  if (vh.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE || vh.headerSize < sizeof vh || vh.headerSize > h.size)
    return "bad Vulkan pipeline cache header";
  if (vh.vendorID != d.vendor_id || vh.deviceID != d.device_id || std::memcmp(vh.pipelineCacheUUID, d.pipeline_cache_uuid, VK_UUID_SIZE) != 0)
    return "written for another device or driver";
  payload->assign(bytes.begin() + sizeof(Header), bytes.end());
  return {};
}

}  // namespace

std::string default_cache_dir() {
  if (const char* c = std::getenv("TRUENO_VULKAN_CACHE"); c != nullptr && *c != '\0')
    return std::string_view(c) == "off" ? std::string{} : std::string(c);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return strcat(x, "/trueno/vulkan");
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return strcat(h, "/.cache/trueno/vulkan");
  return {};
}

void Context::load_cache() {
  const Api& a = *api_;
  const std::string dir = default_cache_dir();
  std::vector<char> payload;
  if (!dir.empty()) {
    std::uint64_t key = fnv1a(info_.pipeline_cache_uuid, VK_UUID_SIZE);
    key = fnv1a(&info_.driver_version, sizeof info_.driver_version, key);
    const std::string ids = shaders_identity();
    key = fnv1a(ids.data(), ids.size(), key);
    cache_path_ = strcat(dir, '/', hex(info_.vendor_id, 4), '-', hex(info_.device_id, 4), '-', hex(key), ".vkpc");
    std::ifstream f(cache_path_, std::ios::binary);
    if (f) {
      const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      cache_rejected_ = validate(bytes, info_, &payload);
      if (cache_rejected_.empty()) {
        cache_loaded_ = true;
        log(LogLevel::Info, strcat("Vulkan pipeline cache hit ", cache_path_));
      } else {
        payload.clear();
        log(LogLevel::Warn, strcat("Vulkan pipeline cache: corrupt entry ", cache_path_, " (", cache_rejected_, "): rebuilding"));
        cache_dirty_ = true;  // rewritten even if no new pipeline is built
      }
    }
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = payload.size();
  ci.pInitialData = payload.empty() ? nullptr : payload.data();
  if (a.vkCreatePipelineCache(device_, &ci, nullptr, &cache_) != VK_SUCCESS) {
    // The driver refused the data after all: start empty.
    cache_loaded_ = false;
    cache_rejected_ = "the driver refused the data";
    ci.initialDataSize = 0, ci.pInitialData = nullptr;
    check(a.vkCreatePipelineCache(device_, &ci, nullptr, &cache_), "vkCreatePipelineCache");
  }
}

void Context::save_cache() {
  std::lock_guard lock(mu_);
  if (cache_path_.empty() || cache_ == VK_NULL_HANDLE) return;
  const Api& a = *api_;
  std::size_t n = 0;
  check(a.vkGetPipelineCacheData(device_, cache_, &n, nullptr), "vkGetPipelineCacheData");
  std::vector<char> data(n);
  if (n > 0) check(a.vkGetPipelineCacheData(device_, cache_, &n, data.data()), "vkGetPipelineCacheData");
  data.resize(n);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.size = n;
  h.payload_hash = fnv1a(data.data(), n);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(cache_path_).parent_path(), ec);
  const std::string tmp = strcat(cache_path_, ".tmp.", ::getpid(), '.', reinterpret_cast<std::uintptr_t>(this));
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    f.write(data.data(), static_cast<std::streamsize>(n));
    if (!f) {
      log(LogLevel::Warn, strcat("Vulkan pipeline cache: cannot write ", tmp, " (continuing without caching)"));
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, cache_path_, ec);
  if (ec) {
    log(LogLevel::Warn, strcat("Vulkan pipeline cache: cannot rename ", tmp, " to ", cache_path_, ": ", ec.message()));
    std::filesystem::remove(tmp, ec);
    return;
  }
  cache_dirty_ = false;
}

}  // namespace trueno::vulkan
