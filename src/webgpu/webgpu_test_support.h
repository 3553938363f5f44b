// Helpers of the WebGPU shader tests (webgpu_test.cpp): a job of kernel calls for the Node harness
// (js/run_ops.mjs, Dawn on SwiftShader), running it, reading its outputs back, and the visible skip
// where node, npm webgpu or the SwiftShader driver is missing.
//
// Note [WebGPU tests: inputs and references in C++]
// The CPU reference is trueno itself (quant_matvec, ops::*), so the inputs and the expected outputs are
// made here, in C++, and the comparison is the one every device backend uses (tests/support/
// gpu_contract.h, by contracts/gpu/webgpu.yaml). JavaScript only runs the glue the page will use: a job
// file lists the calls and their buffers (raw little-endian files), run_ops.mjs writes the outputs back.
// One node process per test (Dawn starts in ~0.2 s), not per call.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace trueno::webgpu::testing {

inline std::string js_dir() { return std::string(TRUENO_SOURCE_DIR) + "/src/webgpu/js"; }

// The Vulkan driver Dawn runs on: TRUENO_WEBGPU_ICD, else Debian chromium's SwiftShader.
inline std::string icd() {
  const char* env = std::getenv("TRUENO_WEBGPU_ICD");
  return env != nullptr && *env != '\0' ? env : "/usr/lib/chromium/vk_swiftshader_icd.json";
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Runs `node run_ops.mjs job`; its stdout + stderr in *log. The exit status.
inline int run_harness(const std::string& job, std::string* log) {
#ifdef TRUENO_NODE
  const std::string out = job + ".log";
  const std::string cmd = "VK_ICD_FILENAMES='" + icd() + "' '" + TRUENO_NODE + "' '" + js_dir() + "/run_ops.mjs' '" + job + "' > '" + out + "' 2>&1";
  const int status = std::system(cmd.c_str());
  *log = read_text(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
#else
  (void)job, *log = "no node";
  return 127;
#endif
}

// A folder of its own for this process's jobs (inputs, outputs, logs: up to tens of MB), removed at exit
// unless a test failed (then its path is printed, to look at the job).
inline std::string work_dir() {
  // Never destroyed: the exit handler reads it after the static destructors of this translation unit.
  static const std::string* const d = [] {
    const auto p = std::filesystem::temp_directory_path() / ("trueno-webgpu-" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    std::atexit([] {
      const std::string& dir = work_dir();
      if (::testing::UnitTest::GetInstance()->Failed()) {
        std::printf("[webgpu] the failed run's jobs are in %s\n", dir.c_str());
        return;
      }
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    return new std::string(p.string());
  }();
  return *d;
}

// Why the harness cannot run here ("" when it can): checked once, with an empty job (Dawn asks for an
// adapter). A harness that runs but fails otherwise is not a skip: the tests then fail with its log.
inline const std::string& missing() {
  static const std::string why = []() -> std::string {
#ifndef TRUENO_NODE
    return "node was not found when the build was configured (Debian: nodejs)";
#else
    namespace fs = std::filesystem;
    if (!fs::exists(TRUENO_NODE)) return std::string("no node at ") + TRUENO_NODE;
    if (!fs::exists(js_dir() + "/node_modules/webgpu/package.json"))
      return "npm webgpu is not installed in src/webgpu/js (bash scripts/setup.sh --deps runs npm ci there)";
    if (!fs::exists(icd())) return "no SwiftShader Vulkan driver at " + icd() + " (Debian: chromium; or set TRUENO_WEBGPU_ICD)";
    const std::string job = work_dir() + "/probe.json";
    std::ofstream(job) << "{\"cases\": []}";
    std::string log;
    if (run_harness(job, &log) != 0 && log.find("no WebGPU adapter") != std::string::npos) return "Dawn finds no adapter: " + log;
    std::printf("[webgpu] %s", log.c_str());
    return "";
#endif
  }();
  return why;
}

#define TRUENO_REQUIRE_WEBGPU()                                                                      \
  do {                                                                                               \
    if (!::trueno::webgpu::testing::missing().empty())                                               \
      GTEST_SKIP() << "skipped: no WebGPU in Node: " << ::trueno::webgpu::testing::missing();        \
  } while (0)

// One kernel call of a job: its buffers (from bytes, or zero-filled), its arguments ("@name": a buffer)
// and the buffers read back after it.
class Call {
 public:
  Call(std::string dir, std::string id, std::string op) : dir_(std::move(dir)), id_(std::move(id)), op_(std::move(op)) {}

  template <class T>
  Call& in(const std::string& name, const std::vector<T>& v) {
    const std::string path = dir_ + "/" + id_ + "_" + name + ".bin";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
    buffers_.push_back("\"" + name + "\": {\"file\": \"" + path + "\"}");
    return *this;
  }
  Call& zeros(const std::string& name, std::size_t bytes, std::uint32_t fill = 0) {
    buffers_.push_back("\"" + name + "\": {\"bytes\": " + std::to_string(bytes) + ", \"fill\": " + std::to_string(fill) + "}");
    return *this;
  }
  Call& arg(const std::string& key, double v) {
    std::ostringstream s;
    s.precision(17);
    s << v;
    args_.push_back("\"" + key + "\": " + s.str());
    return *this;
  }
  Call& ints(const std::string& key, const std::vector<int>& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return raw(key, s + "]");
  }
  Call& flag(const std::string& key, bool v) { return raw(key, v ? "true" : "false"); }
  Call& text(const std::string& key, const std::string& v) { return raw(key, "\"" + v + "\""); }
  Call& buf(const std::string& key, const std::string& name) { return text(key, "@" + name); }
  Call& scratch(std::size_t n_ctx, std::size_t heads, std::size_t head_dim, std::size_t rows) {
    std::ostringstream s;  // not string concatenation: GCC 12 warns falsely (-Wrestrict) on "[" + to_string(..)
    s << "[" << n_ctx << ", " << heads << ", " << head_dim << ", " << rows << "]";
    scratch_ = s.str();
    return *this;
  }
  Call& out(const std::string& name) {
    outs_.push_back(name);
    return *this;
  }
  std::string out_path(const std::string& name) const { return dir_ + "/" + id_ + "_" + name + ".out"; }

  std::string json() const {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
      return s;
    };
    std::vector<std::string> outs;
    for (const auto& o : outs_) outs.push_back("\"" + o + "\": \"" + out_path(o) + "\"");
    return "{\"op\": \"" + op_ + "\", \"buffers\": {" + join(buffers_) + "}, \"args\": {" + join(args_) + "}, \"out\": {" + join(outs) + "}" +
           (scratch_.empty() ? "" : ", \"scratch\": " + scratch_) + "}";
  }

 private:
  Call& raw(const std::string& key, const std::string& v) {
    args_.push_back("\"" + key + "\": " + v);
    return *this;
  }
  std::string dir_, id_, op_, scratch_;
  std::vector<std::string> buffers_, args_, outs_;
};

// A list of calls run by one node process, in order.
class Job {
 public:
  // max_binding_bytes, gemv_threads_per_row: the glue's options (0: its defaults).
  explicit Job(std::string name, std::size_t max_binding_bytes = 0, std::size_t gemv_threads_per_row = 0)
      : name_(std::move(name)), max_binding_bytes_(max_binding_bytes), gemv_threads_per_row_(gemv_threads_per_row) {}

  Call& call(const std::string& op) {
    calls_.emplace_back(work_dir(), name_ + "_" + std::to_string(calls_.size()), op);
    return calls_.back();
  }

  // Runs every call; false (with the harness's log as a test failure) when the harness fails.
  bool run(std::string* log_out = nullptr) {
    const std::string path = work_dir() + "/" + name_ + ".json";
    {
      std::ofstream f(path);
      f << "{";
      if (max_binding_bytes_ != 0) f << "\"max_binding_bytes\": " << max_binding_bytes_ << ", ";
      if (gemv_threads_per_row_ != 0) f << "\"gemv_threads_per_row\": " << gemv_threads_per_row_ << ", ";
      f << "\"cases\": [\n";
      for (std::size_t i = 0; i < calls_.size(); ++i) f << (i ? ",\n" : "") << calls_[i].json();
      f << "]}\n";
    }
    std::string log;
    const int rc = run_harness(path, &log);
    std::printf("%s", log.c_str());
    if (log_out != nullptr) *log_out = log;
    return rc == 0;
  }

  template <class T = float>
  static std::vector<T> output(const Call& c, const std::string& name) {
    const std::string bytes = read_text(c.out_path(name));
    std::vector<T> v(bytes.size() / sizeof(T));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
  }

 private:
  std::string name_;
  std::size_t max_binding_bytes_, gemv_threads_per_row_;
  std::deque<Call> calls_;  // a deque: references from call() stay valid
};

}  // namespace trueno::webgpu::testing
