// GGUF v3 writer: header, metadata in insertion order, tensor directory, aligned data.
#include <cstring>
#include <algorithm>
#include <fstream>

#include "realizar/gguf.h"
#include "util/atomic_file.h"
#include "util/strcat.h"

namespace realizar::gguf {
namespace {

void put_bytes(std::vector<std::byte>& out, const void* p, std::size_t n) {
  const std::size_t at = out.size();
  out.resize(at + n);
  if (n) std::memcpy(out.data() + at, p, n);
}

template <class T>
void put(std::vector<std::byte>& out, T v) {
  put_bytes(out, &v, sizeof(T));
}

void put_string(std::vector<std::byte>& out, const std::string& s) {
  put<std::uint64_t>(out, s.size());
  put_bytes(out, s.data(), s.size());
}

void put_value(std::vector<std::byte>& out, const Value& v) {
  switch (v.type) {
    case ValueType::U8: put<std::uint8_t>(out, static_cast<std::uint8_t>(v.u)); break;
    case ValueType::I8: put<std::int8_t>(out, static_cast<std::int8_t>(v.i)); break;
    case ValueType::U16: put<std::uint16_t>(out, static_cast<std::uint16_t>(v.u)); break;
    case ValueType::I16: put<std::int16_t>(out, static_cast<std::int16_t>(v.i)); break;
    case ValueType::U32: put<std::uint32_t>(out, static_cast<std::uint32_t>(v.u)); break;
    case ValueType::I32: put<std::int32_t>(out, static_cast<std::int32_t>(v.i)); break;
    case ValueType::U64: put<std::uint64_t>(out, v.u); break;
    case ValueType::I64: put<std::int64_t>(out, v.i); break;
    case ValueType::F32: put<float>(out, static_cast<float>(v.f)); break;
    case ValueType::F64: put<double>(out, v.f); break;
    case ValueType::Bool: put<std::uint8_t>(out, v.u ? 1 : 0); break;
    case ValueType::String: put_string(out, v.s); break;
    case ValueType::Array:
      put<std::uint32_t>(out, static_cast<std::uint32_t>(v.elem));
      put<std::uint64_t>(out, v.array.size());
      for (const Value& e : v.array) {
        if (e.type != v.elem) throw trueno::InvalidArgument("gguf writer: array element of another type than the array's");
        put_value(out, e);
      }
      break;
  }
}

void pad(std::vector<std::byte>& out, std::uint64_t alignment) {
  while (out.size() % alignment != 0) out.push_back(std::byte{0});
}

}  // namespace

void Writer::set(std::string key, Value v) {
  for (auto& [k, old] : kv_)
    if (k == key) {
      old = std::move(v);
      return;
    }
  kv_.emplace_back(std::move(key), std::move(v));
}

void Writer::set_u32(std::string key, std::uint32_t v) {
  Value x;
  x.type = ValueType::U32, x.u = v;
  set(std::move(key), std::move(x));
}
void Writer::set_f32(std::string key, float v) {
  Value x;
  x.type = ValueType::F32, x.f = v;
  set(std::move(key), std::move(x));
}
void Writer::set_string(std::string key, std::string v) {
  Value x;
  x.type = ValueType::String, x.s = std::move(v);
  set(std::move(key), std::move(x));
}
namespace {
// An array value of one element type, each element filled by fill(element, item).
template <class T, class Fill>
Value array_of(ValueType elem, const std::vector<T>& items, Fill fill) {
  Value x;
  x.type = ValueType::Array, x.elem = elem;
  x.array.reserve(items.size());
  for (const auto& item : items) {
    Value e;
    e.type = elem;
    fill(e, item);
    x.array.push_back(std::move(e));
  }
  return x;
}
}  // namespace

void Writer::set_string_array(std::string key, const std::vector<std::string>& v) {
  set(std::move(key), array_of(ValueType::String, v, [](Value& e, const std::string& s) { e.s = s; }));
}
void Writer::set_f32_array(std::string key, const std::vector<float>& v) {
  set(std::move(key), array_of(ValueType::F32, v, [](Value& e, float f) { e.f = f; }));
}
void Writer::set_i32_array(std::string key, const std::vector<std::int32_t>& v) {
  set(std::move(key), array_of(ValueType::I32, v, [](Value& e, std::int32_t i) { e.i = i; }));
}

namespace {
std::uint64_t tensor_bytes(const std::string& name, const std::vector<std::uint64_t>& ne, trueno::QuantType type) {
  std::uint64_t elems = 1;
  for (auto d : ne) elems *= d;
  const auto& info = trueno::quant_info(type);
  if (ne.empty() || ne[0] % info.block_elems != 0)
    throw trueno::ShapeError(strcat("gguf writer: tensor '", name, "': ne[0] = ", ne.empty() ? 0 : ne[0],
                                    " is not a multiple of the ", info.name, " block size ", info.block_elems));
  return elems / info.block_elems * info.block_bytes;
}
}  // namespace

void Writer::add_tensor(std::string name, std::vector<std::uint64_t> ne, trueno::QuantType type, std::vector<std::byte> data) {
  const std::uint64_t n = tensor_bytes(name, ne, type);
  if (data.size() != n)
    throw trueno::ShapeError(strcat("gguf writer: tensor '", name, "' needs ", n, " bytes, got ", data.size()));
  tensors_.push_back({std::move(name), std::move(ne), type, n, std::move(data), {}});
}

void Writer::add_tensor(std::string name, std::vector<std::uint64_t> ne, trueno::QuantType type, Fill fill) {
  const std::uint64_t n = tensor_bytes(name, ne, type);
  tensors_.push_back({std::move(name), std::move(ne), type, n, {}, std::move(fill)});
}

std::uint64_t Writer::alignment() const {
  for (const auto& [k, v] : kv_)
    if (k == "general.alignment") return v.u;
  return 32;
}

std::vector<std::byte> Writer::header() const {
  std::vector<std::byte> out;
  put<std::uint32_t>(out, 0x46554747);
  put<std::uint32_t>(out, 3);
  put<std::uint64_t>(out, tensors_.size());
  put<std::uint64_t>(out, kv_.size());
  for (const auto& [k, v] : kv_) {
    put_string(out, k);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(v.type));
    put_value(out, v);
  }
  const std::uint64_t align = alignment();
  std::uint64_t offset = 0;
  for (const auto& t : tensors_) {
    put_string(out, t.name);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(t.ne.size()));
    for (auto d : t.ne) put<std::uint64_t>(out, d);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(t.type));
    put<std::uint64_t>(out, offset);
    offset = (offset + t.bytes + align - 1) / align * align;
  }
  pad(out, align);
  return out;
}

std::uint64_t Writer::file_size() const {
  const std::uint64_t align = alignment();
  std::uint64_t n = header().size();
  for (const auto& t : tensors_) n += (t.bytes + align - 1) / align * align;
  return n;
}

std::vector<std::byte> Writer::bytes() const {
  std::vector<std::byte> out = header();
  for (const auto& t : tensors_) {
    if (t.fill) {
      std::vector<std::byte> tmp(t.bytes);
      t.fill(tmp);
      put_bytes(out, tmp.data(), tmp.size());
    } else {
      put_bytes(out, t.data.data(), t.data.size());
    }
    pad(out, alignment());
  }
  return out;
}

// Through a temporary file renamed into place: a failed write leaves the old file, and a model that a
// running process has mapped is never truncated under it.
void Writer::write(const std::string& path, const std::function<void(std::uint64_t, std::uint64_t)>& progress) const {
  AtomicFile f(path);
  const auto head = header();
  const std::uint64_t align = alignment(), total = file_size();
  f.write(head.data(), head.size());
  std::vector<std::byte> buf;
  const char zeros[64] = {};
  for (const auto& t : tensors_) {
    const std::byte* p = t.data.data();
    if (t.fill) {
      buf.resize(t.bytes);
      t.fill(buf);
      p = buf.data();
    }
    f.write(p, t.bytes);
    const std::uint64_t padding = (align - t.bytes % align) % align;
    for (std::uint64_t k = 0; k < padding; k += sizeof zeros) f.write(zeros, std::min<std::uint64_t>(sizeof zeros, padding - k));
    if (progress) progress(f.written(), total);
  }
  f.commit();
}

}  // namespace realizar::gguf
