// The SPIR-V modules compiled from shaders/*.comp at build time by glslc and embedded into the library
// (cmake/embed_vulkan_shaders.cmake; the list of modules and their variants: src/vulkan/CMakeLists.txt).
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
};
extern const EmbeddedShader kEmbeddedShaders[];
extern const std::size_t kEmbeddedShaderCount;

// The module named `name`, or nullptr.
const EmbeddedShader* find_shader(std::string_view name);

}  // namespace trueno::vulkan
