// realizar's forward passes per device kind (model.h: has_forward, upload_weights, device_identity). The
// generated list names the kinds that trueno built and realizar has a folder for (Note [Backend list]).
#include <string>

#include "realizar/model.h"
#include "trueno/error.h"
#include "util/strcat.h"

#define REALIZAR_BACKEND(Enum, folder)                                                                            \
  namespace realizar {                                                                                            \
  std::shared_ptr<DeviceWeights> upload_##folder##_weights(const Model&, const trueno::Device&, const CudaOptions&); \
  std::string folder##_identity(const trueno::Device&, const CudaOptions&);                                      \
  }
#include "realizar_built_backends.inc"
#undef REALIZAR_BACKEND

namespace realizar {

CudaOptions::DecodeGemv parse_decode_gemv(std::string_view s) {
  if (s == "fused") return CudaOptions::DecodeGemv::Fused;
  if (s == "cublas-f16") return CudaOptions::DecodeGemv::CublasF16;
  throw trueno::InvalidArgument(strcat("--decode-gemv '", s, "': expected fused or cublas-f16"));
}

CudaOptions::Prefill parse_prefill_precision(std::string_view s) {
  if (s == "f16") return CudaOptions::Prefill::F16;
  if (s == "fp8") return CudaOptions::Prefill::FP8;
  if (s == "tokens") return CudaOptions::Prefill::TokenByToken;
  throw trueno::InvalidArgument(strcat("--prefill-precision '", s, "': expected f16, fp8 or tokens"));
}

CudaOptions::GemmWeights parse_gemm_weights(std::string_view s) {
  if (s == "auto") return CudaOptions::GemmWeights::Auto;
  if (s == "staged") return CudaOptions::GemmWeights::Staged;
  if (s == "resident") return CudaOptions::GemmWeights::Resident;
  throw trueno::InvalidArgument(strcat("--gemm-weights '", s, "': expected auto, staged or resident"));
}

CudaOptions::DecodeAttention parse_decode_attention(std::string_view s) {
  if (s == "f16") return CudaOptions::DecodeAttention::F16;
  if (s == "q8") return CudaOptions::DecodeAttention::Q8;
  throw trueno::InvalidArgument(strcat("--decode-attention '", s, "': expected f16 or q8"));
}

bool has_forward(trueno::DeviceKind k) {
  switch (k) {
#define REALIZAR_BACKEND(Enum, folder) \
  case trueno::DeviceKind::Enum:       \
    return true;
#include "realizar_built_backends.inc"
#undef REALIZAR_BACKEND
    default:
      return false;
  }
}

std::shared_ptr<DeviceWeights> upload_weights(const Model& m, const trueno::Device& device, const CudaOptions& options) {
  trueno::require_available(device);
  switch (device.kind) {
#define REALIZAR_BACKEND(Enum, folder) \
  case trueno::DeviceKind::Enum:       \
    return upload_##folder##_weights(m, device, options);
#include "realizar_built_backends.inc"
#undef REALIZAR_BACKEND
    default:
      throw trueno::BackendUnavailable(strcat("device ", device.str(), ": realizar has no ", trueno::name(device.kind),
                                              " forward pass in this build"));
  }
}

std::string device_identity(const trueno::Device& device, const CudaOptions& options) {
  switch (device.kind) {
#define REALIZAR_BACKEND(Enum, folder) \
  case trueno::DeviceKind::Enum:       \
    return folder##_identity(device, options);
#include "realizar_built_backends.inc"
#undef REALIZAR_BACKEND
    default:
      return {};
  }
}

}  // namespace realizar
