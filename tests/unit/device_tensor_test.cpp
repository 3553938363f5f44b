// Device tensors and ops (trueno/device_tensor.h, device_ops.h) without a device: the errors a user
// meets (an empty tensor as input, two devices, no kernel, shapes), and that the op list, the backends'
// kernel tables and contracts/gpu/*.yaml agree. Storages here are stand-ins that no backend ever sees:
// every check fires on the host before a backend is called.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "contract/contract_spec.h"
#include "core/device_backend.h"
#include "trueno/device_ops.h"
#include "trueno/error.h"
#include "trueno/grad.h"

namespace trueno {
namespace {

using detail::DeviceTensorAccess;

// A tensor that claims to live on d (no memory behind it).
DeviceTensor stand_in(Device d, Shape shape, QuantType type = QuantType::F32) {
  return DeviceTensorAccess::make(std::make_shared<detail::DeviceStorage>(d, 0), std::move(shape), type);
}

template <class E, class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error of the expected type";
  return "";
}

const Device kCuda{DeviceKind::CUDA, 0}, kVulkan{DeviceKind::Vulkan, 0}, kWebGpu{DeviceKind::WebGPU, 0};

TEST(DeviceTensor, AnEmptyTensorIsOnNoDeviceAndNamesUpload) {
  const DeviceTensor t;
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.size(), 0u);
  EXPECT_NE(error_of<InvalidArgument>([&] { (void)t.device(); }).find("upload"), std::string::npos);
  DeviceTensor out;
  const std::string e = error_of<InvalidArgument>([&] { ops::add(t, t, out); });
  EXPECT_NE(e.find("ops::add: a is an empty DeviceTensor"), std::string::npos) << e;
  EXPECT_NE(e.find("DeviceTensor::upload"), std::string::npos) << e;
}

TEST(DeviceTensor, OperandsOnTwoDevicesAreRefusedByName) {
  const DeviceTensor a = stand_in(kCuda, {4}), b = stand_in(kVulkan, {4});
  DeviceTensor out;
  const std::string e = error_of<InvalidArgument>([&] { ops::mul(a, b, out); });
  EXPECT_NE(e.find("a is on cuda:0 but b is on vulkan:0"), std::string::npos) << e;
  const std::string m = error_of<InvalidArgument>([&] { ops::matmul(stand_in(kCuda, {2, 2}), stand_in(Device{DeviceKind::CUDA, 1}, {2, 2}), out); });
  EXPECT_NE(m.find("cuda:1"), std::string::npos) << m;
  // An output on another device than the inputs.
  DeviceTensor elsewhere = stand_in(kVulkan, {4});
  const std::string o = error_of<InvalidArgument>([&] { ops::add(a, a, elsewhere); });
  EXPECT_NE(o.find("out is on vulkan:0 but the inputs are on cuda:0"), std::string::npos) << o;
}

TEST(DeviceTensor, AnOpWithoutAKernelNamesTheOpAndTheDevice) {
  // No backend in this build for webgpu: every op says so.
  for (DeviceOp op : kAllDeviceOps) EXPECT_FALSE(has_kernel(kWebGpu, op)) << name(op);
  DeviceTensor out;
  const std::string e = error_of<BackendUnavailable>([&] { ops::softmax(stand_in(kWebGpu, {3, 5}), out); });
  EXPECT_NE(e.find("op softmax has no kernel on device webgpu:0"), std::string::npos) << e;
  // A built backend without a kernel for an input type: Q8_K is an activation format, no matvec takes it.
  for (DeviceKind k : {DeviceKind::CUDA, DeviceKind::Vulkan}) {
    if (!built(k)) continue;
    const Device d{k, 0};
    EXPECT_TRUE(has_kernel(d, DeviceOp::Matvec, QuantType::Q4_K)) << d.str();
    EXPECT_FALSE(has_kernel(d, DeviceOp::Matvec, QuantType::Q8_K)) << d.str();
    const std::string q = error_of<BackendUnavailable>(
        [&] { ops::matvec(stand_in(d, {4, 256}, QuantType::Q8_K), stand_in(d, {256}), out); });
    EXPECT_NE(q.find("op matvec has no kernel on device " + d.str() + " for q8_k input"), std::string::npos) << q;
  }
}

TEST(DeviceTensor, ShapesAndTypesAreCheckedOnTheHost) {
  DeviceTensor out;
  EXPECT_THROW(ops::add(stand_in(kCuda, {4}), stand_in(kCuda, {5}), out), ShapeError);
  EXPECT_THROW(ops::matmul(stand_in(kCuda, {2, 3}), stand_in(kCuda, {2, 3}), out), ShapeError);
  EXPECT_THROW(ops::matvec(stand_in(kCuda, {2, 3}), stand_in(kCuda, {4}), out), ShapeError);
  EXPECT_THROW(ops::rmsnorm(stand_in(kCuda, {2, 3}), stand_in(kCuda, {4}), 1e-5f, out), ShapeError);
  EXPECT_THROW(ops::add_bias(stand_in(kCuda, {2, 3}), stand_in(kCuda, {4}), out), ShapeError);
  DeviceTensor no_db;
  EXPECT_THROW(grad::bias(stand_in(kCuda, {2, 3}), no_db, true), InvalidArgument);
  EXPECT_THROW(ops::f16_to_f32(stand_in(kCuda, {4}), out), InvalidArgument);  // f32, not f16
  EXPECT_THROW(ops::max(stand_in(kCuda, {0}), out), InvalidArgument);
  EXPECT_THROW(ops::min(stand_in(kCuda, {0}), out), InvalidArgument);
  EXPECT_THROW(ops::mean(stand_in(kCuda, {0}), out), InvalidArgument);
  EXPECT_THROW(ops::argmax(stand_in(kCuda, {0}), out), InvalidArgument);
  EXPECT_THROW(ops::argmin(stand_in(kCuda, {0}), out), InvalidArgument);
  DeviceTensor c = stand_in(kCuda, {2, 2});
  EXPECT_THROW(ops::matmul(c, stand_in(kCuda, {2, 2}), c), InvalidArgument);  // c is an input
  DeviceTensor wrong = stand_in(kCuda, {3});
  EXPECT_THROW(ops::add(stand_in(kCuda, {4}), stand_in(kCuda, {4}), wrong), ShapeError);
  std::vector<float> three(3);
  EXPECT_THROW(stand_in(kCuda, {4}).download(three), ShapeError);
  std::vector<std::uint16_t> halves(4);
  EXPECT_THROW(stand_in(kCuda, {4}).download_f16(halves), InvalidArgument);  // holds f32
}

// The backward ops on device tensors (grad.h) check on the host too, before any backend is called.
TEST(DeviceTensor, BackwardOpsCheckShapesTypesAndAliasingOnTheHost) {
  DeviceTensor out, loss;
  const std::string t = error_of<InvalidArgument>([&] { grad::cross_entropy(stand_in(kCuda, {4, 3}), stand_in(kCuda, {4}), loss, out); });
  EXPECT_NE(t.find("targets holds f32, needs i32"), std::string::npos) << t;
  EXPECT_THROW(grad::cross_entropy(stand_in(kCuda, {4, 3}), stand_in(kCuda, {3}, QuantType::I32), loss, out), ShapeError);
  EXPECT_THROW(grad::embedding(stand_in(kCuda, {4}, QuantType::I32), stand_in(kCuda, {4, 8}), out), InvalidArgument);  // no rows
  EXPECT_THROW(grad::embedding(stand_in(kCuda, {3}, QuantType::I32), stand_in(kCuda, {4, 8}), out, 10), ShapeError);
  EXPECT_THROW(grad::rope(stand_in(kCuda, {2, 10}), 3, 2, 0, 1e4f, false, out), ShapeError);  // 10 values are not 3 heads
  EXPECT_THROW(grad::rope(stand_in(kCuda, {2, 10}), 2, 3, 0, 1e4f, false, out), ShapeError);  // odd rope_dim
  DeviceTensor dx, dw;
  EXPECT_THROW(grad::rmsnorm(stand_in(kCuda, {2, 4}), stand_in(kCuda, {4}), 1e-5f, stand_in(kCuda, {2, 5}), dx, dw), ShapeError);
  DeviceTensor q = stand_in(kCuda, {5, 4}), dq, dk, dv;
  EXPECT_THROW(grad::attention(q, stand_in(kCuda, {5, 3}), q, q, dq, dk, dv), ShapeError);
  EXPECT_THROW(grad::attention(q, q, q, q, q, dk, dv), InvalidArgument);  // dq is an input
  DeviceTensor w = stand_in(kCuda, {4}), m = stand_in(kCuda, {4});
  const grad::AdamW o;
  EXPECT_THROW(grad::adamw_step(w, stand_in(kCuda, {4}), m, m, 1, o), InvalidArgument);  // m is v
  DeviceTensor v = stand_in(kCuda, {4});
  EXPECT_THROW(grad::adamw_step(w, stand_in(kCuda, {4}), m, v, 0, o), InvalidArgument);  // steps count from 1
  const std::string k = error_of<BackendUnavailable>(
      [&] { grad::cross_entropy(stand_in(kWebGpu, {4, 3}), stand_in(kWebGpu, {4}, QuantType::I32), loss, out); });
  EXPECT_NE(k.find("op cross_entropy has no kernel on device webgpu:0"), std::string::npos) << k;
}

TEST(DeviceTensor, AnUnavailableDeviceIsRefusedAtAllocation) {
  EXPECT_THROW(DeviceTensor::empty(kWebGpu, {4}), BackendUnavailable);
  const float v[] = {1, 2, 3};
  EXPECT_THROW(DeviceTensor::upload(kWebGpu, v), BackendUnavailable);
  EXPECT_THROW(DeviceTensor::upload(kWebGpu, v, {2, 2}), ShapeError);  // checked before the device
}

// The op list, each built backend's kernel table and the contracts agree: every op has a kernel on every
// built backend (for f32 input; f16 for f16_to_f32, a quantized type for matvec) and a contract there.
TEST(DeviceTensor, EveryOpHasAKernelAndAContractOnEveryBuiltBackend) {
  for (DeviceKind k : {DeviceKind::CUDA, DeviceKind::Vulkan}) {
    if (!built(k)) continue;
    const YAML::Node ops = YAML::LoadFile(test::contracts_dir() + "/gpu/" + std::string(name(k)) + ".yaml")["ops"];
    for (DeviceOp op : kAllDeviceOps) {
      const QuantType in = kernel_input(op);
      EXPECT_TRUE(has_kernel(Device{k, 0}, op, in)) << name(op) << " on " << name(k);
      if (op == DeviceOp::Matvec) {
        for (const char* t : {"f32", "f16", "q4_0", "q8_0", "q4_k", "q5_k", "q6_k"})
          EXPECT_TRUE(ops[std::string("tensor_matvec_") + t]) << "contracts/gpu/" << name(k) << ".yaml: tensor_matvec_" << t;
      } else {
        EXPECT_TRUE(ops["tensor_" + std::string(name(op))]) << "contracts/gpu/" << name(k) << ".yaml: tensor_" << name(op);
      }
    }
  }
}

}  // namespace
}  // namespace trueno
