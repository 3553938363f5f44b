// The parity gate (contracts/gpu-parity.yaml): before a GPU backend serves a model, its logits on a probe
// sequence are compared with the CPU pass's at every position; only a passing backend is used, in a
// fixed priority (CUDA, then Vulkan when it exists), else the CPU. Verdicts are cached on disk.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "realizar/gate_contract.h"  // generated from contracts/gpu-parity.yaml
#include "realizar/model.h"

namespace realizar::parity {

// contracts/gpu-parity.yaml's gate.
inline constexpr double kMinCosine = REALIZAR_GATE_MIN_COSINE;                      // per compared position, f64
inline constexpr double kMinArgmaxAgreement = REALIZAR_GATE_MIN_ARGMAX_AGREEMENT;   // fraction of positions
inline constexpr std::size_t kMinPositions = REALIZAR_GATE_MIN_POSITIONS;           // positions compared, at least
inline constexpr std::size_t kProbePositions = REALIZAR_GATE_PROBE_POSITIONS;
inline constexpr double kTensorMinCosine = REALIZAR_GATE_TENSOR_MIN_COSINE;         // divergence reports

struct PositionCheck {
  std::size_t pos = 0;
  double cosine = 0, max_abs = 0;
  std::int32_t argmax_cpu = -1, argmax_gpu = -1;
};

struct Verdict {
  std::string backend;
  bool passed = false;
  std::vector<PositionCheck> positions;  // empty when the backend failed before producing logits
  double min_cosine = 0, max_abs = 0;
  std::size_t argmax_agree = 0;
  double seconds = 0;  // the gate's own time (the GPU probe and the comparison)
  std::string reason;  // why it failed (cosines, argmaxes, the first diverging tensor, an error), or empty
  bool cached = false;
  // "cuda passed: min cosine 0.99991 over 16 positions, 0.21 s" / "cuda rejected: ..."
  std::string summary() const;
};

// One named intermediate (recorder.h) of a candidate against the CPU's over the probe, at its worst position.
struct TensorCheck {
  int layer = -1;  // kNoLayer for token_embd, output_norm, logits
  std::string tensor;
  std::size_t pos = 0;
  double cosine = 1, max_abs = 0;  // cosine 0 when non-finite
};

// Where a candidate departs from the CPU (Note [Layer trace], layers.cpp).
struct LayerTrace {
  std::string backend;
  std::vector<TensorCheck> tensors;  // every tensor the CPU records, in its order, each at its worst position
  std::optional<TensorCheck> first;  // the earliest position with a tensor below kTensorMinCosine, and its first one
  std::string error;                 // the candidate threw or left a tensor unrecorded
  // "first divergence: layer 2 ffn_out at position 3 (cosine -1.00000 < 0.99)", or why there is none.
  std::string summary() const;
};

// Feeds the probe one token at a time to a CPU Session and to s (reset before and after), both recording,
// and compares every named tensor at every position.
LayerTrace trace_layers(const Model& m, const std::string& backend, Sequence& s, std::span<const std::int32_t> probe);

// The probe: the prompt's first kProbePositions tokens, completed by fixed tokens when it is shorter.
std::vector<std::int32_t> probe_tokens(const Model& m, std::span<const std::int32_t> prompt);

// Compares logits [T][V] of a candidate with the CPU's: cosine per position in f64, max |d|, argmaxes.
Verdict compare(const std::string& backend, const float* cpu, const float* gpu, std::size_t T, std::size_t V);

// A GPU backend to try: its name, what identifies its arithmetic for the verdict cache (device, driver,
// kernels, options; empty: never cached), and how to make a sequence (may throw: unavailable, out of memory).
struct Candidate {
  std::string name;
  std::string identity;
  std::function<std::unique_ptr<Sequence>(std::size_t n_ctx)> make;
};

struct GateOptions {
  bool skip = false;            // --no-parity-gate: use the first candidate unchecked (with a warning)
  bool recheck = false;         // --recheck: ignore cached verdicts
  bool forced = false;          // --backend NAME: use the first candidate even when it fails (with a warning)
  std::string cache_dir;        // empty: no cache
  std::string model_identity;   // file size, mtime, tensor table hash (model_identity())
  std::function<void(const std::string&)> log;  // one line per decision (stderr in the CLI)
};

struct Selection {
  std::unique_ptr<Sequence> sequence;  // reset, ready at position 0
  std::vector<Verdict> verdicts;       // one per candidate tried
  std::string line;                    // the load line: which backend and why
};

// Tries the candidates in order and returns the first that passes the gate (or the forced one), else a
// CPU Session. A failing or throwing candidate is released (its device memory freed) before the next.
Selection select(const Model& m, std::span<const Candidate> candidates, std::size_t n_ctx, std::span<const std::int32_t> prompt,
                 const GateOptions& options);

// Runs the gate on every candidate (none is kept): the `realizar parity` table.
std::vector<Verdict> check_all(const Model& m, std::span<const Candidate> candidates, std::span<const std::int32_t> prompt);

// trace_layers for every candidate (`realizar parity --layers`).
std::vector<LayerTrace> check_layers(const Model& m, std::span<const Candidate> candidates, std::span<const std::int32_t> prompt);

// What identifies the model file for the verdict cache: path, size, modification time, tensor table.
std::string model_identity(const gguf::File& file);

// The device candidates of this machine in the backend list's order (trueno/device_kinds.inc): every
// available device whose kind realizar has a forward pass for, or only `only` when given. Devices that are
// not chosen automatically (DeviceStatus::automatic: a CPU-type Vulkan device such as lavapipe) are
// candidates only as `only` (--backend vulkan:N). Each weights upload happens when the candidate is tried.
std::vector<Candidate> gpu_candidates(const Model& m, const CudaOptions& cuda, std::optional<trueno::Device> only = std::nullopt);

// A sequence that runs on `primary` and, when a forward call on it throws (a launch failure, out of
// memory), says so through log and continues on a CPU Session from the same position: every token fed
// so far is replayed there, nothing generated is lost. Errors of the CPU pass itself propagate.
std::unique_ptr<Sequence> with_cpu_fallback(const Model& m, std::unique_ptr<Sequence> primary,
                                            std::function<void(const std::string&)> log);

}  // namespace realizar::parity
