// Test support: running decy/wgsl_runner/run_wgsl.mjs (Node, npm webgpu = Dawn, on Chromium's SwiftShader
// Vulkan driver) from the decy tests, and why it cannot run here. Used by decy_test.cpp (WGSL validation)
// and decy_wgsl_test.cpp (runs against the CPU).
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace decy::test {

inline const std::string& runner_dir() {
  static const std::string d = std::string(TRUENO_SOURCE_DIR) + "/decy/wgsl_runner";
  return d;
}

// The Vulkan driver Dawn runs on: DECY_WGSL_ICD, else Debian chromium's SwiftShader.
inline std::string wgsl_icd() {
  const char* env = std::getenv("DECY_WGSL_ICD");
  return env != nullptr && *env != '\0' ? env : "/usr/lib/chromium/vk_swiftshader_icd.json";
}

// Why the runner cannot run here ("" when it can).
inline std::string wgsl_runner_missing() {
#ifndef DECY_NODE
  return "node was not found when the build was configured (Debian: nodejs)";
#else
  namespace fs = std::filesystem;
  if (!fs::exists(DECY_NODE)) return std::string("no node at ") + DECY_NODE;
  if (!fs::exists(runner_dir() + "/node_modules/webgpu/package.json"))
    return "npm webgpu is not installed in decy/wgsl_runner (bash scripts/setup.sh --deps runs npm ci there)";
  if (!fs::exists(wgsl_icd())) return "no SwiftShader Vulkan driver at " + wgsl_icd() + " (Debian: chromium; or set DECY_WGSL_ICD)";
  return "";
#endif
}

inline std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Runs the runner with `args` (shell words, quoted by the caller); its stdout + stderr in *log. The exit status.
inline int run_wgsl_runner(const std::string& args, std::string* log) {
#ifdef DECY_NODE
  const std::string out = ::testing::TempDir() + "/decy_wgsl_runner_" + std::to_string(::getpid()) + ".log";
  const std::string cmd = "VK_ICD_FILENAMES='" + wgsl_icd() + "' '" + DECY_NODE + "' '" + runner_dir() + "/run_wgsl.mjs' " + args + " > '" + out + "' 2>&1";
  const int status = std::system(cmd.c_str());
  *log = read_text(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
#else
  (void)args, *log = "no node";
  return 127;
#endif
}

}  // namespace decy::test
