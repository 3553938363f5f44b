// trueno::Matrix: thin owning wrappers over trueno::ops' matrix ops.
#include "trueno/matrix.h"

#include "api/backend_choice.h"
#include "core/strings.h"
#include "trueno/error.h"
#include "trueno/ops.h"

namespace trueno {

Matrix::Matrix(std::size_t rows, std::size_t cols, float value) : rows_(rows), cols_(cols), data_(rows * cols, value) {}

Matrix Matrix::from(std::size_t rows, std::size_t cols, std::span<const float> values) {
  if (values.size() != rows * cols)
    throw ShapeError(strcat("Matrix::from: ", rows, "x", cols, " needs ", rows * cols, " values, got ", values.size()));
  Matrix m(rows, cols);
  std::copy(values.begin(), values.end(), m.data_.begin());
  return m;
}

Matrix& Matrix::on(Backend b) {
  require_available(b);
  backend_ = b;
  return *this;
}

Matrix Matrix::matmul(const Matrix& a, const Matrix& b) {
  if (a.cols_ != b.rows_)
    throw ShapeError(strcat("Matrix::matmul: A is ", a.rows_, "x", a.cols_, ", B is ", b.rows_, "x", b.cols_,
                            "; A's columns must equal B's rows"));
  const auto be = detail::combine("Matrix::matmul", a.backend_, b.backend_);
  Matrix c(a.rows_, b.cols_);
  if (be) c.on(*be);
  ops::matmul(a.rows_, b.cols_, a.cols_, a.data(), a.cols_, b.data(), b.cols_, c.data(), c.cols_, be);
  return c;
}

Vector Matrix::matvec(const Vector& x) const {
  if (x.size() != cols_)
    throw ShapeError(strcat("Matrix::matvec: A is ", rows_, "x", cols_, ", x has ", x.size(), "; need ", cols_));
  const auto be = detail::combine("Matrix::matvec", backend_, x.backend());
  Vector y(rows_);
  ops::matvec(rows_, cols_, data(), cols_, x.span(), y.span(), be);
  return y;
}

Matrix Matrix::transpose() const {
  Matrix t(cols_, rows_);
  if (backend_) t.on(*backend_);
  ops::transpose(rows_, cols_, data(), cols_, t.data(), rows_, backend_);
  return t;
}

}  // namespace trueno
