// Output and seeds shared by the generating commands (run, chat).
#pragma once
#include <cstdint>
#include <string>

namespace realizar::cli {

// Writes text to stdout now; throws naming the failure (a full disk or closed stdout stops generation
// at once, not after n tokens).
void emit(const std::string& text);
std::uint64_t random_seed();

}  // namespace realizar::cli
