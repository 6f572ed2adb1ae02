// wordpiece.cpp: greedy longest-match-first word pieces, as BERT's WordpieceTokenizer.
#include "wordpiece.h"

#include <fstream>
#include <stdexcept>

#include "basic_tokenizer.h"
#include "utf8.h"

namespace minilm {

constexpr size_t kMaxWordChars = 100;  // longer words become one [UNK]

WordPiece WordPiece::read(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the vocabulary");
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    tokens.push_back(line);
  }
  return WordPiece(std::move(tokens));
}

WordPiece::WordPiece(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i) ids_.emplace(tokens_[i], int32_t(i));  // first one wins
  unk_ = id("[UNK]"), cls_ = id("[CLS]"), sep_ = id("[SEP]");
  if (unk_ < 0 || cls_ < 0 || sep_ < 0)
    throw std::runtime_error("the vocabulary lacks [UNK], [CLS] or [SEP]");
}

int32_t WordPiece::id(std::string_view token) const {
  const auto it = ids_.find(std::string(token));
  return it == ids_.end() ? -1 : it->second;
}

void WordPiece::word_pieces(std::string_view word, std::vector<int32_t> *ids) const {
  const std::u32string chars = decode_utf8(word);
  if (chars.size() > kMaxWordChars) {
    ids->push_back(unk_);
    return;
  }
  std::vector<int32_t> pieces;
  for (size_t start = 0; start < chars.size();) {
    int32_t found = -1;
    size_t end = chars.size();
    for (; end > start; --end) {
      const std::string piece = (start > 0 ? "##" : "") + encode_utf8(chars.substr(start, end - start));
      if ((found = id(piece)) >= 0) break;
    }
    if (found < 0) {
      ids->push_back(unk_);
      return;
    }
    pieces.push_back(found);
    start = end;
  }
  ids->insert(ids->end(), pieces.begin(), pieces.end());
}

std::vector<int32_t> WordPiece::encode(std::string_view sentence, int max_length) const {
  if (max_length < 2) throw std::runtime_error("max_length must leave room for [CLS] and [SEP]");
  std::vector<int32_t> ids{cls_};
  // Words are tokenized only until the ids are full: a 48 MiB input costs what its first
  // max_length tokens cost (it was normalized whole first: 14.5 s and 800 MB).
  basic_tokenize(sentence, [&](const std::string &word) {
    word_pieces(word, &ids);
    return ids.size() < size_t(max_length) - 1;
  });
  if (ids.size() > size_t(max_length) - 1) ids.resize(size_t(max_length) - 1);
  ids.push_back(sep_);
  return ids;
}

}  // namespace minilm
