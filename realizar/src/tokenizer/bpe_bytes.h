// Byte-level BPE's byte <-> character mapping: every byte is spelled by one printable Unicode
// character (printable ASCII and Latin-1 bytes by themselves, the rest by U+0100 onwards), so
// vocabularies and merges never contain raw spaces or control bytes.
#pragma once
#include <string>
#include <string_view>

namespace realizar {

std::string bpe_byte_char(unsigned char b);       // UTF-8 of the character spelling byte b
std::string bpe_encode_bytes(std::string_view s);  // each byte of s -> its character
std::string bpe_decode(std::string_view token);    // a token's characters -> the bytes (others kept)

}  // namespace realizar
