// wordpiece.h: BERT's WordPiece tokenizer over a vocab.txt: words -> ids with [CLS]/[SEP].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace minilm {

class WordPiece {
 public:
  // vocab.txt: one token a line, the line number is its id. Throws std::runtime_error.
  static WordPiece read(const std::string &path);
  explicit WordPiece(std::vector<std::string> tokens);

  // [CLS] pieces... [SEP] for a UTF-8 sentence, cut to max_length ids (keeping [CLS] and [SEP]).
  std::vector<int32_t> encode(std::string_view sentence, int max_length) const;
  // The pieces of one basic-tokenized word: greedy longest match, "##" on continuations; one
  // [UNK] for a word over 100 characters or one with an unmatched rest.
  void word_pieces(std::string_view word, std::vector<int32_t> *ids) const;

  int32_t id(std::string_view token) const;  // -1 when absent
  const std::string &token(int32_t id) const { return tokens_.at(size_t(id)); }
  size_t size() const { return tokens_.size(); }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
  int32_t unk_, cls_, sep_;
};

}  // namespace minilm
