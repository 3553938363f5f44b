// trueno::Matrix: an owning, row-major f32 matrix; matmul/matvec/transpose on the chosen backend.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "trueno/aligned.h"
#include "trueno/backend.h"
#include "trueno/device.h"
#include "trueno/vector.h"

namespace trueno {

class Matrix {
 public:
  Matrix() = default;
  Matrix(std::size_t rows, std::size_t cols, float value = 0.0f);
  // rows x cols from row-major values; throws ShapeError when values.size() != rows * cols.
  static Matrix from(std::size_t rows, std::size_t cols, std::span<const float> values);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  float& operator()(std::size_t r, std::size_t c) { return data_[r * cols_ + c]; }
  float operator()(std::size_t r, std::size_t c) const { return data_[r * cols_ + c]; }

  // Forces this object's ops onto a CPU tier, or (matmul) onto a device; each clears the other.
  Matrix& on(Backend b);
  Matrix& on(const Device& d);
  std::optional<Backend> backend() const { return backend_; }
  std::optional<Device> device() const { return device_; }

  // [m x k] * [k x n] -> [m x n]; ShapeError when a.cols() != b.rows(). Runs on a device when an operand
  // is forced onto one, or when nothing forces a CPU tier and the offload policy picks one (offload.h:
  // the measured crossover table); the data then goes up and the product comes back in this call.
  static Matrix matmul(const Matrix& a, const Matrix& b);
  // [m x k] * [k] -> [m]
  Vector matvec(const Vector& x) const;
  Matrix transpose() const;

 private:
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<float, AlignedAllocator<float>> data_;
  std::optional<Backend> backend_;
  std::optional<Device> device_;
};

}  // namespace trueno
