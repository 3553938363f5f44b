// dlopen + symbol tables for the CUDA driver and NVRTC (Note in loader.h).
#include "cuda/loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/strings.h"

namespace trueno::cuda {
namespace {

// Resolves "a|b" as the first of the names the library exports.
void* symbol(void* lib, std::string_view names) {
  while (!names.empty()) {
    const std::size_t bar = names.find('|');
    const std::string one(names.substr(0, bar));
    if (void* p = dlsym(lib, one.c_str())) return p;
    names = bar == std::string_view::npos ? std::string_view{} : names.substr(bar + 1);
  }
  return nullptr;
}

template <class Table>
std::string resolve_all(void* lib, Table& t, const char* library) {
  std::string missing;
#define TRUENO_RESOLVE(ret, member, sym, params)                               \
  t.member = reinterpret_cast<decltype(t.member)>(symbol(lib, sym));           \
  if (t.member == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(sym);
  if constexpr (std::is_same_v<Table, Driver>) {
    TRUENO_CUDA_DRIVER_FUNCTIONS(TRUENO_RESOLVE)
  } else {
    TRUENO_NVRTC_FUNCTIONS(TRUENO_RESOLVE)
  }
#undef TRUENO_RESOLVE
  return missing.empty() ? std::string{} : strcat(library, " lacks ", missing, " (driver too old?)");
}

struct Loaded {
  Driver driver;
  bool driver_ok = false;
  std::string driver_why;
  Nvrtc nvrtc;
  bool nvrtc_ok = false;
  std::string nvrtc_why;
};

Loaded& state() {
  static Loaded l;
  return l;
}

Loaded& load_driver() {
  static std::once_flag once;
  Loaded& l = state();
  std::call_once(once, [&l] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = dlerror();
      l.driver_why = strcat("no NVIDIA driver: ", e ? e : "libcuda.so.1 not found");
      return;
    }
    l.driver_why = resolve_all(lib, l.driver, "libcuda.so.1");
    if (!l.driver_why.empty()) return;
    const api::CUresult r = l.driver.init(0);
    if (r != api::kSuccess) {
      const char* name = nullptr;
      l.driver.error_name(r, &name);
      l.driver_why = r == api::kErrorNoDevice ? std::string("no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)")
                                               : strcat("cuInit failed: ", name ? name : "error ", name ? "" : std::to_string(r));
      return;
    }
    l.driver_ok = true;
  });
  return l;
}

std::vector<std::string> nvrtc_candidates() {
  std::vector<std::string> v;
  if (const char* p = std::getenv("TRUENO_NVRTC"); p != nullptr && *p != '\0') return {p};
  const char* names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"};
  for (const char* n : names) v.emplace_back(n);
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') dirs.push_back(strcat(home, "/lib64/"));
  dirs.emplace_back("/usr/local/cuda/lib64/");
  for (const auto& d : dirs)
    for (const char* n : names)
      if (std::find(v.begin(), v.end(), d + n) == v.end()) v.push_back(d + n);
  return v;
}

Loaded& load_nvrtc() {
  static std::once_flag once;
  Loaded& l = state();  // NVRTC does not need the driver: kernels compile on machines without a GPU
  std::call_once(once, [&l] {
    std::string tried;
    for (const auto& path : nvrtc_candidates()) {
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) {
        tried += (tried.empty() ? "" : ", ") + path;
        continue;
      }
      l.nvrtc_why = resolve_all(lib, l.nvrtc, path.c_str());
      if (!l.nvrtc_why.empty()) return;
      l.nvrtc.library = path;
      l.nvrtc.version(&l.nvrtc.major, &l.nvrtc.minor);
      l.nvrtc_ok = true;
      return;
    }
    l.nvrtc_why = strcat("NVRTC not found (tried ", tried, "; set TRUENO_NVRTC=/path/to/libnvrtc.so)");
  });
  return l;
}

}  // namespace

const Driver* driver(std::string* why) {
  Loaded& l = load_driver();
  if (!l.driver_ok && why != nullptr) *why = l.driver_why;
  return l.driver_ok ? &l.driver : nullptr;
}

const Nvrtc* nvrtc(std::string* why) {
  Loaded& l = load_nvrtc();
  if (!l.nvrtc_ok && why != nullptr) *why = l.nvrtc_why;
  return l.nvrtc_ok ? &l.nvrtc : nullptr;
}

void check(api::CUresult r, const char* call) {
  if (r == api::kSuccess) return;
  const char* name = nullptr;
  const char* text = nullptr;
  if (const Driver* d = driver()) {
    d->error_name(r, &name);
    d->error_string(r, &text);
  }
  throw CudaError(strcat(call, ": ", name ? name : "CUDA error", " (", text ? text : std::to_string(r), ")"), r);
}

void check_nvrtc(api::nvrtcResult r, const char* call) {
  if (r == 0) return;
  const Nvrtc* n = nvrtc();
  throw CudaError(strcat(call, ": ", n ? n->error_string(r) : "NVRTC error", " (", r, ")"), r);
}

}  // namespace trueno::cuda
