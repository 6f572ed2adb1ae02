// bert_encoder.cpp: loads all-MiniLM-L6-v2 and runs it: per layer x = LN(x + attention(x)), then
// x = LN(x + W2·GELU(W1·x)); mean over real tokens; L2 normalization.
#include "bert_encoder.h"

#include <attn/kernel_id.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "dense_ops.h"
#include "json_value.h"
#include "minilm_spec.h"
#include "safetensors.h"

namespace minilm {
namespace {

JsonValue read_json_file(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return parse_json(text.str());
  } catch (const JsonError &e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

const JsonValue &field(const JsonValue &doc, const std::string &path, const char *key, JsonValue::Kind kind) {
  const JsonValue *v = doc.find(key);
  if (!v || v->kind != kind) throw std::runtime_error(path + ": missing or mistyped field \"" + key + "\"");
  return *v;
}

int int_field(const JsonValue &doc, const std::string &path, const char *key) {
  const JsonValue &v = field(doc, path, key, JsonValue::Kind::number);
  if (!v.is_integer || v.integer <= 0 || v.integer > (1 << 24))
    throw std::runtime_error(path + ": \"" + key + "\" must be a positive integer");
  return int(v.integer);
}

std::vector<float> transpose(const std::vector<float> &w, size_t rows, size_t cols) {
  std::vector<float> t(w.size());
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) t[c * rows + r] = w[r * cols + c];
  return t;
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

BertConfig read_config(const std::string &model_dir) {
  const std::string path = model_dir + "/config.json", st_path = model_dir + "/sentence_bert_config.json";
  const JsonValue doc = read_json_file(path), st = read_json_file(st_path);
  if (field(doc, path, "model_type", JsonValue::Kind::string).string != "bert")
    throw std::runtime_error(path + ": model_type is not \"bert\"");
  if (field(doc, path, "hidden_act", JsonValue::Kind::string).string != "gelu")
    throw std::runtime_error(path + ": hidden_act is not \"gelu\" (the exact, erf GELU)");
  if (const JsonValue *p = doc.find("position_embedding_type"); p && p->string != "absolute")
    throw std::runtime_error(path + ": position_embedding_type is not \"absolute\"");
  BertConfig c;
  c.vocab_size = int_field(doc, path, "vocab_size");
  c.hidden = int_field(doc, path, "hidden_size");
  c.layers = int_field(doc, path, "num_hidden_layers");
  c.heads = int_field(doc, path, "num_attention_heads");
  c.intermediate = int_field(doc, path, "intermediate_size");
  c.max_positions = int_field(doc, path, "max_position_embeddings");
  c.type_vocab = int_field(doc, path, "type_vocab_size");
  c.layer_norm_eps = field(doc, path, "layer_norm_eps", JsonValue::Kind::number).number;
  c.max_seq_length = int_field(st, st_path, "max_seq_length");
  if (!(c.layer_norm_eps > 0)) throw std::runtime_error(path + ": layer_norm_eps must be positive");
  if (c.max_seq_length > c.max_positions)
    throw std::runtime_error(st_path + ": max_seq_length is over max_position_embeddings");
  return c;
}

BertEncoder::BertEncoder(const std::string &model_dir) : config_(read_config(model_dir)) {
  const BertConfig &c = config_;
  const attn::Spec &spec = minilm_attention_spec;
  if (c.hidden != spec.d_model || c.heads != spec.heads)
    throw std::runtime_error("the model has hidden_size " + std::to_string(c.hidden) + " and " +
                             std::to_string(c.heads) + " heads; the compiled attention kernel is for " +
                             std::to_string(spec.d_model) + " and " + std::to_string(spec.heads));
  const std::string id = attn::kernel_id(spec);
  if (attn_find_kernel(id.c_str(), &attention_) != ATTN_OK) throw std::runtime_error(attn_last_error());

  const SafetensorsFile file = SafetensorsFile::read(model_dir + "/model.safetensors");
  const int64_t M = c.hidden, F = c.intermediate;
  word_ = file.floats("embeddings.word_embeddings.weight", {c.vocab_size, M});
  position_ = file.floats("embeddings.position_embeddings.weight", {c.max_positions, M});
  token_type_ = file.floats("embeddings.token_type_embeddings.weight", {c.type_vocab, M});
  ln0_gamma_ = file.floats("embeddings.LayerNorm.weight", {M});
  ln0_beta_ = file.floats("embeddings.LayerNorm.bias", {M});
  for (int l = 0; l < c.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    LayerWeights w;
    // BERT's query/key/value/output.dense are nn.Linear [out, in] with heads as consecutive row
    // blocks: already the block form's separate-QKV layout.
    w.w_q = file.floats(p + "attention.self.query.weight", {M, M});
    w.b_q = file.floats(p + "attention.self.query.bias", {M});
    w.w_k = file.floats(p + "attention.self.key.weight", {M, M});
    w.b_k = file.floats(p + "attention.self.key.bias", {M});
    w.w_v = file.floats(p + "attention.self.value.weight", {M, M});
    w.b_v = file.floats(p + "attention.self.value.bias", {M});
    w.w_o = file.floats(p + "attention.output.dense.weight", {M, M});
    w.b_o = file.floats(p + "attention.output.dense.bias", {M});
    w.ln1_gamma = file.floats(p + "attention.output.LayerNorm.weight", {M});
    w.ln1_beta = file.floats(p + "attention.output.LayerNorm.bias", {M});
    w.w_in_t = transpose(file.floats(p + "intermediate.dense.weight", {F, M}), size_t(F), size_t(M));
    w.b_in = file.floats(p + "intermediate.dense.bias", {F});
    w.w_out_t = transpose(file.floats(p + "output.dense.weight", {M, F}), size_t(M), size_t(F));
    w.b_out = file.floats(p + "output.dense.bias", {M});
    w.ln2_gamma = file.floats(p + "output.LayerNorm.weight", {M});
    w.ln2_beta = file.floats(p + "output.LayerNorm.bias", {M});
    layers_.push_back(std::move(w));
  }
}

std::vector<float> BertEncoder::embed(const std::vector<std::vector<int32_t>> &ids, Timing *timing) const {
  const Clock::time_point start = Clock::now();
  const size_t B = ids.size(), M = size_t(config_.hidden), F = size_t(config_.intermediate);
  size_t S = 0;
  std::vector<int32_t> lengths(B);
  for (size_t b = 0; b < B; ++b) {
    if (ids[b].empty() || ids[b].size() > size_t(config_.max_seq_length))
      throw std::runtime_error("sentence " + std::to_string(b) + " has " + std::to_string(ids[b].size()) +
                               " tokens; 1 to " + std::to_string(config_.max_seq_length) + " allowed");
    lengths[b] = int32_t(ids[b].size());
    S = std::max(S, ids[b].size());
  }
  if (B == 0) return {};
  const size_t rows = B * S;

  // Embeddings: word + position + token type 0; pad positions take [PAD] (id 0) like BERT's.
  std::vector<float> x(rows * M), zero(rows * M, 0.0f);
  for (size_t b = 0; b < B; ++b)
    for (size_t s = 0; s < S; ++s) {
      const int32_t id = s < ids[b].size() ? ids[b][s] : 0;
      if (id < 0 || id >= config_.vocab_size)
        throw std::runtime_error("token id " + std::to_string(id) + " is outside the vocabulary");
      float *row = &x[(b * S + s) * M];
      for (size_t i = 0; i < M; ++i)
        row[i] = word_[size_t(id) * M + i] + position_[s * M + i] + token_type_[i];
    }
  add_layer_norm(x.data(), zero.data(), rows, M, ln0_gamma_.data(), ln0_beta_.data(), config_.layer_norm_eps);

  std::vector<float> attended(rows * M), hidden(rows * F), ffn(rows * M);
  const int64_t x_shape[] = {int64_t(B), int64_t(S), int64_t(M)}, w_shape[] = {int64_t(M), int64_t(M)},
                b_shape[] = {int64_t(M)}, lengths_shape[] = {int64_t(B)};
  double attention_ms = 0;
  for (const LayerWeights &w : layers_) {
    // attn_arg takes void *: the kernel only reads its inputs.
    const attn_arg args[] = {
        {"x", {x.data(), ATTN_F32, 3, x_shape, nullptr}},
        {"w_q", {const_cast<float *>(w.w_q.data()), ATTN_F32, 2, w_shape, nullptr}},
        {"w_k", {const_cast<float *>(w.w_k.data()), ATTN_F32, 2, w_shape, nullptr}},
        {"w_v", {const_cast<float *>(w.w_v.data()), ATTN_F32, 2, w_shape, nullptr}},
        {"b_q", {const_cast<float *>(w.b_q.data()), ATTN_F32, 1, b_shape, nullptr}},
        {"b_k", {const_cast<float *>(w.b_k.data()), ATTN_F32, 1, b_shape, nullptr}},
        {"b_v", {const_cast<float *>(w.b_v.data()), ATTN_F32, 1, b_shape, nullptr}},
        {"w_o", {const_cast<float *>(w.w_o.data()), ATTN_F32, 2, w_shape, nullptr}},
        {"b_o", {const_cast<float *>(w.b_o.data()), ATTN_F32, 1, b_shape, nullptr}},
        {"key_lengths", {lengths.data(), ATTN_I32, 1, lengths_shape, nullptr}},
        {"out", {attended.data(), ATTN_F32, 3, x_shape, nullptr}},
    };
    const Clock::time_point attention_start = Clock::now();
    if (attn_run(attention_, args, int(sizeof args / sizeof args[0])) != ATTN_OK)
      throw std::runtime_error(std::string("attention: ") + attn_last_error());
    attention_ms += ms_since(attention_start);
    add_layer_norm(x.data(), attended.data(), rows, M, w.ln1_gamma.data(), w.ln1_beta.data(),
                   config_.layer_norm_eps);
    linear(x.data(), rows, M, w.w_in_t.data(), w.b_in.data(), F, hidden.data());
    gelu(hidden.data(), hidden.size());
    linear(hidden.data(), rows, F, w.w_out_t.data(), w.b_out.data(), M, ffn.data());
    add_layer_norm(x.data(), ffn.data(), rows, M, w.ln2_gamma.data(), w.ln2_beta.data(),
                   config_.layer_norm_eps);
  }

  // Mean over each sentence's real tokens, then unit length.
  std::vector<float> out(B * M);
  for (size_t b = 0; b < B; ++b) {
    std::vector<double> mean(M, 0.0);
    for (size_t s = 0; s < size_t(lengths[b]); ++s)
      for (size_t i = 0; i < M; ++i) mean[i] += x[(b * S + s) * M + i];
    double norm = 0;
    for (double &m : mean) norm += (m /= lengths[b]) * m;
    norm = std::max(std::sqrt(norm), 1e-12);  // sentence-transformers' Normalize clamps the same way
    for (size_t i = 0; i < M; ++i) out[b * M + i] = float(mean[i] / norm);
  }
  if (timing) {
    timing->total_ms += ms_since(start);
    timing->attention_ms += attention_ms;
  }
  return out;
}

}  // namespace minilm
