// Backend names, availability (with reasons) and the global/forced choice.
#include "trueno/backend.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "core/cpu_features.h"
#include "core/strings.h"
#include "trueno/device.h"
#include "trueno/error.h"

namespace trueno {
namespace {

constexpr std::string_view kNames[] = {"scalar", "sse2", "avx", "avx2", "avx512", "neon", "wasm-simd"};

#if defined(__x86_64__)
constexpr const char* kArch = "x86-64";
#elif defined(__aarch64__)
constexpr const char* kArch = "aarch64";
#elif defined(__wasm__)
constexpr const char* kArch = "WebAssembly";
#else
constexpr const char* kArch = "this architecture";
#endif

#if defined(__x86_64__)
// Missing features for an x86 tier, as "CPU lacks X (CPUID...)" / "OS does not save Y" phrases.
std::string x86_missing(Backend b) {
  const auto& f = detail::cpu_features();
  std::string miss;
  auto need = [&](bool ok, const char* what) {
    if (!ok) miss += (miss.empty() ? "" : "; ") + std::string(what);
  };
  need(f.sse2, "CPU lacks SSE2 (CPUID.1:EDX[26])");
  if (b == Backend::SSE2) return miss;
  need(f.avx, "CPU lacks AVX (CPUID.1:ECX[28])");
  need(f.osxsave, "OS has not enabled XSAVE (CPUID.1:ECX[27])");
  need(!f.osxsave || f.os_ymm, "OS does not save YMM state (XCR0[2:1] clear)");
  if (b == Backend::AVX) return miss;
  need(f.avx2, "CPU lacks AVX2 (CPUID.7:EBX[5])");
  need(f.fma, "CPU lacks FMA (CPUID.1:ECX[12])");
  need(f.f16c, "CPU lacks F16C (CPUID.1:ECX[29])");
  if (b == Backend::AVX2) return miss;
  need(f.avx512f, "CPU lacks AVX512F (CPUID.7:EBX[16])");
  need(f.avx512bw, "CPU lacks AVX512BW (CPUID.7:EBX[30])");
  need(f.avx512dq, "CPU lacks AVX512DQ (CPUID.7:EBX[17])");
  need(f.avx512vl, "CPU lacks AVX512VL (CPUID.7:EBX[31])");
  need(!f.osxsave || f.os_zmm, "OS does not save ZMM/opmask state (XCR0[7:5] clear)");
  return miss;
}
#endif

BackendStatus status_of(Backend b) {
  const auto& f = detail::cpu_features();
  switch (b) {
    case Backend::Scalar:
      return {b, true, "portable reference kernels"};
    case Backend::SSE2:
    case Backend::AVX:
    case Backend::AVX2:
    case Backend::AVX512: {
#if defined(__x86_64__)
      std::string miss = x86_missing(b);
      if (miss.empty()) return {b, true, f.brand.empty() ? "x86-64 CPU" : f.brand};
      return {b, false, miss};
#else
      return {b, false, strcat("not an x86-64 CPU (this build is for ", kArch, ")")};
#endif
    }
    case Backend::NEON:
#if defined(__aarch64__)
      return {b, f.neon, f.neon_dotprod ? "AArch64 Advanced SIMD, dotprod" : "AArch64 Advanced SIMD"};
#else
      return {b, false, strcat("not an AArch64 CPU (this build is for ", kArch, ")")};
#endif
    case Backend::WasmSIMD:
#if defined(__wasm__)
      // Note [WASM SIMD availability]: WebAssembly has no run-time feature test. A module holding any
      // SIMD128 instruction fails validation on an engine without it, so a module that runs has it.
      // The tier's files are compiled with -msimd128 (cmake/TruenoKernels.cmake).
      (void)f;
      return {b, true, "WebAssembly SIMD128 (compiled in; the engine validated it)"};
#else
      return {b, false, strcat("only in a WebAssembly build (this build is native ", kArch, ")")};
#endif
  }
  return {b, false, "unknown backend"};
}

const std::vector<BackendStatus>& report() {
  static const std::vector<BackendStatus> r = [] {
    std::vector<BackendStatus> v;
    for (Backend b : kAllBackends) v.push_back(status_of(b));
    return v;
  }();
  return r;
}

std::atomic<int> g_forced{-1};

std::optional<Backend> env_backend() {
  static const std::optional<Backend> env = []() -> std::optional<Backend> {
    const char* s = std::getenv("TRUENO_BACKEND");
    if (s == nullptr || *s == '\0') return std::nullopt;
    try {
      return parse_backend(s);
    } catch (const InvalidArgument& e) {  // the message names the variable, not just the value
      throw InvalidArgument(strcat("TRUENO_BACKEND=", s, ": ", e.what()));
    }
  }();
  return env;
}

}  // namespace

std::string_view name(Backend b) { return kNames[static_cast<int>(b)]; }

Backend parse_backend(std::string_view text) {
  const std::string lower = to_lower(text);
  for (Backend b : kAllBackends)
    if (lower == name(b)) return b;
  if (lower == "wasm" || lower == "wasmsimd") return Backend::WasmSIMD;
  if (lower == "avx-512") return Backend::AVX512;
  std::string names;
  for (Backend b : kAllBackends) names += (names.empty() ? "" : ", ") + std::string(name(b));
  if (parse_device(text))
    throw InvalidArgument(strcat("'", text, "' is a device, not a CPU backend: CPU ops run on ", names,
                                 "; devices are chosen where a device is accepted (realizar --backend ", text, ")"));
  throw InvalidArgument(strcat("unknown backend '", text, "': valid names are ", names));
}

std::vector<BackendStatus> backend_report() { return report(); }

bool is_available(Backend b) { return report()[static_cast<int>(b)].available; }

std::vector<Backend> available() {
  std::vector<Backend> v;
  for (const auto& s : report())
    if (s.available) v.push_back(s.backend);
  return v;
}

Backend best() {
  for (Backend b : {Backend::AVX512, Backend::AVX2, Backend::AVX, Backend::NEON, Backend::WasmSIMD, Backend::SSE2})
    if (is_available(b)) return b;
  return Backend::Scalar;
}

void require_available(Backend b) {
  const auto& s = report()[static_cast<int>(b)];
  if (!s.available)
    throw BackendUnavailable(strcat("backend ", name(b), " is not available on this machine: ", s.reason,
                                    ". Available: ", join_names(available())));
}

Backend current_backend() {
  const int forced = g_forced.load(std::memory_order_relaxed);
  if (forced >= 0) return static_cast<Backend>(forced);
  static const Backend chosen = [] {
    const std::optional<Backend> env = env_backend();
    if (!env) return best();
    try {
      require_available(*env);
    } catch (const BackendUnavailable& e) {
      throw BackendUnavailable(strcat("TRUENO_BACKEND=", name(*env), ": ", e.what()));
    }
    return *env;
  }();
  return chosen;
}

void set_backend(Backend b) {
  require_available(b);
  g_forced.store(static_cast<int>(b), std::memory_order_relaxed);
}

void reset_backend() { g_forced.store(-1, std::memory_order_relaxed); }

Backend resolve(std::optional<Backend> forced) {
  if (!forced) return current_backend();
  require_available(*forced);
  return *forced;
}

ScopedBackend::ScopedBackend(Backend b) {
  const int prev = g_forced.load();
  if (prev >= 0) previous_ = static_cast<Backend>(prev);
  set_backend(b);
}

ScopedBackend::~ScopedBackend() {
  if (previous_)
    g_forced.store(static_cast<int>(*previous_));
  else
    reset_backend();
}

}  // namespace trueno
