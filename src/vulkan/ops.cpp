// The Vulkan decode ops (ops.h): shapes checked on the host, one dispatch each.
#include "trueno/vulkan/ops.h"

#include <algorithm>
#include <array>
#include <string>

#include "core/strings.h"

namespace trueno::vulkan {
namespace {

constexpr std::uint32_t kWg = 64;  // power of two (the shared-memory reductions)

// groups as an x, y grid (x <= 65535, the guaranteed maxComputeWorkGroupCount[0]).
std::pair<std::uint32_t, std::uint32_t> grid(std::size_t groups) {
  const std::size_t x = std::min<std::size_t>(std::max<std::size_t>(groups, 1), 65535);
  return {static_cast<std::uint32_t>(x), static_cast<std::uint32_t>((groups + x - 1) / x)};
}

void need(bool ok, const std::string& what) {
  if (!ok) throw ShapeError(what);
}

void need_bytes(const Buffer& b, std::size_t bytes, const char* op, const char* name) {
  need(b.bytes() >= bytes, strcat("vulkan ", op, ": ", name, " has ", b.bytes(), " bytes, needs ", bytes));
}

std::uint32_t u32(std::size_t v, const char* op) {
  need(v <= 0xffffffffu, strcat("vulkan ", op, ": ", v, " does not fit 32 bits"));
  return static_cast<std::uint32_t>(v);
}

const char* reduce_module(Context& c, const char* plain, const char* subgroup) { return c.subgroup_reductions() ? subgroup : plain; }

}  // namespace

bool gemv_supports(QuantType type) {
  switch (type) {
    case QuantType::F32: case QuantType::F16: case QuantType::BF16: case QuantType::Q4_0: case QuantType::Q8_0:
    case QuantType::Q4_K: case QuantType::Q5_K: case QuantType::Q6_K:
      return true;
    default:  // Q8_K (an activation format) and ids trueno does not know
      return false;
  }
}

void gemv(Recorder& r, QuantType type, const Buffer& w, std::size_t rows, std::size_t cols, const Buffer& x, std::size_t m,
          Buffer& y, bool accumulate) {
  Context& c = r.context();
  if (!gemv_supports(type)) {
    std::string name = strcat("id ", static_cast<std::uint32_t>(type)), supported;
    for (QuantType t : kQuantTypes) {
      if (t == type) name = quant_info(t).name;
      if (gemv_supports(t)) supported += (supported.empty() ? "" : ", ") + std::string(quant_info(t).name);
    }
    throw InvalidArgument(strcat("vulkan gemv: weight type ", name, " is not supported (supported: ", supported, ")"));
  }
  need(m >= 1 && m <= kMaxGemvRows, strcat("vulkan gemv: ", m, " activation rows (1..", kMaxGemvRows, ")"));
  need(rows > 0 && cols > 0, "vulkan gemv: empty matrix");
  const std::size_t row_bytes = quant_row_bytes(type, cols);  // ShapeError when cols is not whole blocks
  need_bytes(w, rows * row_bytes, "gemv", "W");
  need_bytes(x, m * cols * 4, "gemv", "x");
  need_bytes(y, m * rows * 4, "gemv", "y");
  const std::uint32_t rows_per_group = rows >= 1024 ? 4 : 1;
  const std::array<std::uint32_t, 4> spec = {kWg, static_cast<std::uint32_t>(type), static_cast<std::uint32_t>(m), rows_per_group};
  const Pipeline& p = c.pipeline(reduce_module(c, "gemv", "gemv_subgroup"), 3, 16, spec);
  struct {
    std::uint32_t rows, cols, row_bytes, accumulate;
  } push{u32(rows, "gemv"), u32(cols, "gemv"), u32(row_bytes, "gemv"), accumulate ? 1u : 0u};
  const auto [gx, gy] = grid((rows + rows_per_group - 1) / rows_per_group);
  r.dispatch(p, {&w, &x, &y}, push, gx, gy);
}

void rmsnorm(Recorder& r, const Buffer& x, const Buffer& weight, float eps, Buffer& out, std::size_t count, std::size_t n) {
  Context& c = r.context();
  need(count > 0 && n > 0, "vulkan rmsnorm: empty");
  need_bytes(x, count * n * 4, "rmsnorm", "x");
  need_bytes(out, count * n * 4, "rmsnorm", "out");
  need_bytes(weight, n * 4, "rmsnorm", "weight");
  const std::array<std::uint32_t, 1> spec = {kWg};
  const Pipeline& p = c.pipeline(reduce_module(c, "rmsnorm", "rmsnorm_subgroup"), 3, 12, spec);
  struct {
    std::uint32_t n;
    float eps;
    std::uint32_t count;
  } push{u32(n, "rmsnorm"), eps, u32(count, "rmsnorm")};
  const auto [gx, gy] = grid(count);
  r.dispatch(p, {&x, &weight, &out}, push, gx, gy);
}

void rope(Recorder& r, Buffer& v, int heads, const Buffer& pos, const RopeParams& rp) {
  Context& c = r.context();
  need(heads > 0 && rp.head_dim > 0 && rp.rope_dim > 0 && rp.rope_dim % 2 == 0 && rp.rope_dim <= rp.head_dim,
       strcat("vulkan rope: heads ", heads, ", head_dim ", rp.head_dim, ", rope_dim ", rp.rope_dim, " (even, <= head_dim)"));
  need_bytes(v, static_cast<std::size_t>(heads) * rp.head_dim * 4, "rope", "v");
  need_bytes(pos, 4, "rope", "pos");
  if (rp.freqs) need_bytes(*rp.freqs, static_cast<std::size_t>(rp.rope_dim / 2) * 4, "rope", "freqs");
  const std::array<std::uint32_t, 3> spec = {kWg, rp.neox ? 1u : 0u, rp.freqs ? 1u : 0u};
  const Pipeline& p = c.pipeline("rope", 3, 16, spec);
  struct {
    std::uint32_t heads, head_dim, rope_dim;
    float theta_scale;
  } push{static_cast<std::uint32_t>(heads), static_cast<std::uint32_t>(rp.head_dim), static_cast<std::uint32_t>(rp.rope_dim), rp.theta_scale};
  const std::size_t threads = static_cast<std::size_t>(heads) * (rp.rope_dim / 2);
  const auto [gx, gy] = grid((threads + kWg - 1) / kWg);
  r.dispatch(p, {&v, &pos, rp.freqs ? rp.freqs : &pos}, push, gx, gy);
}

void kv_append(Recorder& r, const Buffer& k, const Buffer& v, Buffer& k_cache, Buffer& v_cache, const Buffer& pos, std::size_t n) {
  Context& c = r.context();
  need(n > 0 && n % 2 == 0, strcat("vulkan kv_append: n = ", n, " must be even"));
  need_bytes(k, n * 4, "kv_append", "k");
  need_bytes(v, n * 4, "kv_append", "v");
  need_bytes(k_cache, n * 2, "kv_append", "k_cache");
  need_bytes(v_cache, n * 2, "kv_append", "v_cache");
  need_bytes(pos, 4, "kv_append", "pos");
  const std::array<std::uint32_t, 1> spec = {kWg};
  const Pipeline& p = c.pipeline("kv_append", 5, 4, spec);
  const std::uint32_t push = u32(n, "kv_append");
  const auto [gx, gy] = grid((n / 2 + kWg - 1) / kWg);
  r.dispatch(p, {&k, &v, &k_cache, &v_cache, &pos}, push, gx, gy);
}

namespace {
void elementwise(Recorder& r, const char* module, Buffer& a, const Buffer& b, std::size_t n) {
  need(n > 0, strcat("vulkan ", module, ": empty"));
  need_bytes(a, n * 4, module, "a");
  need_bytes(b, n * 4, module, "b");
  const std::array<std::uint32_t, 1> spec = {kWg};
  const Pipeline& p = r.context().pipeline(module, 2, 4, spec);
  const std::uint32_t push = u32(n, module);
  const auto [gx, gy] = grid((n + kWg - 1) / kWg);
  r.dispatch(p, {&a, &b}, push, gx, gy);
}
}  // namespace

void swiglu(Recorder& r, Buffer& g, const Buffer& u, std::size_t n) { elementwise(r, "swiglu", g, u, n); }
void add_inplace(Recorder& r, Buffer& y, const Buffer& x, std::size_t n) { elementwise(r, "add", y, x, n); }

void argmax(Recorder& r, const Buffer& x, std::size_t count, std::size_t n, Buffer& out) {
  need(count > 0 && n > 0, "vulkan argmax: empty");
  need_bytes(x, count * n * 4, "argmax", "x");
  need_bytes(out, count * 4, "argmax", "out");
  const std::array<std::uint32_t, 1> spec = {256};
  const Pipeline& p = r.context().pipeline("argmax", 2, 8, spec);
  struct {
    std::uint32_t n, count;
  } push{u32(n, "argmax"), u32(count, "argmax")};
  const auto [gx, gy] = grid(count);
  r.dispatch(p, {&x, &out}, push, gx, gy);
}

}  // namespace trueno::vulkan
