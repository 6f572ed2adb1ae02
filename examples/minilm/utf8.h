// utf8.h: UTF-8 <-> code points for the tokenizer and the JSON reader.
#pragma once

#include <string>
#include <string_view>

namespace minilm {

// UTF-8 -> code points; an invalid byte sequence becomes U+FFFD (which cleaning then removes).
std::u32string decode_utf8(std::string_view text);
// The code point at byte *at (< text.size()), or U+FFFD for one invalid byte; *at moves past it.
char32_t decode_next(std::string_view text, size_t *at);
std::string encode_utf8(std::u32string_view text);
void append_utf8(std::string *out, char32_t c);

}  // namespace minilm
