// trueno: multi-backend f32 compute. Include this for the whole public API.
#pragma once
#include "trueno/backend.h"
#include "trueno/device.h"
#include "trueno/device_ops.h"
#include "trueno/device_tensor.h"
#include "trueno/error.h"
#include "trueno/grad.h"
#include "trueno/log.h"
#include "trueno/matrix.h"
#include "trueno/offload.h"
#include "trueno/ops.h"
#include "trueno/threads.h"
#include "trueno/vector.h"
