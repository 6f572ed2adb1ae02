// json_value.h: a small strict JSON parser for safetensors headers and the model's config files.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace minilm {

struct JsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct JsonValue {
  enum class Kind { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  double number = 0.0;
  bool is_integer = false;  // number written without fraction or exponent, fits int64
  int64_t integer = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;
  std::vector<std::string> keys;  // object keys in file order

  const JsonValue *find(std::string_view key) const;
};

// Parses one document (UTF-8); throws JsonError naming the byte offset of the first problem.
// Duplicate object keys and nesting deeper than 32 levels are errors.
JsonValue parse_json(std::string_view text);

}  // namespace minilm
