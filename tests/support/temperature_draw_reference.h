// realizar's Sampler::pick_in_id_order (Note [Temperature alone], realizar/src/sampler/sampler.cpp),
// restated for the device tests of temperature_draw (src/cuda/sample_test.cpp, decy/decy_double_test.cpp):
// the weights w = trueno's exp of (x - max) * inv_t; sums of 256 ids in double in id order, then of the
// sums; r = u * total walks the blocks, then the ids of the block it falls in.
#pragma once
#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "trueno/ops.h"

namespace trueno::test {

inline std::vector<float> draw_weights(const std::vector<float>& x, float inv_t) {
  const float top = *std::max_element(x.begin(), x.end());
  std::vector<float> w(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) w[i] = (x[i] - top) * inv_t;
  trueno::ops::exp(w, w);
  return w;
}

inline int draw(const std::vector<float>& w, double u) {
  const std::size_t n = w.size(), blocks = (n + 255) / 256;
  std::vector<double> sums(blocks, 0.0);
  for (std::size_t b = 0; b < blocks; ++b)
    for (std::size_t i = b * 256; i < std::min(n, (b + 1) * 256); ++i) sums[b] += w[i];
  double total = 0;
  for (double s : sums) total += s;
  double r = u * total;
  for (std::size_t b = 0; b < blocks; ++b) {
    if (!(r < sums[b])) {
      r -= sums[b];
      continue;
    }
    for (std::size_t i = b * 256; i < std::min(n, (b + 1) * 256); ++i) {
      if (w[i] == 0.0f) continue;
      if (r < w[i]) return static_cast<int>(i);
      r -= w[i];
    }
  }
  for (std::size_t i = n; i-- > 0;)
    if (w[i] != 0.0f) return static_cast<int>(i);
  return 0;
}

}  // namespace trueno::test
