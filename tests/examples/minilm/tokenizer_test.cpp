// tokenizer_test.cpp: BERT's basic tokenizer and WordPiece of the MiniLM example on cases whose
// answers follow from BERT's definitions (the real vocabulary's check is the test minilm_tokens).
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

#include "basic_tokenizer.h"
#include "utf8.h"
#include "wordpiece.h"

using Words = std::vector<std::string>;

TEST_CASE("basic tokenizer: lower-casing, accent stripping, punctuation and whitespace") {
  CHECK(minilm::basic_tokenize("Hello, World!") == Words{"hello", ",", "world", "!"});
  CHECK(minilm::basic_tokenize("Café ÀÉÎÕÜ Ångström Çà") == Words{"cafe", "aeiou", "angstrom", "ca"});
  CHECK(minilm::basic_tokenize("e\xCC\x81t\xC3\xA9") == Words{"ete"});        // a lone combining accent
  CHECK(minilm::basic_tokenize("Straße ĲSSEL") == Words{"straße", "ĳssel"});  // no compatibility folding
  CHECK(minilm::basic_tokenize("a\tb\u00a0c\u3000d\ne") == Words{"a", "b", "c", "d", "e"});
  CHECK(minilm::basic_tokenize("x\u200by\x07z\xEF\xBB\xBF") == Words{"xyz"});  // Cf and Cc are removed
  CHECK(minilm::basic_tokenize("a—b¿c«d»") == Words{"a", "—", "b", "¿", "c", "«", "d", "»"});
  CHECK(minilm::basic_tokenize("$5 ^_^ `x`") == Words{"$", "5", "^", "_", "^", "`", "x", "`"});
  CHECK(minilm::basic_tokenize("™©") == Words{"™©"});  // symbols (So) are not punctuation
  CHECK(minilm::basic_tokenize("ΑΘΉΝΑ Йод") == Words{"αθηνα", "иод"});
  CHECK(minilm::basic_tokenize("").empty());
  CHECK(minilm::basic_tokenize(" \t ").empty());
}

TEST_CASE("basic tokenizer: CJK ideographs become words of their own, kana do not") {
  CHECK(minilm::basic_tokenize("東京はabc") == Words{"東", "京", "はabc"});
  CHECK(minilm::basic_tokenize("で") == Words{"て"});                  // NFD splits the dakuten, an Mn mark
  CHECK(minilm::basic_tokenize("한") == Words{"\u1112\u1161\u11ab"});  // Hangul decomposes to jamo
}

TEST_CASE("invalid UTF-8 becomes U+FFFD, which the cleaning step removes") {
  CHECK(minilm::decode_utf8("a\xFF"
                            "b\xC0\xAF"
                            "c\xE2\x82") == U"a\uFFFDb\uFFFD\uFFFDc\uFFFD\uFFFD");
  CHECK(minilm::basic_tokenize("a\xFF"
                               "b") == Words{"ab"});
  CHECK(minilm::encode_utf8(U"\U0001F600é") == "\xF0\x9F\x98\x80\xC3\xA9");
}

TEST_CASE("WordPiece: greedy longest match, ## continuations, [UNK] for the unmatched and the long") {
  const minilm::WordPiece vocab(
      {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "##a", "aff", "##ff", "a", ",", "##b"});
  std::vector<int32_t> ids;
  vocab.word_pieces("unaffable", &ids);
  CHECK(ids == std::vector<int32_t>{4, 5, 6});
  ids.clear();
  vocab.word_pieces("unx", &ids);  // "un" matches, "##x" does not: the whole word is [UNK]
  CHECK(ids == std::vector<int32_t>{1});
  ids.clear();
  vocab.word_pieces(std::string(100, 'a'), &ids);  // 100 characters: still split
  CHECK(ids.size() == 100);
  ids.clear();
  vocab.word_pieces(std::string(101, 'a'), &ids);  // over 100: one [UNK]
  CHECK(ids == std::vector<int32_t>{1});
  CHECK(vocab.encode("Un, aff", 16) == std::vector<int32_t>{2, 4, 11, 8, 3});
  CHECK(vocab.encode("", 16) == std::vector<int32_t>{2, 3});
}

TEST_CASE("WordPiece: truncation keeps [CLS] and [SEP] around the first pieces") {
  const minilm::WordPiece vocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##b"});
  CHECK(vocab.encode("a a a a a", 4) == std::vector<int32_t>{2, 4, 4, 3});
  CHECK(vocab.encode("abbbbb", 4) == std::vector<int32_t>{2, 4, 5, 3});  // cut inside a word
  CHECK(vocab.encode("a", 2) == std::vector<int32_t>{2, 3});
  CHECK_THROWS(vocab.encode("a", 1));
  CHECK_THROWS(minilm::WordPiece({"[PAD]", "a"}));
}

// Issue 32: the whole input was normalized before truncation (48 MiB: 14.5 s, 800 MB). Now the
// text past the words that fill max_length is never read: here it is an inaccessible page, which
// a read would fault on.
TEST_CASE("WordPiece: encoding stops reading the text once max_length ids are found") {
  const minilm::WordPiece vocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##b"});
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  void *mapping = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mapping != MAP_FAILED);
  char *text = static_cast<char *>(mapping);
  for (size_t i = 0; i < page; i += 2) text[i] = 'a', text[i + 1] = ' ';  // page / 2 words
  REQUIRE(mprotect(text + page, page, PROT_NONE) == 0);
  const std::string_view past_the_page(text, 2 * page);  // its second half unreadable
  const std::vector<int32_t> ids = vocab.encode(past_the_page, 256);
  CHECK(ids.size() == 256);
  CHECK(ids == vocab.encode(std::string_view(text, 600), 256));  // the same as its first 300 words
  std::vector<std::string> words;
  minilm::basic_tokenize(past_the_page, [&](const std::string &word) {
    words.push_back(word);
    return words.size() < 10;
  });
  CHECK(words == Words(10, "a"));
  munmap(mapping, 2 * page);
}
