// basic_tokenizer.h: BERT's basic tokenizer (uncased): cleaning, CJK split, accent stripping,
// lower-casing, then split on whitespace and punctuation into words.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace minilm {

// The words of `text` (UTF-8) as BERT's uncased basic tokenizer finds them, each in UTF-8.
std::vector<std::string> basic_tokenize(std::string_view text);
// The same words handed to `take` in order, as they are found; once it returns false no further
// word is handed over and no further byte of text is read.
void basic_tokenize(std::string_view text, const std::function<bool(const std::string &)> &take);

}  // namespace minilm
