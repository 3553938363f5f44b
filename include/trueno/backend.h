// The CPU's backends (ISA tiers), run-time detection and the ways to force one (per call, per object,
// globally, by env). GPUs and other accelerators are devices, another idea (device.h).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trueno {

// CPU tiers only: every op of the CPU API has a kernel on each of them (where the machine has it).
enum class Backend { Scalar, SSE2, AVX, AVX2, AVX512, NEON, WasmSIMD };

inline constexpr Backend kAllBackends[] = {Backend::Scalar, Backend::SSE2, Backend::AVX,     Backend::AVX2,
                                           Backend::AVX512, Backend::NEON, Backend::WasmSIMD};

// Lower-case name as accepted by TRUENO_BACKEND and --backend: scalar, sse2, avx, avx2, avx512, neon, wasm-simd.
std::string_view name(Backend b);
// Parses a name (case-insensitive); throws InvalidArgument listing the valid names (a device name such as
// "cuda" gets a pointer to device.h's parse_device).
Backend parse_backend(std::string_view text);

struct BackendStatus {
  Backend backend;
  bool available;
  std::string reason;  // why not available (names the missing CPU/OS feature), or what it runs on
};

// Every backend, in enum order, with availability and reason.
std::vector<BackendStatus> backend_report();
// Backends this machine can run now (CPU tiers detected by CPUID + XGETBV, or NEON on aarch64).
std::vector<Backend> available();
bool is_available(Backend b);
// The fastest available CPU backend.
Backend best();
// Throws BackendUnavailable naming the backend and the missing feature when b cannot run here.
void require_available(Backend b);

// The backend ops use when neither the call nor the object forces one:
// set_backend() if called, else TRUENO_BACKEND if set (an unavailable or unknown value throws), else best().
Backend current_backend();
// Forces every later op globally; throws if unavailable. reset_backend() returns to the default.
void set_backend(Backend b);
void reset_backend();

// Resolves a per-call/per-object choice: the forced one (checked) or current_backend().
Backend resolve(std::optional<Backend> forced);

// Forces a backend for the lifetime of the object, restoring the previous global choice after.
class ScopedBackend {
 public:
  explicit ScopedBackend(Backend b);
  ~ScopedBackend();
  ScopedBackend(const ScopedBackend&) = delete;
  ScopedBackend& operator=(const ScopedBackend&) = delete;

 private:
  std::optional<Backend> previous_;
};

}  // namespace trueno
