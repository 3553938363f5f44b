// A template's text and name, for errors that say where: "<name>:<line>:<column>: <construct>: <what>".
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace realizar::chat {

struct Source {
  std::string_view name;
  std::string_view text;
  // Throws TemplateError at byte offset pos.
  [[noreturn]] void fail(std::size_t pos, const std::string& construct, const std::string& message) const;
};

// Code points of UTF-8 text: Python's len(), indexes and slices count characters, not bytes.
std::size_t utf8_length(std::string_view s);
// Byte offset of each character and, last, s.size().
void utf8_offsets(std::string_view s, std::basic_string<std::size_t>& out);

}  // namespace realizar::chat
