// The SPIR-V modules compiled at build time by glslc and embedded into the library
// (cmake/embed_vulkan_shaders.cmake; the list of modules and their variants: src/vulkan/CMakeLists.txt):
// from shaders/*.comp, and some from the CUDA kernels through decy (Note [Vulkan shaders from CUDA], ops.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace trueno::vulkan {

struct EmbeddedShader {
  const char* name;  // "gemv", "gemv_subgroup", ...
  const std::uint32_t* words;
  std::size_t word_count;
  // What it was built from: "src/vulkan/shaders/gemv.comp -DUSE_SUBGROUP=1", "src/cuda/kernels/layer_ops.cu
  // swiglu through decy".
  const char* source;
  // A module built from a CUDA kernel through decy: the hand-written module it stands in for ("add" for
  // "add_decy" and "add_rows_decy"), whose contract it is held to; "" for a hand-written module.
  const char* stands_for;
};
extern const EmbeddedShader kEmbeddedShaders[];
extern const std::size_t kEmbeddedShaderCount;

// The module named `name`, or nullptr.
const EmbeddedShader* find_shader(std::string_view name);

}  // namespace trueno::vulkan
