// Renders a Program: statements write to the output, expressions compute Values (value.cpp).
#pragma once
#include <string>

#include "chat/ast.h"

namespace realizar::chat {

// globals: messages, add_generation_prompt, bos_token, ... (the built-in functions are added).
std::string render_program(const Program& p, Dict globals);

}  // namespace realizar::chat
