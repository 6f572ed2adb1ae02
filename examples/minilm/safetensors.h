// safetensors.h: a checked reader of .safetensors files (8-byte header length, JSON header, data).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace minilm {

// What was wrong with a file, for callers (and tests) that tell the cases apart.
enum class SafetensorsProblem {
  io,         // the file could not be opened or read
  truncated,  // shorter than its header length or its tensors' offsets say
  header,     // the header is not the JSON object the format describes
  dtype,      // a dtype the reader does not know, or one that cannot become f32
  offsets,    // data_offsets overlap, leave holes, or run backwards
  shape,      // shape and byte size disagree, or a tensor has another shape than expected
  missing,    // no tensor of that name
};

struct SafetensorsError : std::runtime_error {
  SafetensorsError(SafetensorsProblem problem, const std::string &message)
      : std::runtime_error(message), problem(problem) {}
  SafetensorsProblem problem;
};

enum class DType { f64, f32, f16, bf16, i64, i32, i16, i8, u8, boolean };

struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data section
};

class SafetensorsFile {
 public:
  // Reads and checks a whole file; throws SafetensorsError.
  static SafetensorsFile read(const std::string &path);
  // Checks bytes already in memory; origin names them in messages.
  static SafetensorsFile parse(std::vector<uint8_t> bytes, const std::string &origin);

  const std::vector<TensorInfo> &tensors() const { return tensors_; }
  const TensorInfo *find(const std::string &name) const;
  // The tensor as f32 (F32 as is; F64, F16, BF16 converted), after checking its shape is `shape`.
  std::vector<float> floats(const std::string &name, const std::vector<int64_t> &shape) const;

 private:
  std::string origin_;
  std::vector<uint8_t> bytes_;
  size_t data_start_ = 0;
  std::vector<TensorInfo> tensors_;
};

}  // namespace minilm
