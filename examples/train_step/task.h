// task.h: the toy task, associative recall: name the value a key was paired with earlier on.
#pragma once

#include <vector>

#include "random.h"

// A sequence holds `pairs` tokens, each a distinct key with a value, then `pairs` query tokens:
// the same keys in a shuffled order, each with a query marker where a value would be. At each
// query token the model must name the value its key was paired with. Only attention can do it:
// the answer sits at another position, found by matching keys.
struct TaskShape {
  int keys = 16;     // key vocabulary
  int values = 8;    // value vocabulary: the model's output classes
  int pairs = 8;     // (key, value) tokens per sequence, and as many queries
  int d_model = 32;  // token embedding width
  int seq_len() const { return 2 * pairs; }
};

struct Batch {
  int count = 0;             // sequences
  std::vector<float> x;      // [count, seq_len, d_model]: the token embeddings
  std::vector<int> targets;  // [count, pairs]: the value each query token must name
};

class RecallTask {
 public:
  // Draws the fixed token embeddings.
  RecallTask(TaskShape shape, Random &random);

  const TaskShape &shape() const { return shape_; }
  // count fresh sequences.
  Batch sample(int count, Random &random) const;

 private:
  // Adds key and value embeddings (value == shape_.values: the query marker) into token.
  void embed(int key, int value, float *token) const;

  TaskShape shape_;
  std::vector<float> key_embedding_;    // [keys, d_model]
  std::vector<float> value_embedding_;  // [values + 1, d_model]: the last row is the query marker
};
