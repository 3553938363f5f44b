// A kernel outside decy's subset: `decy translate` must name the goto and its line, and exit with 1.
extern "C" __global__ void skip_negative(float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) goto done;
  y[i] = y[i] * 2.0f;
done:
  return;
}
