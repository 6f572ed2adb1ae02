// task.cpp: the recall task's embeddings and sequences.
#include "task.h"

#include <cmath>

RecallTask::RecallTask(TaskShape shape, Random &random)
    : shape_(shape),
      key_embedding_(
          random.normals(static_cast<size_t>(shape.keys) * shape.d_model, 1.0 / std::sqrt(shape.d_model))),
      value_embedding_(random.normals(static_cast<size_t>(shape.values + 1) * shape.d_model,
                                      1.0 / std::sqrt(shape.d_model))) {}

void RecallTask::embed(int key, int value, float *token) const {
  for (int c = 0; c < shape_.d_model; ++c) {
    token[c] = key_embedding_[static_cast<size_t>(key) * shape_.d_model + c] +
               value_embedding_[static_cast<size_t>(value) * shape_.d_model + c];
  }
}

Batch RecallTask::sample(int count, Random &random) const {
  const int pairs = shape_.pairs, width = shape_.d_model;
  Batch batch{count, std::vector<float>(static_cast<size_t>(count) * shape_.seq_len() * width),
              std::vector<int>(static_cast<size_t>(count) * pairs)};
  for (int b = 0; b < count; ++b) {
    const std::vector<int> keys = random.permutation(shape_.keys);  // the first `pairs`: distinct keys
    const std::vector<int> query_order = random.permutation(pairs);
    std::vector<int> values(pairs);
    float *sequence = batch.x.data() + static_cast<size_t>(b) * shape_.seq_len() * width;
    for (int p = 0; p < pairs; ++p) {
      values[p] = random.below(shape_.values);
      embed(keys[p], values[p], sequence + static_cast<size_t>(p) * width);
    }
    for (int j = 0; j < pairs; ++j) {
      const int p = query_order[j];
      embed(keys[p], shape_.values, sequence + static_cast<size_t>(pairs + j) * width);
      batch.targets[static_cast<size_t>(b) * pairs + j] = values[p];
    }
  }
  return batch;
}
