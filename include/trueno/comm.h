// Collectives between the ranks of a tensor-parallel group (docs/MULTI_GPU.md): the all-reduce after a
// row-parallel product and the all-gather of vocabulary-parallel logits. Two implementations: loopback
// (threads of this process as ranks, host memory; what CI checks the sharding math with) and NCCL
// (one rank per GPU, device memory; trueno/cuda/nccl.h, CUDA builds only).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trueno {

// One rank's end of a group of size() ranks. Every rank calls the same collectives in the same order
// with the same counts (a mismatch is a contract violation: the loopback aborts naming both counts).
// Buffers are in the communicator's memory: host for the loopback, the rank's device for NCCL.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // data[n] <- the sum over ranks of each rank's data[n] (f32).
  virtual void all_reduce_sum(float* data, std::size_t n) = 0;
  // out[size() * n] <- every rank's in[n], rank r's at out + r * n.
  virtual void all_gather(const float* in, float* out, std::size_t n) = 0;
  // A rank that fails between collectives calls abort() so that the other ranks' collectives throw
  // (naming this rank) instead of waiting for it forever. The group is unusable afterwards.
  virtual void abort() = 0;
  // "loopback", "nccl"
  virtual std::string name() const = 0;
};

// Note [Loopback reduction order]
// The loopback group's ranks are threads of this process: rank r must be driven by its own thread (the
// collectives block until every rank has arrived). Every rank sums the ranks' values in rank order,
// ((x0 + x1) + x2) + ..., element by element, so every rank gets the same bits and a run is reproducible
// whatever the threads' timing; NCCL's ring or tree order differs (docs/MULTI_GPU.md), so a TP result
// on GPUs is compared with a tolerance, never bit for bit.
std::vector<std::unique_ptr<Communicator>> loopback_group(int n_ranks);

// Whether this build and machine can run a group over several GPUs (NCCL found and loaded), and why not.
struct CollectiveStatus {
  bool available = false;
  std::string detail;  // "NCCL 2.21.5 (/usr/lib/.../libnccl.so.2)" or the reason it is unavailable
};
CollectiveStatus multi_device_status();

}  // namespace trueno
