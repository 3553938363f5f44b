// trueno::Matrix: an owning, row-major f32 matrix; matmul/matvec/transpose on the chosen backend.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "trueno/aligned.h"
#include "trueno/backend.h"
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

  Matrix& on(Backend b);
  std::optional<Backend> backend() const { return backend_; }

  // [m x k] * [k x n] -> [m x n]; ShapeError when a.cols() != b.rows().
  static Matrix matmul(const Matrix& a, const Matrix& b);
  // [m x k] * [k] -> [m]
  Vector matvec(const Vector& x) const;
  Matrix transpose() const;

 private:
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<float, AlignedAllocator<float>> data_;
  std::optional<Backend> backend_;
};

}  // namespace trueno
