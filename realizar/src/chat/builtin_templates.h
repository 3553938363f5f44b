// The chat templates realizar carries (real models' texts; builtin_templates.cpp cites each).
#pragma once
#include <span>
#include <string_view>

namespace realizar::chat {

struct BuiltinTemplate {
  std::string_view name, text;
};
std::span<const BuiltinTemplate> builtin_templates();

}  // namespace realizar::chat
