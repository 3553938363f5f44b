// The backend for an op over several objects, each possibly forced to one.
#pragma once
#include <optional>

#include "core/strings.h"
#include "trueno/backend.h"
#include "trueno/error.h"

namespace trueno::detail {

inline std::optional<Backend> combine(const char* op, std::optional<Backend> a, std::optional<Backend> b) {
  if (a && b && *a != *b)
    throw InvalidArgument(strcat(op, ": operands are forced to different backends (", name(*a), " and ", name(*b),
                                 "); force both to the same one"));
  return a ? a : b;
}

}  // namespace trueno::detail
