// NVRTC compilation and the on-disk cubin cache (Note [Cubin cache] in nvrtc.h).
#include "cuda/nvrtc.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/strings.h"
#include "cuda/kernels.h"
#include "trueno/cuda/loader.h"
#include "trueno/log.h"

namespace trueno::cuda {
namespace {

constexpr char kMagic[8] = {'T', 'R', 'N', 'C', 'U', 'B', 'N', '1'};

struct Header {
  char magic[8];
  std::uint64_t key, size, payload_hash;
};

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(std::uint64_t v) {
  static const char* d = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = d[v & 15];
  return s;
}

// Reads a valid entry or explains why not (empty reason = no entry at all).
bool read_entry(const std::string& path, std::uint64_t key, std::vector<char>& image, std::string& reason) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  Header h{};
  if (!f.read(reinterpret_cast<char*>(&h), sizeof h) || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
    reason = "bad header";
    return false;
  }
  if (h.key != key) {
    reason = "key mismatch";
    return false;
  }
  if (h.size == 0 || h.size > (std::uint64_t{1} << 30)) {
    reason = strcat("implausible size ", h.size);
    return false;
  }
  image.resize(h.size);
  if (!f.read(image.data(), static_cast<std::streamsize>(h.size)) || f.peek() != std::char_traits<char>::eof()) {
    reason = "truncated or trailing bytes";
    return false;
  }
  if (fnv1a(std::string_view(image.data(), image.size())) != h.payload_hash) {
    reason = "payload hash mismatch";
    return false;
  }
  return true;
}

void write_entry(const std::string& path, std::uint64_t key, const std::vector<char>& image) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = strcat(path, ".tmp", ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.key = key, h.size = image.size(), h.payload_hash = fnv1a(std::string_view(image.data(), image.size()));
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    f.write(image.data(), static_cast<std::streamsize>(image.size()));
    if (!f) {
      log(LogLevel::Warn, strcat("cubin cache: cannot write ", tmp, " (continuing without caching)"));
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    log(LogLevel::Warn, strcat("cubin cache: cannot rename ", tmp, " to ", path, ": ", ec.message()));
    std::filesystem::remove(tmp, ec);
  }
}

std::vector<char> nvrtc_compile(std::string_view name, std::string_view source, const std::vector<std::string>& options) {
  std::string why;
  const Nvrtc* n = nvrtc(&why);
  if (n == nullptr) throw CudaError(strcat("cannot compile CUDA module '", name, "': ", why), -1);
  api::nvrtcProgram prog = nullptr;
  const std::string src(source), file = strcat(name, ".cu");
  std::vector<const char*> headers, names;  // every embedded .cuh, includable by name
  for (const KernelSource& k : kernel_sources())
    if (is_header(k)) headers.push_back(k.source), names.push_back(k.file);
  check_nvrtc(n->create_program(&prog, src.c_str(), file.c_str(), static_cast<int>(headers.size()), headers.data(), names.data()),
              "nvrtcCreateProgram");
  std::vector<const char*> opts;
  for (const auto& o : options) opts.push_back(o.c_str());
  const api::nvrtcResult r = n->compile_program(prog, static_cast<int>(opts.size()), opts.data());
  std::size_t log_size = 0;
  n->log_size(prog, &log_size);
  std::string log_text(log_size, '\0');
  if (log_size > 1) n->log(prog, log_text.data());
  if (r != 0) {
    n->destroy_program(&prog);
    throw CudaError(strcat("NVRTC failed to compile ", file, " (", n->error_string(r), "):\n", log_text), r);
  }
  std::size_t size = 0;
  check_nvrtc(n->cubin_size(prog, &size), "nvrtcGetCUBINSize");
  std::vector<char> image(size);
  check_nvrtc(n->cubin(prog, image.data()), "nvrtcGetCUBIN");
  n->destroy_program(&prog);
  return image;
}

}  // namespace

std::string default_cache_dir() {
  if (const char* c = std::getenv("TRUENO_CUBIN_CACHE"); c != nullptr && *c != '\0')
    return std::string_view(c) == "off" ? std::string{} : std::string(c);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return strcat(x, "/trueno/cubin");
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return strcat(h, "/.cache/trueno/cubin");
  return {};
}

std::vector<std::pair<std::string, std::string>> tuning_defines() {
  std::vector<std::pair<std::string, std::string>> out;
  const char* env = std::getenv("TRUENO_CUDA_DEFINES");
  std::string_view rest = env ? env : "";
  while (!rest.empty()) {
    const std::size_t space = rest.find(' ');
    const std::string_view tok = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    if (tok.empty()) continue;
    const std::size_t eq = tok.find('=');
    out.emplace_back(std::string(tok.substr(0, eq)), eq == std::string_view::npos ? "1" : std::string(tok.substr(eq + 1)));
  }
  return out;
}

int tuning_define(std::string_view name, int fallback) {
  for (const auto& [k, v] : tuning_defines())
    if (k == name) return std::atoi(v.c_str());
  return fallback;
}

std::string kernels_identity() {
  std::string text;
  for (const KernelSource& k : kernel_sources()) text += strcat(k.file, '\n', k.source, '\n');
  for (const auto& o : compile_options(0)) text += o + '\n';
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return hex;
}

std::vector<std::string> compile_options(int arch) {
  // Precise division and square root (the CPU contracts' reference is IEEE f32); fused multiply-add on.
  std::vector<std::string> o = {strcat("--gpu-architecture=sm_", arch), "--std=c++17", "--device-as-default-execution-space",
                                "--prec-div=true", "--prec-sqrt=true"};
  for (const auto& [k, v] : tuning_defines()) o.push_back(strcat("-D", k, "=", v));
  return o;
}

Cubin compile_cubin(std::string_view name, std::string_view source, int arch, int driver_version, const std::string& cache_dir) {
  const auto options = compile_options(arch);
  const Nvrtc* n = nvrtc();
  std::string key_text = strcat(name, '\n', source, '\n');
  for (const KernelSource& k : kernel_sources())
    if (is_header(k)) key_text += strcat(k.file, '\n', k.source, '\n');
  for (const auto& o : options) key_text += o + '\n';
  key_text += strcat("nvrtc ", n ? n->major : 0, '.', n ? n->minor : 0, "\ndriver ", driver_version);
  const std::uint64_t key = fnv1a(key_text);
  Cubin out;
  if (!cache_dir.empty()) {
    out.path = strcat(cache_dir, '/', name, '-', hex(key), ".cubin");
    std::string reason;
    if (read_entry(out.path, key, out.image, reason)) {
      out.from_cache = true;
      log(LogLevel::Info, strcat("CUDA module ", name, ": cubin cache hit ", out.path));
      return out;
    }
    if (!reason.empty()) log(LogLevel::Warn, strcat("cubin cache: corrupt entry ", out.path, " (", reason, "): rebuilding"));
  }
  out.image = nvrtc_compile(name, source, options);
  log(LogLevel::Info, strcat("CUDA module ", name, ": compiled by NVRTC for sm_", arch, " (", out.image.size(), " bytes)"));
  if (!cache_dir.empty()) write_entry(out.path, key, out.image);
  return out;
}

}  // namespace trueno::cuda
