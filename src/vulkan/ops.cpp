// The Vulkan decode ops (ops.h): shapes checked on the host, one dispatch each.
#include "trueno/vulkan/ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>

#include "core/strings.h"
#include "vulkan/shaders.h"

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
  struct {
    std::uint32_t rows, cols, row_bytes, accumulate;
  } push{u32(rows, "gemv"), u32(cols, "gemv"), u32(row_bytes, "gemv"), accumulate ? 1u : 0u};
  if (gemv_by_subgroup(c, type, cols)) {  // Note [Vulkan GEMV per subgroup]
    const std::uint32_t sg = c.info().subgroup_size;
    const std::uint32_t per_subgroup = type == QuantType::Q4_K ? 2 : 1;  // gemv_rows.comp's Q4K_ROWS
    const std::uint32_t wg = std::clamp<std::uint32_t>(4 * sg, 32, 256), rows_per_group = std::max<std::uint32_t>(wg / sg, 1) * per_subgroup;
    const std::array<std::uint32_t, 4> spec = {wg, static_cast<std::uint32_t>(type), static_cast<std::uint32_t>(m), rows_per_group};
    const auto [gx, gy] = grid((rows + rows_per_group - 1) / rows_per_group);
    r.dispatch(c.pipeline("gemv_rows", 3, 16, spec), {&w, &x, &y}, push, gx, gy);
    return;
  }
  const std::uint32_t rows_per_group = rows >= 1024 ? 4 : 1;
  const std::array<std::uint32_t, 4> spec = {kWg, static_cast<std::uint32_t>(type), static_cast<std::uint32_t>(m), rows_per_group};
  const Pipeline& p = c.pipeline(reduce_module(c, "gemv", "gemv_subgroup"), 3, 16, spec);
  const auto [gx, gy] = grid((rows + rows_per_group - 1) / rows_per_group);
  r.dispatch(p, {&w, &x, &y}, push, gx, gy);
}

// Note [Vulkan GEMV per subgroup]
// gemv.comp gives a workgroup of 64 invocations a row and reduces through shared memory with barriers;
// each invocation reads a 32-element unit, so a load instruction touches 64 places 18-210 bytes apart and
// most of the row's bytes are fetched by several loads. gemv_rows.comp gives each subgroup a row and its
// lanes consecutive 16-byte parts of it (a Q4_K block is 8 such parts, a Q6_K block 8 parts of 8 values
// of each quarter), so a subgroup's load reads one contiguous stretch, and the sum is one subgroupAdd.
// It needs subgroup arithmetic (and TRUENO_VULKAN_SUBGROUP not 0); the types it has (Q4_K, Q6_K, Q8_0,
// F16 with a multiple of 8 columns) are the ones that carry the common model files' bytes.
bool gemv_by_subgroup(const Context& c, QuantType type, std::size_t cols) {
  if (!c.subgroup_reductions() || c.info().subgroup_size == 0) return false;
  return type == QuantType::Q4_K || type == QuantType::Q6_K || type == QuantType::Q8_0 || (type == QuantType::F16 && cols % 8 == 0);
}

// Note [Vulkan prefill GEMM]
// A prompt of T tokens multiplies every matrix by T activation rows. gemv takes at most kMaxGemvRows of
// them per weight read and is bound by its dequantization arithmetic, so longer prompts use a tiled GEMM:
// a workgroup dequantizes a 64-row x 32-column weight tile into shared memory once and multiplies it by
// 64 tokens' activations (gemm.comp, f32, every device).
// Where the device has NV cooperative matrices with an f16 16 x N x 16 shape and subgroups of 32,
// gemm_coopmat.comp multiplies f16 tiles (weights dequantized, activations converted) on tensor cores
// with f32 accumulators, as the CUDA prefill's f16 cuBLAS products.
bool gemm_supports(QuantType type, std::size_t cols) { return gemv_supports(type) && cols % 32 == 0; }

bool gemm_on_tensor_cores(const Context& c) {
  return c.coopmat_gemm() && c.info().subgroup_size == 32;
}

void gemm(Recorder& r, QuantType type, const Buffer& w, std::size_t rows, std::size_t cols, const Buffer& x, std::size_t T, Buffer& y,
          bool accumulate) {
  Context& c = r.context();
  need(gemm_supports(type, cols), strcat("vulkan gemm: ", quant_info(type).name, " weights of ", cols, " columns (a supported type, columns a multiple of 32)"));
  need(rows > 0 && T > 0, "vulkan gemm: empty product");
  const std::size_t row_bytes = quant_row_bytes(type, cols);
  need_bytes(w, rows * row_bytes, "gemm", "W");
  need_bytes(x, T * cols * 4, "gemm", "x");
  need_bytes(y, T * rows * 4, "gemm", "y");
  struct {
    std::uint32_t rows, cols, row_bytes, accumulate, T;
  } push{u32(rows, "gemm"), u32(cols, "gemm"), u32(row_bytes, "gemm"), accumulate ? 1u : 0u, u32(T, "gemm")};
  need((rows + 63) / 64 <= 65535 && (T + 63) / 64 <= 65535, strcat("vulkan gemm: ", rows, " x ", T, " is too large a grid"));
  const auto gx = static_cast<std::uint32_t>((rows + 63) / 64), gy = static_cast<std::uint32_t>((T + 63) / 64);
  if (gemm_on_tensor_cores(c)) {
    const std::array<std::uint32_t, 3> spec = {128, static_cast<std::uint32_t>(type), c.info().coopmat_n};
    r.dispatch(c.pipeline("gemm_coopmat", 3, sizeof push, spec), {&w, &x, &y}, &push, sizeof push, gx, gy);
    return;
  }
  const std::array<std::uint32_t, 2> spec = {256, static_cast<std::uint32_t>(type)};
  r.dispatch(c.pipeline("gemm", 3, sizeof push, spec), {&w, &x, &y}, &push, sizeof push, gx, gy);
}

// Note [Vulkan shaders from CUDA]
// Some ops dispatch a module that decy (docs/DECY.md) translated at build time from the CUDA backend's own
// kernel (vulkan_decy_shader_list in src/vulkan/CMakeLists.txt): swiglu, add_inplace and kv_append from
// layer_ops.cu, add_bias from prefill_ops.cu's add_rows, so one CUDA source defines what both backends
// compute. The module keeps the CUDA kernel's interface and is launched as CUDA launches the kernel
// (src/cuda/ops/layer.cpp, prefill.cpp): the pointer parameters are the bindings in order (g, u; x, y; k,
// v, k cache, v cache, pos; y, b: the Vulkan ops' order too), `int n` is the 4-byte push constant, a
// workgroup of kDecyBlock = 256 invocations (specialization constant 0 = blockDim.x) per block, and a 1-D
// grid (the kernel's index is blockIdx.x * blockDim.x + threadIdx.x, guarded by i < n; add_rows' row is
// blockIdx.y, one per row). The hand-written shader (kept under the op's old module name) runs where that
// does not fit: more workgroups than maxComputeWorkGroupCount (65535 on lavapipe: above 16.7M values or
// 65535 rows; the hand-written shaders spread over a 2-D grid), a thread index past INT_MAX (the kernel's
// int), workgroups of 256 above the device's limit, no decy module in the build (cmake/TruenoDecy.cmake),
// or Context::decy_shaders() off; for kv_append also more than one row (the CUDA kernel appends one, at
// *pos: the decode step; a prompt's rows go through the hand-written shader); for kv_append and add_rows a
// device without shaderInt64 (they index with u64), for kv_append without storageBuffer16BitAccess (it
// stores u16 elements, where the hand-written shader stores pairs of halves as 32-bit words). Both compute
// the same (silu(g) * u with the device's exp; one f32 addition; f16 rounded to nearest even), are held to
// the same entry of contracts/gpu/vulkan.yaml (EmbeddedShader::stands_for) and are tested both ways
// (VulkanGpu.ElementwiseLayerOpsMatchTheCpu, VulkanGpu.RopeAndKvAppendMatchTheCpu,
// VulkanGpu.PromptRowsMatchTheCpu).
namespace {
constexpr std::uint32_t kDecyBlock = 256;

// Whether the decy-built `module` runs n values on c (Note [Vulkan shaders from CUDA]).
bool decy_fits(const Context& c, const char* module, std::size_t n) {
  if (!c.decy_shaders() || find_shader(module) == nullptr || n == 0 || kDecyBlock > c.info().max_workgroup_invocations) return false;
  const std::size_t groups = (n + kDecyBlock - 1) / kDecyBlock;
  return groups <= c.info().max_workgroup_count_x && groups * kDecyBlock - 1 <= 0x7fffffffu;
}
}  // namespace

const char* kv_append_module(const Context& c, std::size_t n, std::size_t rows) {
  const bool fits = rows == 1 && c.info().storage_16bit && c.info().int64 && decy_fits(c, "kv_append_decy", n);
  return fits ? "kv_append_decy" : "kv_append";
}

void rmsnorm(Recorder& r, const Buffer& x, const Buffer& weight, float eps, Buffer& out, std::size_t count, std::size_t n) {
  Context& c = r.context();
  need(count > 0 && n > 0, "vulkan rmsnorm: empty");
  need_bytes(x, count * n * 4, "rmsnorm", "x");
  need_bytes(out, count * n * 4, "rmsnorm", "out");
  need_bytes(weight, n * 4, "rmsnorm", "weight");
  const std::array<std::uint32_t, 1> spec = {256};  // one workgroup per row: all of it at once
  const Pipeline& p = c.pipeline(reduce_module(c, "rmsnorm", "rmsnorm_subgroup"), 3, 12, spec);
  struct {
    std::uint32_t n;
    float eps;
    std::uint32_t count;
  } push{u32(n, "rmsnorm"), eps, u32(count, "rmsnorm")};
  const auto [gx, gy] = grid(count);
  r.dispatch(p, {&x, &weight, &out}, push, gx, gy);
}

void rope(Recorder& r, Buffer& v, int heads, const Buffer& pos, const RopeParams& rp, std::size_t rows) {
  Context& c = r.context();
  need(heads > 0 && rp.head_dim > 0 && rp.rope_dim > 0 && rp.rope_dim % 2 == 0 && rp.rope_dim <= rp.head_dim && rows > 0,
       strcat("vulkan rope: heads ", heads, ", head_dim ", rp.head_dim, ", rope_dim ", rp.rope_dim, " (even, <= head_dim), rows ", rows));
  need_bytes(v, rows * static_cast<std::size_t>(heads) * rp.head_dim * 4, "rope", "v");
  need_bytes(pos, 4, "rope", "pos");
  if (rp.freqs) need_bytes(*rp.freqs, static_cast<std::size_t>(rp.rope_dim / 2) * 4, "rope", "freqs");
  const std::array<std::uint32_t, 3> spec = {kWg, rp.neox ? 1u : 0u, rp.freqs ? 1u : 0u};
  const Pipeline& p = c.pipeline("rope", 3, 20, spec);
  struct {
    std::uint32_t heads, head_dim, rope_dim;
    float theta_scale;
    std::uint32_t rows;
  } push{static_cast<std::uint32_t>(heads), static_cast<std::uint32_t>(rp.head_dim), static_cast<std::uint32_t>(rp.rope_dim), rp.theta_scale,
         u32(rows, "rope")};
  const std::size_t threads = rows * static_cast<std::size_t>(heads) * (rp.rope_dim / 2);
  const auto [gx, gy] = grid((threads + kWg - 1) / kWg);
  r.dispatch(p, {&v, &pos, rp.freqs ? rp.freqs : &pos}, push, gx, gy);
}

void kv_append(Recorder& r, const Buffer& k, const Buffer& v, Buffer& k_cache, Buffer& v_cache, const Buffer& pos, std::size_t n,
               std::size_t rows) {
  Context& c = r.context();
  need(n > 0 && n % 2 == 0 && rows > 0, strcat("vulkan kv_append: n = ", n, " must be even, rows ", rows));
  need_bytes(k, rows * n * 4, "kv_append", "k");
  need_bytes(v, rows * n * 4, "kv_append", "v");
  need_bytes(k_cache, rows * n * 2, "kv_append", "k_cache");
  need_bytes(v_cache, rows * n * 2, "kv_append", "v_cache");
  need_bytes(pos, 4, "kv_append", "pos");
  if (const char* module = kv_append_module(c, n, rows); module != std::string_view("kv_append")) {  // the CUDA kernel's launch
    const std::array<std::uint32_t, 1> spec = {kDecyBlock};
    const auto push = static_cast<std::int32_t>(n);  // int n; decy_fits checked the range
    r.dispatch(c.pipeline(module, 5, 4, spec), {&k, &v, &k_cache, &v_cache, &pos}, push, static_cast<std::uint32_t>((n + kDecyBlock - 1) / kDecyBlock));
    return;
  }
  const std::array<std::uint32_t, 1> spec = {kWg};
  const Pipeline& p = c.pipeline("kv_append", 5, 8, spec);
  const std::uint32_t push[2] = {u32(n, "kv_append"), u32(rows, "kv_append")};
  const auto [gx, gy] = grid((rows * n / 2 + kWg - 1) / kWg);
  r.dispatch(p, {&k, &v, &k_cache, &v_cache, &pos}, push, gx, gy);
}

namespace {
// a[i] op= b[i % b_n] for i < n. A module named "<shader>_decy" has the CUDA kernel's interface (b_n == n).
void elementwise(Recorder& r, const char* module, Buffer& a, const Buffer& b, std::size_t n, std::size_t b_n) {
  need(n > 0 && b_n > 0 && n % b_n == 0, strcat("vulkan ", module, ": ", n, " values, ", b_n, " to repeat over them"));
  need_bytes(a, n * 4, module, "a");
  need_bytes(b, b_n * 4, module, "b");
  if (std::string_view(module).ends_with("_decy")) {
    need(b_n == n, strcat("vulkan ", module, ": the CUDA kernel repeats nothing (", b_n, " of ", n, ")"));
    const std::array<std::uint32_t, 1> spec = {kDecyBlock};
    const Pipeline& p = r.context().pipeline(module, 2, 4, spec);
    const auto push = static_cast<std::int32_t>(n);  // int n; decy_fits checked the range
    r.dispatch(p, {&a, &b}, push, static_cast<std::uint32_t>((n + kDecyBlock - 1) / kDecyBlock));
    return;
  }
  const std::array<std::uint32_t, 1> spec = {kWg};
  const Pipeline& p = r.context().pipeline(module, 2, 8, spec);
  const std::uint32_t push[2] = {u32(n, module), u32(b_n, module)};
  const auto [gx, gy] = grid((n + kWg - 1) / kWg);
  r.dispatch(p, {&a, &b}, push, gx, gy);
}
}  // namespace

const char* swiglu_module(const Context& c, std::size_t n) { return decy_fits(c, "swiglu_decy", n) ? "swiglu_decy" : "swiglu"; }
const char* add_inplace_module(const Context& c, std::size_t n) { return decy_fits(c, "add_decy", n) ? "add_decy" : "add"; }

void swiglu(Recorder& r, Buffer& g, const Buffer& u, std::size_t n) { elementwise(r, swiglu_module(r.context(), n), g, u, n, n); }
void add_inplace(Recorder& r, Buffer& y, const Buffer& x, std::size_t n) { elementwise(r, add_inplace_module(r.context(), n), y, x, n, n); }

const char* add_bias_module(const Context& c, std::size_t rows, std::size_t n) {
  const bool fits = rows >= 1 && rows <= c.info().max_workgroup_count_y && c.info().int64 && decy_fits(c, "add_rows_decy", n);
  return fits ? "add_rows_decy" : "add";
}

void add_bias(Recorder& r, Buffer& y, const Buffer& b, std::size_t rows, std::size_t n) {
  const char* module = add_bias_module(r.context(), rows, n);
  if (module == std::string_view("add")) return elementwise(r, "add", y, b, rows * n, n);  // also where rows or n is 0
  need_bytes(y, rows * n * 4, module, "y");
  need_bytes(b, n * 4, module, "b");
  const std::array<std::uint32_t, 1> spec = {kDecyBlock};
  const auto push = static_cast<std::int32_t>(n);  // int n; decy_fits checked the range
  const auto gx = static_cast<std::uint32_t>((n + kDecyBlock - 1) / kDecyBlock);
  r.dispatch(r.context().pipeline(module, 2, 4, spec), {&y, &b}, push, gx, static_cast<std::uint32_t>(rows));  // row = blockIdx.y
}

// Note [Vulkan decode attention]
// Three dispatches, as the CUDA decode attention: (1) per (chunk of 64 positions, head) the scores and
// the chunk's max and sum of exp; (2) per (chunk, head) the global max and sum from every chunk's
// statistics, the f16-rounded softmax weights and their product with the chunk's values; (3) per head the
// sum of its chunks. Splitting over the sequence keeps every workgroup's work bounded (a long context
// spreads over more workgroups instead of serializing in one per head), and chunks past the position
// return at once, so one recording serves every position below its bucket.
AttentionScratch::AttentionScratch(Context& c, std::size_t n_ctx_, std::size_t heads_, std::size_t head_dim_, std::size_t rows_)
    : n_ctx(n_ctx_),
      heads(heads_),
      head_dim(head_dim_),
      chunks((n_ctx_ + kAttentionChunk - 1) / kAttentionChunk),
      rows(std::max<std::size_t>(rows_, 1)),
      scores(c, std::max<std::size_t>(rows * heads_ * n_ctx_, 1) * 4),
      stats(c, std::max<std::size_t>(rows * heads_ * chunks, 1) * 8),
      parts(c, std::max<std::size_t>(rows * heads_ * chunks * head_dim_, 1) * 4) {}

void attention_decode(Recorder& r, const Buffer& q, const Buffer& k_cache, const Buffer& v_cache, const Buffer& pos,
                      AttentionScratch& sc, Buffer& att, std::size_t group, std::size_t kv_row, std::size_t positions, std::size_t rows,
                      std::size_t row0) {
  Context& c = r.context();
  const std::size_t heads = sc.heads, hd = sc.head_dim;
  need(heads > 0 && hd > 0 && hd % 2 == 0 && hd <= 256, strcat("vulkan attention: head_dim ", hd, " (even, 2..256)"));
  need(group >= 1 && heads % group == 0 && (heads / group) * hd <= kv_row,
       strcat("vulkan attention: ", heads, " heads in groups of ", group, " do not fit KV rows of ", kv_row));
  need(kv_row % 2 == 0, strcat("vulkan attention: KV row of ", kv_row, " values (must be even)"));
  need(positions >= 1 && positions <= sc.n_ctx, strcat("vulkan attention: ", positions, " positions, scratch for ", sc.n_ctx));
  need(rows >= 1 && rows <= sc.rows, strcat("vulkan attention: ", rows, " query rows, scratch for ", sc.rows));
  need_bytes(q, (row0 + rows) * heads * hd * 4, "attention", "q");
  need_bytes(k_cache, positions * kv_row * 2, "attention", "k_cache");
  need_bytes(v_cache, positions * kv_row * 2, "attention", "v_cache");
  need_bytes(att, (row0 + rows) * heads * hd * 4, "attention", "att");
  need_bytes(pos, 4, "attention", "pos");
  const std::size_t launched = (positions + kAttentionChunk - 1) / kAttentionChunk;
  struct {
    std::uint32_t heads, head_dim, group, kv_row, chunks, launched, n_ctx, rows, row0;
    float scale;
  } push{u32(heads, "attention"), u32(hd, "attention"), u32(group, "attention"), u32(kv_row, "attention"),
         u32(sc.chunks, "attention"), u32(launched, "attention"), u32(sc.n_ctx, "attention"), u32(rows, "attention"),
         u32(row0, "attention"), 1.0f / std::sqrt(static_cast<float>(hd))};
  const std::array<std::uint32_t, 1> spec = {static_cast<std::uint32_t>(kAttentionChunk)};
  const auto [gx, gy] = grid(launched * heads * rows);
  r.dispatch(c.pipeline("attention_scores", 5, sizeof push, spec), {&q, &k_cache, &pos, &sc.scores, &sc.stats}, push, gx, gy);
  r.dispatch(c.pipeline("attention_values", 5, sizeof push, spec), {&v_cache, &pos, &sc.scores, &sc.stats, &sc.parts}, push, gx, gy);
  const auto [hx, hy] = grid(heads * rows);
  r.dispatch(c.pipeline("attention_combine", 3, sizeof push, spec), {&pos, &sc.parts, &att}, push, hx, hy);
}

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
