// YAML loading for the contract registry.
#include "contract_spec.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace trueno::test {

const char* const kKnownObligationTypes[] = {"simd_vs_scalar_ulp", "simd_vs_scalar_exact", "f64_ulp",
                                             "f64_abs_rel",        "reduction_f64",        "compensated_f64",
                                             "rowwise_f64",        "gemm_frobenius_f64",   "matvec_f64",
                                             "qdot_f64",           "qdot_activation_f64",  "dequant_f64",
                                             "rows_equal_single_dot", "x8_equal_single_dot",
                                             nullptr};

double Obligation::num(const std::string& key) const {
  auto it = params.find(key);
  if (it == params.end()) throw std::runtime_error("obligation " + type + " lacks parameter '" + key + "'");
  return std::stod(it->second);
}

std::string Obligation::text(const std::string& key) const {
  auto it = params.find(key);
  if (it == params.end()) throw std::runtime_error("obligation " + type + " lacks parameter '" + key + "'");
  return it->second;
}

std::string contracts_dir() {
  if (const char* env = std::getenv("TRUENO_CONTRACTS_DIR")) return env;
  return TRUENO_CONTRACTS_DIR;
}

namespace {

std::map<std::string, OpContract> load_all() {
  std::map<std::string, OpContract> all;
  namespace fs = std::filesystem;
  const fs::path dir = contracts_dir();
  if (!fs::is_directory(dir)) throw std::runtime_error("contracts folder not found: " + dir.string());
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string file = entry.path().string();
    YAML::Node root;
    try {
      root = YAML::LoadFile(file);
    } catch (const YAML::Exception& e) {
      throw std::runtime_error(file + ": " + e.what());
    }
    // contracts/gpu-parity.yaml (kind: gate) holds the parity gate's thresholds, not kernel obligations.
    if (root["kind"] && root["kind"].as<std::string>() == "gate") continue;
    const std::string family = root["family"].as<std::string>("");
    if (family.empty()) throw std::runtime_error(file + ": missing 'family'");
    if (!root["ops"] || !root["ops"].IsMap()) throw std::runtime_error(file + ": missing map 'ops'");
    for (const auto& kv : root["ops"]) {
      OpContract c;
      c.family = family;
      c.op = kv.first.as<std::string>();
      const YAML::Node& node = kv.second;
      if (node["domain"]) {
        c.lo = node["domain"][0].as<double>();
        c.hi = node["domain"][1].as<double>();
      }
      if (!node["obligations"] || node["obligations"].size() == 0)
        throw std::runtime_error(file + ": op '" + c.op + "' has no obligations");
      for (const auto& o : node["obligations"]) {
        Obligation ob;
        for (const auto& p : o) {
          const std::string key = p.first.as<std::string>();
          const std::string value = p.second.as<std::string>();
          if (key == "type") ob.type = value;
          else if (key == "backends") ob.backends = value;
          else if (key == "property") ob.property = value;
          else if (key == "bound") ob.bound = value;
          else ob.params[key] = value;
        }
        if (ob.type.empty() || ob.bound.empty() || ob.property.empty() ||
            (ob.backends != "simd" && ob.backends != "all"))
          throw std::runtime_error(file + ": op '" + c.op +
                                   "': every obligation needs type, property, bound and backends (simd|all)");
        c.obligations.push_back(ob);
      }
      if (all.count(c.op)) throw std::runtime_error(file + ": op '" + c.op + "' has a contract in two files");
      all[c.op] = c;
    }
  }
  return all;
}

}  // namespace

const std::map<std::string, OpContract>& contracts() {
  static const std::map<std::string, OpContract> all = load_all();
  return all;
}

}  // namespace trueno::test
