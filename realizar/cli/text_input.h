// Text a command reads from a file or from standard input ("-").
#pragma once
#include <string>

namespace realizar::cli {

// The exact bytes of path, or of stdin when path is "-". Throws naming the option and the path when it
// is missing, a directory or unreadable (an std::ifstream on a directory "succeeds" with no bytes).
std::string read_text(const std::string& path, const std::string& option);

}  // namespace realizar::cli
