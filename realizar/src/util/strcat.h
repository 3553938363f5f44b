// Message building for errors and reports (no formatting library needed for this).
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
