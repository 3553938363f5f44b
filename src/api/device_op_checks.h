// The host-side checks and the enqueue shared by the device ops (device_ops.cpp) and the device backward
// ops (device_grad.cpp): every check runs before anything is queued.
#pragma once
#include <initializer_list>
#include <utility>

#include "core/device_backend.h"

namespace trueno::detail {

// The device every operand is on: InvalidArgument for an empty (host-side) input or for two devices.
Device common_device(DeviceOp op, std::initializer_list<std::pair<const char*, const DeviceTensor*>> inputs);
// d's backend when it has a kernel for op on `type` input; else BackendUnavailable naming both.
DeviceBackend& backend_with_kernel(DeviceOp op, const Device& d, QuantType type);
void need_type(DeviceOp op, const char* what, const DeviceTensor& t, QuantType type);
void need_shape(DeviceOp op, const char* what, const DeviceTensor& t, std::size_t elems);
void need_matrix(DeviceOp op, const char* what, const DeviceTensor& t);
// A given out must be on d with the shape and type; an empty one is allocated there (after the kernel check).
void prepare_out(DeviceOp op, const Device& d, DeviceTensor& out, const Shape& shape, QuantType type, QuantType input = QuantType::F32);
// Fills the call's storages from the tensors and enqueues it on the backend, which keeps them alive.
void run(OpCall& call, std::initializer_list<const DeviceTensor*> inputs, DeviceTensor& out, DeviceTensor* out2 = nullptr,
         DeviceTensor* out3 = nullptr);

}  // namespace trueno::detail
