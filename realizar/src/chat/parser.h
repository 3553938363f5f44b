// Tokens to a Program (ast.h). Throws TemplateError naming the construct and where it is.
#pragma once
#include <memory>
#include <string>

#include "chat/ast.h"
#include "chat/lexer.h"

namespace realizar::chat {

std::unique_ptr<Program> parse_program(std::string text, std::string name);

}  // namespace realizar::chat
