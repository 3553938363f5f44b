// Fused quantized matvec / gate-up-SwiGLU / batched matmul: argument checks, activation
// quantization, and the row split across the pool; the block dots come from the dispatch table.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/parallel.h"
#include "core/strings.h"
#include "cpu/dispatch.h"
#include "cpu/kernels/qdot/qgemm_amx.h"
#include "quant/blocks.h"
#include "quant/finite.h"
#include "quant/pack_x8.h"
#include "trueno/error.h"
#include "trueno/quant.h"
#include "trueno/threads.h"

namespace trueno {
namespace {

using QDotFn = float (*)(const void*, const void*, std::size_t);
using QDotRowsFn = void (*)(const void*, const void*, std::size_t, std::size_t, std::size_t, float*);
using QDotX8Fn = void (*)(const void*, const void*, std::size_t, float*);

QDotRowsFn qdot_rows_for(const cpu::KernelTable& t, QuantType type) {
  switch (type) {
    case QuantType::Q4_0: return t.dot_rows_q4_0_q8_0;
    case QuantType::Q8_0: return t.dot_rows_q8_0_q8_0;
    case QuantType::Q4_K: return t.dot_rows_q4_k_q8_k;
    case QuantType::Q5_K: return t.dot_rows_q5_k_q8_k;
    case QuantType::Q6_K: return t.dot_rows_q6_k_q8_k;
    default: return nullptr;
  }
}

// The block dot for a weight type and the activation type it pairs with; null for float weights.
QDotFn qdot_for(const cpu::KernelTable& t, QuantType type, QuantType* act) {
  switch (type) {
    case QuantType::Q4_0: *act = QuantType::Q8_0; return t.dot_q4_0_q8_0;
    case QuantType::Q8_0: *act = QuantType::Q8_0; return t.dot_q8_0_q8_0;
    case QuantType::Q4_K: *act = QuantType::Q8_K; return t.dot_q4_k_q8_k;
    case QuantType::Q5_K: *act = QuantType::Q8_K; return t.dot_q5_k_q8_k;
    case QuantType::Q6_K: *act = QuantType::Q8_K; return t.dot_q6_k_q8_k;
    case QuantType::F32: case QuantType::F16: case QuantType::BF16: *act = type; return nullptr;
    case QuantType::Q8_K: break;
    case QuantType::I32: throw InvalidArgument("quant_matvec: i32 is an integer tensor type, not a weight format");
  }
  throw InvalidArgument(strcat("quant_matvec: ", quant_info(type).name, " is an activation format, not a weight format"));
}

// Everything a row task needs: one weight matrix (or two), the quantized activations, outputs.
struct Job {
  const cpu::KernelTable* table;
  QDotFn dot;
  QDotRowsFn dot_rows;  // m > 1: one weight row against all activation rows
  QuantType type;
  const std::byte* w[2];
  int n_w;
  std::size_t rows, cols, row_bytes, rows_per_task;
  const std::byte* xq;     // m rows of quantized activations (quantized types)
  const float* x;          // m rows of f32 activations (float types)
  std::size_t xq_bytes, m;
  float* y[2];             // y[k][i * rows + r]
  const std::byte* packed[2];  // w[k]'s rows [0, packed_rows) interleaved by 8 (m == 1), or null
  std::size_t packed_rows;
  QDotX8Fn dot_x8;
  std::size_t x8_block_bytes;  // one block of 8 packed rows
};

// A PackedQuantMatrix for matrix k of g (null: none), after checking it is that matrix.
void attach_packed(const char* op, Job& g, int k, const PackedQuantMatrix* p) {
  if (p == nullptr) return;
  if (p->type() != g.type || p->rows() != g.rows || p->cols() != g.cols || p->original().data() != g.w[k])
    throw InvalidArgument(strcat(op, ": the packed matrix (", quant_info(p->type()).name, ", ", p->rows(), " x ",
                                 p->cols(), ") is not the weight matrix passed (", quant_info(g.type).name, ", ", g.rows,
                                 " x ", g.cols, ")"));
  if (g.m != 1) return;  // prefill: the original rows
  g.packed[k] = p->packed().data();
  g.packed_rows = p->packed_rows();
  g.dot_x8 = p->type() == QuantType::Q6_K   ? g.table->dot_x8_q6_k_q8_k
             : p->type() == QuantType::Q8_0 ? g.table->dot_x8_q8_0_q8_0
                                            : g.table->dot_x8_q4_k_q8_k;
  g.x8_block_bytes = quant::x8_layout(p->type()).block_bytes;
}

// Note [Tasks per thread]
// Rows per task: at least ~32K weight bytes, and at most kTasksPerThread tasks per thread for the matrix;
// a multiple of 8 when rows are packed (tasks take whole groups). With 32 KiB tasks alone, a 2-thread
// decode of the 1.1B model took ~20,000 tasks per token from the shared counter (Note [Dynamic task
// assignment]), and each hand-off cost more than its share: on the 2-vCPU dev machine (tg32, three
// interleaved rounds) 29.6 / 32.5 / 32.3 tok/s, against 43.2 / 39.2 / 37.8 with 8 tasks per thread and
// the peer's 33-39. Prompts (m > 1) keep 32 KiB tasks: their tasks are long, and pp64 was 4% slower with
// the larger ones. Eight per thread still balances a thread that is slow for a moment; on the 16-core
// Xeon the floor decides for every matrix of 4 MB or less, and a 7B matrix gets ~73 KiB tasks, inside the
// 8-64 KiB range measured there as equal.
constexpr std::size_t kTasksPerThread = 8;

std::size_t rows_per_task(const Job& g) {
  const std::size_t per_task = std::max<std::size_t>(1, (std::size_t{32} << 10) / std::max<std::size_t>(1, g.row_bytes));
  const std::size_t tasks = kTasksPerThread * static_cast<std::size_t>(std::max(1, num_threads()));
  const std::size_t n = g.m == 1 ? std::max(per_task, (g.rows + tasks - 1) / tasks) : per_task;
  return g.dot_x8 ? (n + 7) / 8 * 8 : n;
}

// Float weights: a row as f32 in scratch (F32 copied: rows may be unaligned for float loads; 16-bit
// rows widened with the conversion kernels), once per weight row for all activation rows.
const float* widen_row(const Job& g, const std::byte* wr) {
  float* tmp = detail::thread_scratch(detail::ScratchSlot::kRow, g.cols);
  if (g.type == QuantType::F32) {
    std::memcpy(tmp, wr, g.cols * 4);
    return tmp;
  }
  auto* halves = reinterpret_cast<std::uint16_t*>(detail::thread_scratch(detail::ScratchSlot::kGather, g.cols));
  std::memcpy(halves, wr, g.cols * 2);
  (g.type == QuantType::F16 ? g.table->f16_to_f32 : g.table->bf16_to_f32)(halves, tmp, g.cols);
  return tmp;
}

// Prefill (m > 1, quantized weights): the task's weight rows (~32 KiB) against one slice of activation
// rows at a time, the slice sized to stay in L2 while every weight row of the task passes over it, so
// neither operand streams from memory once per row of the other.
void run_rows_batched(const Job& g, std::size_t begin, std::size_t end, std::size_t nb) {
  float* out = detail::thread_scratch(detail::ScratchSlot::kRowsOut, g.m);
  // A multiple of 8: the multi-row block dots take activation rows in groups of 8 (one per lane).
  const std::size_t slice = std::max<std::size_t>(8, (std::size_t{128} << 10) / g.xq_bytes / 8 * 8);
  for (std::size_t i0 = 0; i0 < g.m; i0 += slice) {
    const std::size_t n = std::min(slice, g.m - i0);
    for (std::size_t r = begin; r < end; ++r)
      for (int k = 0; k < g.n_w; ++k) {
        g.dot_rows(g.w[k] + r * g.row_bytes, g.xq + i0 * g.xq_bytes, g.xq_bytes, n, nb, out);
        for (std::size_t i = 0; i < n; ++i) g.y[k][(i0 + i) * g.rows + r] = out[i];
      }
  }
}

// Decode with packed rows: whole groups of 8 by the 8-row kernel, the rest (and unpacked matrices) by
// the single-row dot; begin is a multiple of 8 (rows_per_task).
void run_rows_x8(const Job& g, std::size_t begin, std::size_t end, std::size_t nb) {
  const std::size_t group_bytes = nb * g.x8_block_bytes;
  for (std::size_t r = begin; r < end;) {
    const bool whole = r + 8 <= end && r + 8 <= g.packed_rows;
    for (int k = 0; k < g.n_w; ++k) {
      if (whole && g.packed[k]) {
        g.dot_x8(g.packed[k] + r / 8 * group_bytes, g.xq, nb, g.y[k] + r);
      } else {
        for (std::size_t i = r; i < (whole ? r + 8 : r + 1); ++i) g.y[k][i] = g.dot(g.w[k] + i * g.row_bytes, g.xq, nb);
      }
    }
    r += whole ? 8 : 1;
  }
}

void run_rows(void* ctx, std::size_t task) {
  const Job& g = *static_cast<const Job*>(ctx);
  const std::size_t begin = task * g.rows_per_task, end = std::min(g.rows, begin + g.rows_per_task);
  const std::size_t nb = g.cols / quant_info(g.type).block_elems;
  if (g.dot && g.m > 1) return run_rows_batched(g, begin, end, nb);
  if (g.dot_x8) return run_rows_x8(g, begin, end, nb);
  for (std::size_t r = begin; r < end; ++r)
    for (int k = 0; k < g.n_w; ++k) {
      const std::byte* wr = g.w[k] + r * g.row_bytes;
      if (!g.dot) {
        const float* wf = widen_row(g, wr);
        for (std::size_t i = 0; i < g.m; ++i) g.y[k][i * g.rows + r] = g.table->dot(wf, g.x + i * g.cols, g.cols);
      } else {
        for (std::size_t i = 0; i < g.m; ++i) g.y[k][i * g.rows + r] = g.dot(wr, g.xq + i * g.xq_bytes, nb);
      }
    }
}

// Prefill of Q4_K / Q6_K weights on AMX tiles (Note in cpu/kernels/qdot/qgemm_amx.h): the activations are
// repacked once into tile layout, then each task multiplies 16 weight rows with all activation rows.
void run_amx(const Job& g) {
  const std::size_t nb = g.cols / 256, groups = (g.m + 15) / 16;
  auto* pack = detail::thread_scratch(detail::ScratchSlot::kAmxPack, (cpu::amx::packed_activation_bytes(g.m, nb) + 3) / 4);
  struct PackCtx {
    const Job* g;
    std::size_t nb;
    float* pack;
  } pc{&g, nb, pack};
  detail::parallel_run(groups, [](void* p, std::size_t grp) {
    const auto& c = *static_cast<const PackCtx*>(p);
    cpu::amx::pack_activation_group(c.g->xq, c.g->xq_bytes, c.g->m, c.nb, grp, c.pack);
  }, &pc);
  detail::parallel_run((g.rows + 15) / 16, [](void* p, std::size_t task) {
    const auto& c = *static_cast<const PackCtx*>(p);
    const Job& g = *c.g;
    void* scratch = detail::thread_scratch(detail::ScratchSlot::kAmxWeights, (cpu::amx::weight_scratch_bytes(c.nb) + 3) / 4);
    const std::size_t r0 = 16 * task, nr = std::min<std::size_t>(16, g.rows - r0);
    const auto rows_fn = g.type == QuantType::Q4_K ? cpu::amx::q4k_rows : cpu::amx::q6k_rows;
    for (int k = 0; k < g.n_w; ++k) rows_fn(g.w[k], g.row_bytes, r0, nr, c.pack, g.m, c.nb, g.y[k], g.rows, scratch);
  }, &pc);
}

void check(const char* op, QuantType type, std::size_t w_bytes, std::size_t rows, std::size_t cols, std::size_t x_size,
           std::size_t m, std::size_t y_size) {
  const std::size_t rb = quant_row_bytes(type, cols);
  if (w_bytes != rows * rb)
    throw ShapeError(strcat(op, ": ", rows, " rows of ", cols, " ", quant_info(type).name, " take ", rows * rb,
                            " bytes, the weights have ", w_bytes));
  if (x_size != m * cols || y_size != m * rows)
    throw ShapeError(strcat(op, ": x has ", x_size, " values (need ", m * cols, "), y has ", y_size, " (need ", m * rows,
                            ")"));
}

// The activations, quantized in chunks of 8 blocks across the pool (a serial pass would be a tenth of
// a 16-thread matvec). A decode step's single row of up to 8192 values is quantized on the calling
// thread: with the SIMD quantizers that takes a few microseconds, less than handing it to the pool and
// waiting for the slowest thread (one of 13 pool hand-offs per layer before).
void quantize_activations(QuantType act, std::span<const float> x, std::size_t m, std::size_t cols, std::byte* xq,
                          std::size_t xq_row_bytes) {
  if (m == 1 && cols <= 8192) return quantize(act, x.first(cols), std::span<std::byte>(xq, xq_row_bytes));
  struct Ctx {
    QuantType act;
    std::span<const float> x;
    std::size_t cols, chunk_elems, chunks_per_row, xq_row_bytes;
    std::byte* xq;
  } c{act, x, cols, 8 * quant_info(act).block_elems, 0, xq_row_bytes, xq};
  c.chunks_per_row = (cols + c.chunk_elems - 1) / c.chunk_elems;
  detail::parallel_run(m * c.chunks_per_row, [](void* p, std::size_t task) {
    const Ctx& c = *static_cast<const Ctx*>(p);
    const std::size_t row = task / c.chunks_per_row, begin = task % c.chunks_per_row * c.chunk_elems;
    const std::size_t len = std::min(c.chunk_elems, c.cols - begin);
    const std::size_t bytes = quant_row_bytes(c.act, len), offset = quant_row_bytes(c.act, begin);
    quantize(c.act, c.x.subspan(row * c.cols + begin, len),
             std::span<std::byte>(c.xq + row * c.xq_row_bytes + offset, bytes));
  }, &c);
}

void run(const char* op, QuantType type, const std::byte* w0, const std::byte* w1, std::size_t rows,
         std::size_t cols, std::span<const float> x, std::size_t m, float* y0, float* y1,
         std::optional<Backend> backend, const PackedQuantMatrix* p0 = nullptr, const PackedQuantMatrix* p1 = nullptr) {
  const cpu::KernelTable& t = cpu::kernels(backend, op);
  Job g{};
  g.table = &t;
  QuantType act = type;
  g.dot = qdot_for(t, type, &act);
  g.dot_rows = qdot_rows_for(t, type);
  g.type = type;
  g.w[0] = w0, g.w[1] = w1, g.n_w = w1 ? 2 : 1;
  g.rows = rows, g.cols = cols, g.row_bytes = quant_row_bytes(type, cols), g.m = m;
  g.x = x.data();
  g.y[0] = y0, g.y[1] = y1;
  attach_packed(op, g, 0, p0);
  attach_packed(op, g, 1, p1);
  if (g.dot) {  // quantize the activations once (scratch of the calling thread: no allocation per call)
    // Checked here, on the caller's thread: the pool's tasks must not throw.
    if (!detail::all_finite(x.data(), x.size()))
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!std::isfinite(x[i]))
          throw InvalidArgument(strcat(op, ": activation ", i, " is ", x[i], "; ", quant_info(act).name,
                                       " activations must be finite"));
    g.xq_bytes = quant_row_bytes(act, cols);
    auto* xq = reinterpret_cast<std::byte*>(detail::thread_scratch(detail::ScratchSlot::kQuantX, (m * g.xq_bytes + 3) / 4));
    g.xq = xq;
    quantize_activations(act, x, m, cols, xq, g.xq_bytes);
  }
  if (g.dot && m > 1 && (type == QuantType::Q4_K || type == QuantType::Q6_K) && cpu::kernels_backend(backend) == Backend::AVX512 &&
      cpu::amx::usable())
    return run_amx(g);
  // Note [Tasks per thread]. (8-256 KiB measured on the device Xeon: 8-64 KiB within noise of each other,
  // 256 KiB slower; software prefetch of the next row was slower at every distance, docs/PERFORMANCE.md.)
  g.rows_per_task = rows_per_task(g);
  detail::parallel_run((rows + g.rows_per_task - 1) / g.rows_per_task, run_rows, &g);
}

// quant_matvec_multi: each part's Job, its first task index, and the total.
struct MultiJob {
  Job jobs[4];
  std::size_t first_task[5];
  int n;
};

void run_multi_task(void* ctx, std::size_t task) {
  const MultiJob& mj = *static_cast<const MultiJob*>(ctx);
  int k = 0;
  while (task >= mj.first_task[k + 1]) ++k;
  run_rows(const_cast<Job*>(&mj.jobs[k]), task - mj.first_task[k]);
}

}  // namespace

void quant_matvec_multi(std::span<const QuantMatvecPart> parts, std::size_t cols, std::span<const float> x,
                        std::optional<Backend> backend) {
  if (parts.size() > 4) throw InvalidArgument(strcat("quant_matvec_multi: ", parts.size(), " matrices; at most 4"));
  const cpu::KernelTable& t = cpu::kernels(backend, "quant_matvec_multi");
  MultiJob mj{};
  mj.n = static_cast<int>(parts.size());
  // The quantized activations, once per format (Q8_0 and/or Q8_K): the calling thread's scratch.
  const std::byte* xq_of[2] = {nullptr, nullptr};
  QuantType act_of[2] = {QuantType::Q8_0, QuantType::Q8_K};
  thread_local std::vector<std::byte> xq_buf[2];
  bool checked = false;
  mj.first_task[0] = 0;
  for (int k = 0; k < mj.n; ++k) {
    const QuantMatvecPart& p = parts[static_cast<std::size_t>(k)];
    check("quant_matvec_multi", p.type, p.w.size(), p.rows, cols, x.size(), 1, p.y.size());
    Job& g = mj.jobs[k];
    g.table = &t;
    QuantType act = p.type;
    g.dot = qdot_for(t, p.type, &act);
    g.dot_rows = qdot_rows_for(t, p.type);
    g.type = p.type;
    g.w[0] = p.w.data(), g.w[1] = nullptr, g.n_w = 1;
    g.rows = p.rows, g.cols = cols, g.row_bytes = quant_row_bytes(p.type, cols), g.m = 1;
    g.x = x.data();
    g.y[0] = p.y.data(), g.y[1] = nullptr;
    attach_packed("quant_matvec_multi", g, 0, p.packed);
    if (g.dot) {
      if (!checked && !detail::all_finite(x.data(), x.size()))
        for (std::size_t i = 0; i < x.size(); ++i)
          if (!std::isfinite(x[i]))
            throw InvalidArgument(strcat("quant_matvec_multi: activation ", i, " is ", x[i], "; ", quant_info(act).name,
                                         " activations must be finite"));
      checked = true;
      const int a = act == QuantType::Q8_0 ? 0 : 1;
      g.xq_bytes = quant_row_bytes(act, cols);
      if (!xq_of[a]) {
        xq_buf[a].resize(g.xq_bytes);
        quantize_activations(act_of[a], x, 1, cols, xq_buf[a].data(), g.xq_bytes);
        xq_of[a] = xq_buf[a].data();
      }
      g.xq = xq_of[a];
    }
    g.rows_per_task = rows_per_task(g);
    mj.first_task[k + 1] = mj.first_task[k] + (p.rows + g.rows_per_task - 1) / g.rows_per_task;
  }
  detail::parallel_run(mj.first_task[mj.n], run_multi_task, &mj);
}

void quant_matvec(QuantType type, std::span<const std::byte> w, std::size_t rows, std::size_t cols,
                  std::span<const float> x, std::span<float> y, std::optional<Backend> backend) {
  check("quant_matvec", type, w.size(), rows, cols, x.size(), 1, y.size());
  run("quant_matvec", type, w.data(), nullptr, rows, cols, x, 1, y.data(), nullptr, backend);
}

void quant_matvec(const PackedQuantMatrix& w, std::span<const float> x, std::span<float> y,
                  std::optional<Backend> backend) {
  check("quant_matvec", w.type(), w.original().size(), w.rows(), w.cols(), x.size(), 1, y.size());
  run("quant_matvec", w.type(), w.original().data(), nullptr, w.rows(), w.cols(), x, 1, y.data(), nullptr, backend, &w);
}

void quant_matmul(QuantType type, std::span<const std::byte> w, std::size_t rows, std::size_t cols,
                  std::span<const float> x, std::size_t m, std::span<float> y, std::optional<Backend> backend) {
  check("quant_matmul", type, w.size(), rows, cols, x.size(), m, y.size());
  run("quant_matmul", type, w.data(), nullptr, rows, cols, x, m, y.data(), nullptr, backend);
}

void quant_gate_up_swiglu(QuantType type, std::span<const std::byte> w_gate, std::span<const std::byte> w_up,
                          std::size_t rows, std::size_t cols, std::span<const float> x, std::span<float> out,
                          std::optional<Backend> backend, const PackedQuantMatrix* packed_gate,
                          const PackedQuantMatrix* packed_up) {
  check("quant_gate_up_swiglu", type, w_gate.size(), rows, cols, x.size(), 1, out.size());
  check("quant_gate_up_swiglu", type, w_up.size(), rows, cols, x.size(), 1, out.size());
  float* up = detail::thread_scratch(detail::ScratchSlot::kGateUp, rows);
  run("quant_gate_up_swiglu", type, w_gate.data(), w_up.data(), rows, cols, x, 1, out.data(), up, backend, packed_gate,
      packed_up);
  cpu::kernels(backend, "quant_gate_up_swiglu").swiglu(out.data(), up, out.data(), rows);
}

}  // namespace trueno
