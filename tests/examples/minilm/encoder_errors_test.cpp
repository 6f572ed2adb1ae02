// encoder_errors_test.cpp: the MiniLM encoder refuses model directories it cannot run (configs that
// are not this BERT, weights missing or of the wrong shape, a truncated file) with the cause named.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bert_encoder.h"
#include "safetensors.h"

namespace {

namespace fs = std::filesystem;

const std::string kConfig =
    R"({"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute",
  "vocab_size": 8, "hidden_size": 384, "num_hidden_layers": 1, "num_attention_heads": 12,
  "intermediate_size": 16, "max_position_embeddings": 8, "type_vocab_size": 2, "layer_norm_eps": 1e-12})";

struct ModelDir {
  fs::path path;
  explicit ModelDir(const std::string &config, const std::string &st_config = R"({"max_seq_length": 8})") {
    path = fs::temp_directory_path() /
           ("minilm_errors_" + std::to_string(std::hash<std::string>{}(config + st_config)));
    fs::create_directories(path);
    std::ofstream(path / "config.json") << config;
    std::ofstream(path / "sentence_bert_config.json") << st_config;
  }
  ~ModelDir() { fs::remove_all(path); }
  void weights(const std::string &header, size_t data_bytes) const {
    std::ofstream out(path / "model.safetensors", std::ios::binary);
    for (int i = 0; i < 8; ++i) out.put(char(uint64_t(header.size()) >> (8 * i)));
    out << header << std::string(data_bytes, '\0');
  }
};

std::string error_of(const ModelDir &dir) {
  try {
    minilm::BertEncoder encoder(dir.path.string());
  } catch (const std::exception &e) {
    MESSAGE(std::string(e.what()));
    return e.what();
  }
  FAIL("the model was accepted");
  return "";
}

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  return text.replace(text.find(from), from.size(), to);
}

}  // namespace

TEST_CASE("configs the compiled kernel or the code cannot run are refused") {
  CHECK(error_of(ModelDir(replaced(kConfig, "\"hidden_size\": 384", "\"hidden_size\": 768")))
            .find("compiled attention kernel") != std::string::npos);
  CHECK(error_of(ModelDir(replaced(kConfig, "\"num_attention_heads\": 12", "\"num_attention_heads\": 6")))
            .find("compiled attention kernel") != std::string::npos);
  CHECK(error_of(ModelDir(replaced(kConfig, "\"gelu\"", "\"relu\""))).find("hidden_act") !=
        std::string::npos);
  CHECK(error_of(ModelDir(replaced(kConfig, "\"bert\"", "\"roberta\""))).find("model_type") !=
        std::string::npos);
  CHECK(error_of(ModelDir(replaced(kConfig, "\"vocab_size\": 8,", ""))).find("vocab_size") !=
        std::string::npos);
  CHECK(error_of(ModelDir(replaced(kConfig, "1e-12", "-1"))).find("layer_norm_eps") != std::string::npos);
  CHECK(error_of(ModelDir(kConfig, R"({"max_seq_length": 9})")).find("max_position_embeddings") !=
        std::string::npos);
  CHECK(error_of(ModelDir(kConfig, "{")).find("JSON") != std::string::npos);
}

TEST_CASE("weights that are missing, misshapen or cut short are refused by name") {
  const ModelDir dir(kConfig);
  CHECK(error_of(dir).find("model.safetensors: cannot open") != std::string::npos);
  dir.weights(
      R"({"embeddings.word_embeddings.weight": {"dtype": "F32", "shape": [8, 384], "data_offsets": [0, 12288]}})",
      12288);
  CHECK(error_of(dir).find("no tensor \"embeddings.position_embeddings.weight\"") != std::string::npos);
  dir.weights(
      R"({"embeddings.word_embeddings.weight": {"dtype": "F32", "shape": [384, 8], "data_offsets": [0, 12288]}})",
      12288);
  CHECK(error_of(dir).find("expected [8, 384]") != std::string::npos);
  dir.weights(
      R"({"embeddings.word_embeddings.weight": {"dtype": "F32", "shape": [8, 384], "data_offsets": [0, 12288]}})",
      1000);
  CHECK(error_of(dir).find("truncated") != std::string::npos);
}
