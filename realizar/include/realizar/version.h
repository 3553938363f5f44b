// realizar: LLM inference on trueno. For now it holds the version; the engine arrives with later issues.
#pragma once
#include <string_view>

namespace realizar {

std::string_view version();

}  // namespace realizar
