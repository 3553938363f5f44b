// dlopen + symbol tables for the CUDA driver and NVRTC (Note in loader.h).
#include "trueno/cuda/loader.h"

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
  } else if constexpr (std::is_same_v<Table, Nvrtc>) {
    TRUENO_NVRTC_FUNCTIONS(TRUENO_RESOLVE)
  } else if constexpr (std::is_same_v<Table, Cublas>) {
    TRUENO_CUBLAS_FUNCTIONS(TRUENO_RESOLVE)
  } else {
    TRUENO_CUBLASLT_FUNCTIONS(TRUENO_RESOLVE)
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
  Cublas cublas;
  bool cublas_ok = false;
  std::string cublas_why;
  CublasLt cublaslt;
  bool cublaslt_ok = false;
  std::string cublaslt_why;
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

// $env when set, else each name on the library path, then in $CUDA_HOME/lib64 and /usr/local/cuda/lib64.
std::vector<std::string> library_candidates(const char* env, std::initializer_list<const char*> names) {
  if (const char* p = std::getenv(env); p != nullptr && *p != '\0') return {p};
  std::vector<std::string> v(names.begin(), names.end()), dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') dirs.push_back(strcat(home, "/lib64/"));
  dirs.emplace_back("/usr/local/cuda/lib64/");
  for (const auto& d : dirs)
    for (const char* n : names)
      if (std::find(v.begin(), v.end(), d + n) == v.end()) v.push_back(d + n);
  return v;
}

// Opens the first candidate that loads; *tried lists the others.
void* open_first(const std::vector<std::string>& candidates, std::string* path, std::string* tried) {
  for (const auto& c : candidates) {
    if (void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      *path = c;
      return lib;
    }
    *tried += (tried->empty() ? "" : ", ") + c;
  }
  return nullptr;
}

// Opens the first library of `names` (or $env) and resolves `table` from it; "" or why not. `what` names
// the library in messages ("NVRTC", "cuBLAS").
template <class Table>
std::string open_table(Table& table, const char* what, const char* env, std::initializer_list<const char*> names) {
  std::string path, tried;
  void* lib = open_first(library_candidates(env, names), &path, &tried);
  if (lib == nullptr) return strcat(what, " not found (tried ", tried, "; set ", env, "=/path/to/", *names.begin(), ")");
  std::string why = resolve_all(lib, table, path.c_str());
  if (why.empty()) table.library = path;
  return why;
}

Loaded& load_nvrtc() {
  static std::once_flag once;
  Loaded& l = state();  // NVRTC does not need the driver: kernels compile on machines without a GPU
  std::call_once(once, [&l] {
    l.nvrtc_why = open_table(l.nvrtc, "NVRTC", "TRUENO_NVRTC", {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"});
    if (!l.nvrtc_why.empty()) return;
    l.nvrtc.version(&l.nvrtc.major, &l.nvrtc.minor);
    l.nvrtc_ok = true;
  });
  return l;
}

Loaded& load_cublas() {
  static std::once_flag once;
  Loaded& l = state();
  std::call_once(once, [&l] {
    l.cublas_why = open_table(l.cublas, "cuBLAS", "TRUENO_CUBLAS", {"libcublas.so", "libcublas.so.13", "libcublas.so.12", "libcublas.so.11"});
    if (!l.cublas_why.empty()) return;
    for (int p = 0; p < 3; ++p) l.cublas.get_property(p, p == 0 ? &l.cublas.major : p == 1 ? &l.cublas.minor : &l.cublas.patch);
    l.cublas_ok = true;
  });
  return l;
}

Loaded& load_cublaslt() {
  static std::once_flag once;
  Loaded& l = state();
  std::call_once(once, [&l] {
    l.cublaslt_why = open_table(l.cublaslt, "cuBLASLt", "TRUENO_CUBLASLT",
                                {"libcublasLt.so", "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"});
    l.cublaslt_ok = l.cublaslt_why.empty();
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

const Cublas* cublas(std::string* why) {
  Loaded& l = load_cublas();
  if (!l.cublas_ok && why != nullptr) *why = l.cublas_why;
  return l.cublas_ok ? &l.cublas : nullptr;
}

const CublasLt* cublaslt(std::string* why) {
  Loaded& l = load_cublaslt();
  if (!l.cublaslt_ok && why != nullptr) *why = l.cublaslt_why;
  return l.cublaslt_ok ? &l.cublaslt : nullptr;
}

void check_cublas(api::cublasStatus s, const char* call) {
  if (s == 0) return;
  static const std::pair<int, const char*> kNames[] = {
      {1, "NOT_INITIALIZED"}, {3, "ALLOC_FAILED"},     {7, "INVALID_VALUE"},   {8, "ARCH_MISMATCH"},  {11, "MAPPING_ERROR"},
      {13, "EXECUTION_FAILED"}, {14, "INTERNAL_ERROR"}, {15, "NOT_SUPPORTED"}, {16, "LICENSE_ERROR"}};
  std::string name = strcat("status ", s);
  for (const auto& [code, n] : kNames)
    if (code == s) name = strcat("CUBLAS_STATUS_", n);
  const Cublas* c = cublas();
  throw CudaError(strcat(call, ": ", name, " (", c ? c->status_string(s) : "cuBLAS error", ")"), s);
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
