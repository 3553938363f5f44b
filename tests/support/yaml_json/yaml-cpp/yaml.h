// Not yaml-cpp: the part of its API the tests use (LoadFile, Node lookup, as<T>, iteration,
// IsMap/IsScalar, size), over nlohmann::json. Only on the include path of the WebAssembly build,
// which has no yaml-cpp (Debian ships it as a native library only): there the contracts are read from
// JSON copies made at configure time by cmake/yaml_to_json.py, every scalar a string as yaml-cpp
// sees it. Lookups of missing keys give an undefined Node (false in a condition), as in yaml-cpp.
#pragma once
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace YAML {

struct Exception : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Node {
 public:
  Node() = default;
  Node(std::shared_ptr<const nlohmann::json> doc, const nlohmann::json* j) : doc_(std::move(doc)), j_(j) {}

  explicit operator bool() const { return j_ != nullptr; }
  bool IsMap() const { return j_ != nullptr && j_->is_object(); }
  bool IsSequence() const { return j_ != nullptr && j_->is_array(); }
  bool IsScalar() const { return j_ != nullptr && j_->is_string(); }
  std::size_t size() const { return j_ != nullptr && (j_->is_object() || j_->is_array()) ? j_->size() : 0; }

  Node operator[](const std::string& key) const {
    if (!IsMap()) return {};
    auto it = j_->find(key);
    return it == j_->end() ? Node() : Node(doc_, &*it);
  }
  Node operator[](const char* key) const { return (*this)[std::string(key)]; }
  Node operator[](int i) const {
    if (!IsSequence() || i < 0 || static_cast<std::size_t>(i) >= j_->size()) return {};
    return Node(doc_, &(*j_)[static_cast<std::size_t>(i)]);
  }

  template <class T>
  T as() const {
    if (!IsScalar()) throw Exception("yaml_json: not a scalar");
    const std::string& s = j_->get_ref<const std::string&>();
    if constexpr (std::is_same_v<T, std::string>) {
      return s;
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(std::stod(s));
    } else if constexpr (std::is_same_v<T, bool>) {
      return s == "true" || s == "True" || s == "yes" || s == "on";
    } else {
      return static_cast<T>(std::stoll(s));
    }
  }
  template <class T>
  T as(const T& fallback) const {
    return IsScalar() ? as<T>() : fallback;
  }

  // Iteration: a map gives entries with .first (key) and .second (value); a sequence gives entries
  // that are the elements themselves.
  struct Entry;
  class iterator;
  iterator begin() const;
  iterator end() const;

 private:
  std::shared_ptr<const nlohmann::json> doc_;
  const nlohmann::json* j_ = nullptr;
};

struct Node::Entry : Node {
  Node first, second;
};

class Node::iterator {
 public:
  iterator(const Node* owner, nlohmann::json::const_iterator it) : owner_(owner), it_(it) {}
  bool operator!=(const iterator& o) const { return it_ != o.it_; }
  iterator& operator++() {
    ++it_;
    return *this;
  }
  Entry operator*() const {
    Entry e;
    if (owner_->j_->is_object()) {
      auto key = std::make_shared<const nlohmann::json>(it_.key());
      e.first = Node(key, key.get());
      e.second = Node(owner_->doc_, &it_.value());
    } else {
      static_cast<Node&>(e) = Node(owner_->doc_, &*it_);
    }
    return e;
  }

 private:
  const Node* owner_;
  nlohmann::json::const_iterator it_;
};

inline Node::iterator Node::begin() const {
  static const nlohmann::json empty = nlohmann::json::array();
  return j_ != nullptr && (j_->is_object() || j_->is_array()) ? iterator(this, j_->cbegin()) : iterator(this, empty.cbegin());
}
inline Node::iterator Node::end() const {
  static const nlohmann::json empty = nlohmann::json::array();
  return j_ != nullptr && (j_->is_object() || j_->is_array()) ? iterator(this, j_->cend()) : iterator(this, empty.cend());
}

inline Node LoadFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Exception("bad file: " + path);
  try {
    auto doc = std::make_shared<const nlohmann::json>(nlohmann::json::parse(f));
    return Node(doc, doc.get());
  } catch (const nlohmann::json::exception& e) {
    throw Exception(path + ": " + e.what());
  }
}

}  // namespace YAML
