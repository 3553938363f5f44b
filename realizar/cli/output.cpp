#include "output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "trueno/error.h"

namespace realizar::cli {

void emit(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0)
    throw trueno::Error(std::string("writing to standard output failed: ") + std::strerror(errno));
}

std::uint64_t random_seed() {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

}  // namespace realizar::cli
