// Shared by every device backend's kernel tests (src/cuda, src/vulkan): the printed seed, the contract of
// an op in contracts/gpu/<backend>.yaml, and the check of device output against the CPU's by it.
#pragma once
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "contract/contract_spec.h"

namespace trueno::test {

// TRUENO_TEST_SEED, else a fresh one: one seed per test process for every backend's kernel tests,
// printed once (with the tag of the backend that asked first).
inline std::uint64_t gpu_test_seed(const char* tag) {
  static const std::uint64_t s = [tag] {
    const char* env = std::getenv("TRUENO_TEST_SEED");
    const std::uint64_t v = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("[%s] seed %llu (rerun with TRUENO_TEST_SEED=%llu)\n", tag, static_cast<unsigned long long>(v),
                static_cast<unsigned long long>(v));
    return v;
  }();
  return s;
}

// The contract of `op` in contracts/gpu/<backend>.yaml (a test failure when there is none).
inline YAML::Node gpu_contract_of(const std::string& backend, const std::string& op) {
  const YAML::Node root = YAML::LoadFile(contracts_dir() + "/gpu/" + backend + ".yaml");
  const YAML::Node node = root["ops"][op];
  if (!node) ADD_FAILURE() << "contracts/gpu/" << backend << ".yaml has no contract for op '" << op << "'";
  return node;
}

// Checks gpu against cpu by the op's obligation (gpu_vs_cpu: cosine and nmse bounds; gpu_vs_cpu_exact:
// every bit); prints the measures. obligation: the index in the op's list.
inline void expect_gpu_contract(const std::string& backend, const std::string& op, const std::vector<float>& gpu,
                                const std::vector<float>& cpu, const std::string& what, int obligation = 0) {
  const YAML::Node ob = gpu_contract_of(backend, op)["obligations"][obligation];
  ASSERT_EQ(gpu.size(), cpu.size());
  if (ob["type"].as<std::string>() == "gpu_vs_cpu_exact") {
    std::size_t diff = 0;
    for (std::size_t i = 0; i < gpu.size(); ++i) diff += std::memcmp(&gpu[i], &cpu[i], 4) != 0;
    std::printf("%s %s: %zu of %zu differ\n", op.c_str(), what.c_str(), diff, gpu.size());
    EXPECT_EQ(diff, 0u) << op << " " << what;
    return;
  }
  double dot = 0, na = 0, nb = 0, err = 0;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    dot += double{gpu[i]} * cpu[i], na += double{gpu[i]} * gpu[i], nb += double{cpu[i]} * cpu[i];
    err += (double{gpu[i]} - cpu[i]) * (double{gpu[i]} - cpu[i]);
  }
  const double cosine = na == 0 && nb == 0 ? 1.0 : dot / std::sqrt(na * nb), nmse = nb == 0 ? err : err / nb;
  std::printf("%s %s: cosine %.9f, nmse %.3e\n", op.c_str(), what.c_str(), cosine, nmse);
  EXPECT_GE(cosine, ob["min_cosine"].as<double>()) << op << " " << what;
  EXPECT_LE(nmse, ob["max_nmse"].as<double>()) << op << " " << what;
}

inline std::vector<float> random_normal(std::size_t n, std::mt19937_64& rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace trueno::test
