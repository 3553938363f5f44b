// A CUDA injection library (CUDA_INJECTION64_PATH) that records every kernel's GPU start and end through
// CUPTI's activity API and writes them, one line each, to $KERNEL_TIMELINE_OUT at exit:
//   start_ns end_ns grid_x grid_y grid_z graph_node name
// Kernels replayed from a CUDA graph are recorded too, so a decode step's kernels can be laid out in time
// as they ran, with programmatic dependent launch's overlaps (ncu runs each kernel alone). Build and use:
// tools/kernel_timeline/README.md.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Kernel {
  unsigned long long start, end, node;
  int gx, gy, gz;
  std::string name;
};

std::mutex g_lock;
std::vector<Kernel> g_kernels;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8u << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> hold(g_lock);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    g_kernels.push_back({k->start, k->end, k->graphNodeId, k->gridX, k->gridY, k->gridZ, k->name ? k->name : "?"});
  }
  std::free(buffer);
}

void write_timeline() {
  cuptiActivityFlushAll(1);
  const char* env = std::getenv("KERNEL_TIMELINE_OUT");
  const std::string path = env && *env ? env : "kernel_timeline.txt", tmp = path + ".tmp";  // renamed into place when whole
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "kernel_timeline: cannot write %s\n", tmp.c_str());
    return;
  }
  std::lock_guard<std::mutex> hold(g_lock);
  for (const Kernel& k : g_kernels)
    std::fprintf(f, "%llu %llu %d %d %d %llu %s\n", k.start, k.end, k.gx, k.gy, k.gz, k.node, k.name.c_str());
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "kernel_timeline: writing %s failed (disk full?)\n", path.c_str());
    std::remove(tmp.c_str());
    return;
  }
  std::fprintf(stderr, "kernel_timeline: %zu kernels written to %s\n", g_kernels.size(), path.c_str());
}

}  // namespace

extern "C" int InitializeInjection(void) {
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "kernel_timeline: CUPTI refused the kernel activity\n");
    return 0;
  }
  std::atexit(write_timeline);
  return 1;
}
