// Comparing logits of two forward passes (realizar tests): per-row cosine, argmax agreement, max |d|.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstddef>
#include <string>
#include <vector>

#include "realizar/model.h"
#include "trueno/backend.h"
#include "trueno/device.h"

namespace realizar::test {

// Min per-row cosine (f64) and argmax agreement between two [rows][V] logit sets; max |a - b| too.
struct RowStats {
  double min_cos = 1, max_abs = 0;
  std::size_t agree = 0;
};

inline RowStats compare_rows(const float* a0, const float* b0, std::size_t rows, std::size_t V) {
  RowStats st;
  for (std::size_t i = 0; i < rows; ++i) {
    const float* a = a0 + i * V;
    const float* b = b0 + i * V;
    double dot = 0, na = 0, nb = 0;
    std::size_t ia = 0, ib = 0;
    for (std::size_t k = 0; k < V; ++k) {
      dot += double{a[k]} * b[k], na += double{a[k]} * a[k], nb += double{b[k]} * b[k];
      st.max_abs = std::max(st.max_abs, static_cast<double>(std::fabs(a[k] - b[k])));
      if (a[k] > a[ia]) ia = k;
      if (b[k] > b[ib]) ib = k;
    }
    st.min_cos = std::min(st.min_cos, dot / std::sqrt(na * nb));
    st.agree += ia == ib;
  }
  return st;
}

// Cosine (f64) of each row of two [rows][V] logit sets.
inline std::vector<double> row_cosines(const float* a0, const float* b0, std::size_t rows, std::size_t V) {
  std::vector<double> out;
  for (std::size_t i = 0; i < rows; ++i) out.push_back(compare_rows(a0 + i * V, b0 + i * V, 1, V).min_cos);
  return out;
}

// A sequence on CUDA device 0 (the GPU tests' device); BackendUnavailable without one.
inline std::unique_ptr<Sequence> make_cuda_sequence(const Model& m, std::size_t n_ctx, const CudaOptions& o = {}) {
  return make_sequence(m, n_ctx, trueno::Device{trueno::DeviceKind::CUDA, 0}, o);
}

// Whether CUDA device 0 is usable here; *why says why not (the visible skip's text).
inline bool cuda_or_skip_reason(std::string* why) {
  for (const auto& s : trueno::device_report()) {
    if (s.device != trueno::Device{trueno::DeviceKind::CUDA, 0}) continue;
    *why = s.detail;
    return s.available && !s.detail.starts_with("fake device");
  }
  *why = "no CUDA line in the device report";
  return false;
}

// The Vulkan device the GPU tests use: TRUENO_VULKAN_TEST_DEVICE, else 0 (lavapipe in CI: a CPU device,
// never chosen automatically, so the tests name it).
inline trueno::Device vulkan_test_device() {
  const char* e = std::getenv("TRUENO_VULKAN_TEST_DEVICE");
  return {trueno::DeviceKind::Vulkan, e != nullptr && *e != '\0' ? std::atoi(e) : 0};
}

// A sequence on the tests' Vulkan device; BackendUnavailable without one.
inline std::unique_ptr<Sequence> make_vulkan_sequence(const Model& m, std::size_t n_ctx) {
  return make_sequence(m, n_ctx, vulkan_test_device());
}

// Whether the tests' Vulkan device is usable here with realizar's Vulkan pass; *why says why not.
inline bool vulkan_or_skip_reason(std::string* why) {
  if (!has_forward(trueno::DeviceKind::Vulkan)) {
    *why = "this build has no Vulkan forward pass (TRUENO_VULKAN=OFF or no Vulkan headers/glslc)";
    return false;
  }
  for (const auto& s : trueno::device_report()) {
    if (s.device != vulkan_test_device()) continue;
    *why = s.detail;
    return s.available;
  }
  *why = "no " + vulkan_test_device().str() + " line in the device report";
  return false;
}

}  // namespace realizar::test
