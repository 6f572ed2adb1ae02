// utf8.cpp: UTF-8 decoding that replaces each invalid, overlong or surrogate sequence by U+FFFD.
#include "utf8.h"

#include <cstdint>

namespace minilm {

char32_t decode_next(std::string_view text, size_t *at) {
  const size_t i = *at;
  const uint8_t b = uint8_t(text[i]);
  const int extra = b < 0x80                ? 0
                    : b >= 0xC2 && b < 0xE0 ? 1
                    : b >= 0xE0 && b < 0xF0 ? 2
                    : b >= 0xF0 && b < 0xF5 ? 3
                                            : -1;
  ++*at;  // an invalid byte: one U+FFFD for it, then the next byte
  if (extra < 0 || i + size_t(extra) >= text.size()) return U'\uFFFD';
  char32_t c = extra == 0 ? b : b & (0x3F >> extra);
  bool ok = true;
  for (int k = 1; k <= extra; ++k) {
    const uint8_t cont = uint8_t(text[i + size_t(k)]);
    if ((cont & 0xC0) != 0x80) ok = false;
    c = c << 6 | (cont & 0x3F);
  }
  const char32_t min[] = {0, 0x80, 0x800, 0x10000};
  if (!ok || c < min[extra] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return U'\uFFFD';
  *at = i + size_t(extra) + 1;
  return c;
}

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  for (size_t i = 0; i < text.size();) out += decode_next(text, &i);
  return out;
}

void append_utf8(std::string *out, char32_t c) {
  if (c < 0x80) {
    *out += char(c);
  } else if (c < 0x800) {
    *out += char(0xC0 | c >> 6), *out += char(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    *out += char(0xE0 | c >> 12), *out += char(0x80 | (c >> 6 & 0x3F)), *out += char(0x80 | (c & 0x3F));
  } else {
    *out += char(0xF0 | c >> 18), *out += char(0x80 | (c >> 12 & 0x3F)), *out += char(0x80 | (c >> 6 & 0x3F));
    *out += char(0x80 | (c & 0x3F));
  }
}

std::string encode_utf8(std::u32string_view text) {
  std::string out;
  for (const char32_t c : text) append_utf8(&out, c);
  return out;
}

}  // namespace minilm
