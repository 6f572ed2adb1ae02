// bert_encoder.h: a BERT sentence encoder (all-MiniLM-L6-v2): embeddings, post-LN encoder layers
// with attnc's block kernel for attention, mean pooling and L2 normalization.
#pragma once

#include <attn/runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace minilm {

struct BertConfig {
  int vocab_size = 0, hidden = 0, layers = 0, heads = 0, intermediate = 0, max_positions = 0, type_vocab = 0;
  double layer_norm_eps = 0;
  int max_seq_length = 0;  // sentence-transformers' cut (sentence_bert_config.json)
};

// config.json and sentence_bert_config.json of a model directory; throws std::runtime_error when
// a field is missing, or the model is not a BERT with GELU and absolute positions.
BertConfig read_config(const std::string &model_dir);

struct LayerWeights {
  // Attention, in the block form's layout (nn.Linear rows: w_* [out, in]) as BERT stores them:
  // w_q, w_k, w_v [hidden, hidden] (head h: rows h*32 .. h*32+31), w_o [hidden, hidden].
  std::vector<float> w_q, w_k, w_v, b_q, b_k, b_v, w_o, b_o;
  std::vector<float> ln1_gamma, ln1_beta;  // after attention + residual [hidden]
  std::vector<float> w_in_t, b_in;    // intermediate: transposed to [hidden, intermediate], [intermediate]
  std::vector<float> w_out_t, b_out;  // output: transposed to [intermediate, hidden], [hidden]
  std::vector<float> ln2_gamma, ln2_beta;  // after feed-forward + residual [hidden]
};

struct Timing {
  double total_ms = 0, attention_ms = 0;  // attention: the attnc calls alone
};

class BertEncoder {
 public:
  // Reads model.safetensors and the configs from model_dir; finds the attnc kernel. Throws
  // std::runtime_error (SafetensorsError for the weights file) with the problem named.
  explicit BertEncoder(const std::string &model_dir);

  const BertConfig &config() const { return config_; }

  // Embeddings [ids.size(), hidden] (each of L2 norm 1) of a batch of token id sequences of any
  // lengths (1 .. max_seq_length), padded to the longest; accumulates times into *timing.
  std::vector<float> embed(const std::vector<std::vector<int32_t>> &ids, Timing *timing = nullptr) const;

 private:
  BertConfig config_;
  std::vector<float> word_, position_, token_type_, ln0_gamma_, ln0_beta_;
  std::vector<LayerWeights> layers_;
  const attn_kernel *attention_ = nullptr;
};

}  // namespace minilm
