// Collectives between the ranks of a tensor-parallel group (docs/MULTI_GPU.md): the all-reduce after a
// row-parallel product and the all-gather of vocabulary-parallel logits. Two implementations: loopback
// (threads of this process as ranks, host memory; what CI checks the sharding math with) and NCCL
// (one rank per GPU, device memory; trueno/cuda/nccl.h, CUDA builds only).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
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

// Note [TCP bootstrap]
// The ranks of a group in separate processes (one per GPU, on one host or several) must agree on one
// opaque id before they can talk (NCCL's ncclUniqueId: 128 bytes made by rank 0). This is how they get it,
// the same way on one host and across hosts: rank 0 listens on a TCP port; every other rank connects to
// rank 0's address (retrying until rank 0 is up or the timeout passes), says its rank and the world size,
// and receives the payload. Rank 0 checks that every rank 1..N-1 joins once with the same world size. It
// carries nothing but the id: the collectives then run over NCCL's own transports.
struct BootstrapOptions {
  int rank = 0, world_size = 1;
  std::string address = "127.0.0.1";  // rank 0's host name or address, as the other ranks reach it
  int port = 29500;                   // rank 0 listens on every interface; 0: any free port (tests)
  double timeout_s = 120;             // rank 0 waits this long for the others; the others for rank 0
  // Rank 0 calls it with the port it listens on, before waiting for the others (with port 0: the one chosen).
  std::function<void(int port)> on_listen;
};
// TRUENO_RANK, TRUENO_WORLD_SIZE and TRUENO_BOOTSTRAP ("host:port") over `defaults`; InvalidArgument naming
// the variable when one does not parse.
BootstrapOptions bootstrap_options_from_env(BootstrapOptions defaults = {});
// Rank 0 sends payload to ranks 1..world_size-1 and returns it; the others return what they received.
// Throws trueno::Error naming the address, the rank and the cause (timeout, refused, a rank twice, a
// world size that differs).
std::vector<std::byte> bootstrap_broadcast(const BootstrapOptions& o, const std::vector<std::byte>& payload);

// Whether this build and machine can run a group over several GPUs (NCCL found and loaded), and why not.
struct CollectiveStatus {
  bool available = false;
  std::string detail;  // "NCCL 2.21.5 (/usr/lib/.../libnccl.so.2)" or the reason it is unavailable
};
CollectiveStatus multi_device_status();

}  // namespace trueno
