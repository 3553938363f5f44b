// The files the GGUF reader has memory-mapped, for one purpose: when another process truncates a mapped
// model, the next read of a lost page raises SIGBUS; the report names the file instead of a bare crash.
// A handler that resumed (sigsetjmp/siglongjmp around every weight read) would be fragile inside SIMD
// kernels and worker threads, so the handler only writes a message and ends the process.
#pragma once
#include <cstddef>
#include <string>

namespace realizar::gguf {

void register_mapping(const void* addr, std::size_t size, const std::string& path);
void unregister_mapping(const void* addr);

// Installs the SIGBUS handler (process-wide; programs call it once): a fault inside a registered mapping
// prints "realizar: error: PATH: ..." with write(2) and exits with status 1; any other SIGBUS keeps its
// default action.
void report_sigbus_on_mapped_files();

}  // namespace realizar::gguf
