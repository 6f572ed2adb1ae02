// basic_tokenizer.cpp: the steps of Hugging Face's BertNormalizer (clean_text, handle_chinese_chars,
// strip_accents, lowercase) and BertPreTokenizer, with unicode_tables.inc's character data.
#include "basic_tokenizer.h"

#include <algorithm>
#include <cstdint>
#include <functional>

#include "utf8.h"

namespace minilm {
namespace {

enum CategoryClass : uint8_t { kOther, kPunctuation, kMark };
struct CategoryRange {
  char32_t first, last;
  CategoryClass cls;
};
struct Fold {
  char32_t cp;
  uint8_t length;
  char32_t out[3];
};
#include "unicode_tables.inc"

constexpr int kNoClass = -1;

int category_class(char32_t c) {
  const auto *end = std::end(kCategoryRanges);
  const auto *it = std::upper_bound(std::begin(kCategoryRanges), end, c,
                                    [](char32_t v, const CategoryRange &r) { return v < r.first; });
  if (it == std::begin(kCategoryRanges)) return kNoClass;
  --it;
  return c <= it->last ? int(it->cls) : kNoClass;
}

// Unicode's White_Space property (what Rust's char::is_whitespace tests).
bool is_whitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// BERT's "Chinese character" blocks: the CJK Unified Ideographs and their extensions, and the
// compatibility ideographs (not kana or hangul).
bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// BERT counts all non-letter, non-digit ASCII as punctuation, and Unicode's P* categories.
bool is_punctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
    return true;
  return category_class(c) == kPunctuation;
}

// NFD without the nonspacing marks, lower-cased: appends c's replacement to out.
void strip_and_lower(char32_t c, std::u32string *out) {
  if (c >= 0xAC00 && c <= 0xD7A3) {  // Hangul syllable: leading, vowel and optional trailing jamo
    const char32_t s = c - 0xAC00;
    *out += char32_t(0x1100 + s / 588);
    *out += char32_t(0x1161 + s % 588 / 28);
    if (s % 28) *out += char32_t(0x11A7 + s % 28);
    return;
  }
  if (category_class(c) == kMark) return;
  const auto *end = std::end(kFolds);
  const auto *it =
      std::lower_bound(std::begin(kFolds), end, c, [](const Fold &f, char32_t v) { return f.cp < v; });
  if (it != end && it->cp == c) {
    out->append(it->out, it->length);
  } else {
    *out += c;
  }
}

}  // namespace

void basic_tokenize(std::string_view text, const std::function<bool(const std::string &)> &take) {
  // One pass, character by character: normalization's output goes straight into the word split,
  // so that a caller who has enough words stops the work (and the reading) there.
  std::u32string normalized, word;
  bool more = true;
  auto emit = [&](const std::string &w) { more = more && take(w); };
  auto flush = [&] {
    if (!word.empty()) emit(encode_utf8(word)), word.clear();
  };
  for (size_t at = 0; at < text.size() && more;) {
    const char32_t c = decode_next(text, &at);
    const bool kept_control = c == U'\t' || c == U'\n' || c == U'\r';
    if (c == 0 || c == 0xFFFD || (!kept_control && category_class(c) == kOther)) continue;
    normalized.clear();
    if (is_whitespace(c)) {
      normalized += U' ';
    } else if (is_cjk(c)) {
      normalized += U' ';
      strip_and_lower(c, &normalized);
      normalized += U' ';
    } else {
      strip_and_lower(c, &normalized);
    }
    for (const char32_t n : normalized) {
      if (is_whitespace(n)) {
        flush();
      } else if (is_punctuation(n)) {
        flush();
        emit(encode_utf8(std::u32string(1, n)));
      } else {
        word += n;
      }
    }
  }
  if (more) flush();
}

std::vector<std::string> basic_tokenize(std::string_view text) {
  std::vector<std::string> words;
  basic_tokenize(text, [&](const std::string &word) {
    words.push_back(word);
    return true;
  });
  return words;
}

}  // namespace minilm
