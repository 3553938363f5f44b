// The kernel list as run-time data: name, family and kind of every op, and a way to fetch its
// function from a KernelTable. Used by the contract tests and the benchmarks.
#pragma once
#include <span>
#include <string_view>

#include "cpu/kernels/kernel_types.h"

namespace trueno::cpu {

enum class Kind {
  Binary, Unary, Scale, Clamp, Ternary, Reduce, Reduce2, ArgReduce, Row, RmsNorm, LayerNorm, ToHalf, FromHalf,
  Matmul, Matvec, Transpose, QDot, QDotRows, QDotX8, Dequant
};

using AnyFn = void (*)();

struct KernelInfo {
  std::string_view family;
  std::string_view name;
  Kind kind;
  AnyFn (*get)(const KernelTable& t);

  template <class F>
  F* fn(const KernelTable& t) const {
    return reinterpret_cast<F*>(get(t));
  }
};

std::span<const KernelInfo> kernel_registry();
const KernelInfo* find_kernel(std::string_view name);

}  // namespace trueno::cpu
