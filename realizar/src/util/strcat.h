// Message building for errors and reports (realizar sees only trueno's public headers).
#pragma once
#include <sstream>
#include <string>

namespace realizar {

template <class... Args>
std::string strcat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

}  // namespace realizar
