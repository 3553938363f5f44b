// Small string helpers for error messages (no formatting library in the core).
#pragma once
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "trueno/backend.h"

namespace trueno {

template <class... Args>
std::string strcat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

inline std::string to_lower(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return r;
}

inline std::string join_names(const std::vector<Backend>& v) {
  std::string r;
  for (Backend b : v) r += (r.empty() ? "" : ", ") + std::string(name(b));
  return r;
}

}  // namespace trueno
