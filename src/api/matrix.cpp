// trueno::Matrix: thin owning wrappers over trueno::ops' matrix ops.
#include "trueno/matrix.h"

#include "api/backend_choice.h"
#include "core/strings.h"
#include <cmath>

#include "trueno/device_ops.h"
#include "trueno/error.h"
#include "trueno/offload.h"
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
  device_.reset();
  return *this;
}

Matrix& Matrix::on(const Device& d) {
  require_available(d);
  device_ = d;
  backend_.reset();
  return *this;
}

Matrix Matrix::matmul(const Matrix& a, const Matrix& b) {
  if (a.cols_ != b.rows_)
    throw ShapeError(strcat("Matrix::matmul: A is ", a.rows_, "x", a.cols_, ", B is ", b.rows_, "x", b.cols_,
                            "; A's columns must equal B's rows"));
  const auto be = detail::combine("Matrix::matmul", a.backend_, b.backend_);
  if (a.device_ && b.device_ && !(*a.device_ == *b.device_))
    throw InvalidArgument(strcat("Matrix::matmul: operands are forced to different devices (", a.device_->str(), " and ",
                                 b.device_->str(), "); force both to the same one"));
  const std::optional<Device> forced = a.device_ ? a.device_ : b.device_;
  if (forced && be)
    throw InvalidArgument(strcat("Matrix::matmul: one operand is forced to ", forced->str(), ", the other to the CPU tier ", name(*be),
                                 "; force both to the same place"));
  Matrix c(a.rows_, b.cols_);
  const double work = static_cast<double>(a.rows_) * static_cast<double>(b.cols_) * static_cast<double>(a.cols_);
  if (const auto d = choose_device(DeviceOp::Matmul, static_cast<std::size_t>(std::cbrt(work)), forced, be.has_value())) {
    DeviceTensor dc;
    ops::matmul(DeviceTensor::upload(*d, a), DeviceTensor::upload(*d, b), dc);
    dc.download(std::span<float>(c.data(), c.rows_ * c.cols_));
    if (forced) c.on(*forced);
    return c;
  }
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
