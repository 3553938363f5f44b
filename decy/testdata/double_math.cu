// C's double math through decy (Note [Double math], decy/glsl_support.cpp): exp, log, pow, sin and cos of
// doubles, each against std:: on the host (decy_double_test.cpp). out[5 i + f] for function f of x[i]
// (pow: x[i] to the power y[i]).
__global__ void double_math(const double* __restrict__ x, const double* __restrict__ y, double* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const double v = x[i];
  out[5 * i] = exp(v);
  out[5 * i + 1] = log(v);
  out[5 * i + 2] = pow(v, y[i]);
  out[5 * i + 3] = sin(v);
  out[5 * i + 4] = cos(v);
}
