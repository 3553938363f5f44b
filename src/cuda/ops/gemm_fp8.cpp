// cuBLASLt FP8 GEMM and the E4M3 quantization launchers (gemm_fp8.h). In cuBLASLt's column-major terms,
// as for the f16 GEMM: D (rows x T, ld rows) = W^T X, W stored cols x rows (ld cols) and X cols x T;
// "TN", the one layout Hopper's FP8 kernels take.
#include "trueno/cuda/ops/gemm_fp8.h"

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <tuple>

#include "core/strings.h"

namespace trueno::cuda {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

const CublasLt& lt() {
  std::string why;
  const CublasLt* l = cublaslt(&why);
  if (l == nullptr) throw CudaError(strcat("cuBLASLt is needed for --prefill-precision fp8: ", why), -1);
  return *l;
}

struct Plan {
  api::cublasLtMatmulDesc desc = nullptr;
  api::cublasLtMatrixLayout a = nullptr, b = nullptr, c = nullptr;
  api::cublasLtMatmulAlgo algo{};
};

// One context's cuBLASLt handle, workspace and plans (Context::extension: destroyed with the context).
struct Plans {
  explicit Plans(Context& c) : ctx(&c) {}
  ~Plans() {
    const CublasLt* l = cublaslt();
    if (l == nullptr) return;
    for (auto& [shape, pl] : by_shape) {
      l->layout_destroy(pl.a), l->layout_destroy(pl.b), l->layout_destroy(pl.c);
      l->desc_destroy(pl.desc);
    }
    if (handle != nullptr) l->destroy(handle);
  }
  Context* ctx;
  std::mutex mu;
  api::cublasLtHandle handle = nullptr;
  DeviceBuffer workspace;
  std::map<std::tuple<int, int, int>, Plan> by_shape;
};

void check_lt(api::cublasStatus s, const char* call) {
  if (s != 0) throw CudaError(strcat(call, ": cuBLASLt status ", s, " (", lt().status_string(s), ")"), s);
}

const Plan& plan_for(Plans& p, int m, int n, int k) {
  const auto key = std::make_tuple(m, n, k);
  if (auto it = p.by_shape.find(key); it != p.by_shape.end()) return it->second;
  const CublasLt& l = lt();
  if (p.handle == nullptr) {
    check_lt(l.create(&p.handle), "cublasLtCreate");
    p.workspace = DeviceBuffer(*p.ctx, kWorkspaceBytes);
  }
  Plan pl;
  check_lt(l.desc_create(&pl.desc, api::kCublasCompute32F, api::kCudaR32F), "cublasLtMatmulDescCreate");
  const int ta = api::kCublasOpT, tb = api::kCublasOpN;
  const signed char fast_accumulation = 0;  // f32 accumulation throughout
  check_lt(l.desc_set(pl.desc, api::kLtDescTransA, &ta, sizeof ta), "cublasLtMatmulDescSetAttribute(TRANSA)");
  check_lt(l.desc_set(pl.desc, api::kLtDescTransB, &tb, sizeof tb), "cublasLtMatmulDescSetAttribute(TRANSB)");
  check_lt(l.desc_set(pl.desc, api::kLtDescFastAccum, &fast_accumulation, sizeof fast_accumulation),
           "cublasLtMatmulDescSetAttribute(FAST_ACCUM)");
  // The scale pointers are part of the configuration the heuristic matches (an algorithm found without
  // them is refused by cublasLtMatmul with them): any device pointer will do here, gemm_fp8 sets each call's.
  const api::CUdeviceptr any = p.workspace.ptr();
  check_lt(l.desc_set(pl.desc, api::kLtDescAScalePointer, &any, sizeof any), "cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)");
  check_lt(l.desc_set(pl.desc, api::kLtDescBScalePointer, &any, sizeof any), "cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)");
  check_lt(l.layout_create(&pl.a, api::kCudaR8FE4M3, k, m, k), "cublasLtMatrixLayoutCreate(A)");
  check_lt(l.layout_create(&pl.b, api::kCudaR8FE4M3, k, n, k), "cublasLtMatrixLayoutCreate(B)");
  check_lt(l.layout_create(&pl.c, api::kCudaR32F, m, n, m), "cublasLtMatrixLayoutCreate(C)");
  api::cublasLtMatmulPreference pref = nullptr;
  check_lt(l.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
  const std::size_t ws = kWorkspaceBytes;
  check_lt(l.pref_set(pref, api::kLtPrefMaxWorkspaceBytes, &ws, sizeof ws), "cublasLtMatmulPreferenceSetAttribute");
  api::cublasLtMatmulHeuristicResult result{};
  int returned = 0;
  const api::cublasStatus s = l.heuristic(p.handle, pl.desc, pl.a, pl.b, pl.c, pl.c, pref, 1, &result, &returned);
  l.pref_destroy(pref);
  if (s != 0 || returned == 0)
    throw CudaError(strcat("cuBLASLt has no FP8 E4M3 kernel for ", n, " x ", k, " times ", k, " x ", m,
                           " (status ", s, "; Hopper FP8 needs widths that are multiples of 16)"),
                    s);
  pl.algo = result.algo;
  return p.by_shape.emplace(key, pl).first->second;
}

unsigned grid_for(Context& c, std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + 255) / 256, 1, static_cast<std::size_t>(c.info().sms) * 8));
}

void zero_amax(Context& c, Fp8Tensor& out) {
  check(c.driver().memset_d8_async(out.amax_bits(), 0, 4, c.stream()), "cuMemsetD8Async(fp8 amax)");
}

// fp8_ops' amax kernel over n elements of x (floats, halves, or float4s for the _v4 kernels) into out's
// amax bits (zeroed first by the caller); then its cast kernel, which also writes out's scale.
void launch_amax(Context& c, const char* kernel, api::CUdeviceptr x, unsigned long long n, Fp8Tensor& out) {
  api::CUdeviceptr bits = out.amax_bits();
  void* p[] = {&x, &n, &bits};
  launch(c, c.function("fp8_ops", kernel), grid_for(c, n), 1, 256, 1, p);
}
void launch_cast(Context& c, const char* kernel, api::CUdeviceptr x, unsigned long long n, Fp8Tensor& out) {
  api::CUdeviceptr bits = out.amax_bits(), q = out.data.ptr(), scale = out.scale();
  void* p[] = {&x, &n, &bits, &q, &scale};
  launch(c, c.function("fp8_ops", kernel), grid_for(c, n), 1, 256, 1, p);
}

// Four values per load (Note [Vector FP8 casts], kernels/fp8_ops.cu) where count and alignment allow.
bool vector_cast(api::CUdeviceptr x, std::size_t count, const Fp8Tensor& out) {
  return count % 4 == 0 && x % 16 == 0 && out.data.ptr() % 4 == 0;
}

bool fits(std::size_t count, const Fp8Tensor& out) {
  if (count > out.n) throw ShapeError(strcat("cuda fp8: ", count, " values do not fit a tensor of ", out.n));
  return count != 0;
}

}  // namespace

Fp8Tensor::Fp8Tensor(Context& c, std::size_t n_) : n(n_), data(c, n_), amax_scale(c, 32) {}

void cast_fp8_f32(Context& c, api::CUdeviceptr x, std::size_t count, Fp8Tensor& out) {
  if (!fits(count, out)) return;
  if (vector_cast(x, count, out)) return launch_cast(c, "fp8_from_f32_v4", x, count / 4, out);
  launch_cast(c, "fp8_from_f32", x, count, out);
}

void quantize_fp8_f32(Context& c, api::CUdeviceptr x, std::size_t count, Fp8Tensor& out) {
  if (!fits(count, out)) return;
  zero_amax(c, out);
  if (vector_cast(x, count, out))
    launch_amax(c, "amax_f32_v4", x, count / 4, out);
  else
    launch_amax(c, "amax_f32", x, count, out);
  cast_fp8_f32(c, x, count, out);
}

void quantize_fp8_f16(Context& c, api::CUdeviceptr x_f16, std::size_t count, Fp8Tensor& out) {
  if (!fits(count, out)) return;
  zero_amax(c, out);
  launch_amax(c, "amax_f16", x_f16, count, out);
  launch_cast(c, "fp8_from_f16", x_f16, count, out);
}

void rmsnorm_amax(Context& c, api::CUdeviceptr x, api::CUdeviceptr w, float eps, api::CUdeviceptr out, std::size_t rows, std::size_t n,
                  Fp8Tensor& amax_of) {
  if (rows == 0) return;
  zero_amax(c, amax_of);
  int nn = static_cast<int>(n);
  api::CUdeviceptr bits = amax_of.amax_bits();
  void* p[] = {&x, &w, &eps, &out, &nn, &bits};
  launch(c, c.function("fp8_ops", "rmsnorm_amax"), static_cast<unsigned>(rows), 1, 256, 1, p);
}

void swiglu_amax(Context& c, api::CUdeviceptr g, api::CUdeviceptr u, std::size_t n, Fp8Tensor& amax_of) {
  if (n == 0) return;
  zero_amax(c, amax_of);
  unsigned long long nn = n;
  api::CUdeviceptr bits = amax_of.amax_bits();
  void* p[] = {&g, &u, &nn, &bits};
  launch(c, c.function("fp8_ops", "swiglu_amax"), grid_for(c, (n + 3) / 4), 1, 256, 1, p);
}

void gemm_fp8(Context& c, std::size_t rows, std::size_t T, std::size_t cols, const Fp8Tensor& w, const Fp8Tensor& x, api::CUdeviceptr y,
              float beta) {
  if (rows == 0 || T == 0) return;
  if (cols == 0 || rows > INT_MAX || T > INT_MAX || cols > INT_MAX || w.n < rows * cols || x.n < T * cols)
    throw ShapeError(strcat("cuda gemm_fp8: ", T, " x ", cols, " times ", cols, " x ", rows, " does not match its tensors (", x.n,
                            " and ", w.n, " values) or cuBLASLt's int sizes"));
  Plans& p = c.extension<Plans>();
  std::lock_guard lock(p.mu);
  const Plan& pl = plan_for(p, static_cast<int>(rows), static_cast<int>(T), static_cast<int>(cols));
  const CublasLt& l = lt();
  const api::CUdeviceptr ws = w.scale(), xs = x.scale();
  check_lt(l.desc_set(pl.desc, api::kLtDescAScalePointer, &ws, sizeof ws), "cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)");
  check_lt(l.desc_set(pl.desc, api::kLtDescBScalePointer, &xs, sizeof xs), "cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)");
  const float alpha = 1.0f;
  check_lt(l.matmul(p.handle, pl.desc, &alpha, reinterpret_cast<const void*>(w.data.ptr()), pl.a, reinterpret_cast<const void*>(x.data.ptr()),
                    pl.b, &beta, reinterpret_cast<const void*>(y), pl.c, reinterpret_cast<void*>(y), pl.c, &pl.algo,
                    reinterpret_cast<void*>(p.workspace.ptr()), kWorkspaceBytes, c.stream()),
           "cublasLtMatmul(e4m3 x e4m3 -> f32, f32 accumulation)");
}

}  // namespace trueno::cuda
