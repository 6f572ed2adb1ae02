// basic_tokenizer.h: BERT's basic tokenizer (uncased): cleaning, CJK split, accent stripping,
// lower-casing, then split on whitespace and punctuation into words.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace minilm {

// The words of `text` (UTF-8) as BERT's uncased basic tokenizer finds them, each in UTF-8.
std::vector<std::string> basic_tokenize(std::string_view text);

}  // namespace minilm
