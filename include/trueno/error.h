// trueno's one error style: exceptions derived from trueno::Error, messages that name what, where and the fix.
#pragma once
#include <stdexcept>
#include <string>

namespace trueno {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A backend was asked for that this machine (or this build) cannot run.
class BackendUnavailable : public Error {
 public:
  using Error::Error;
};

// Operand sizes or shapes do not fit the op.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// An argument is outside the op's domain (empty input where undefined, bad name, overlapping buffers).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

}  // namespace trueno
