// safetensors.cpp: parses and checks the header (every tensor's dtype, shape and byte range) before
// any data is read, so a truncated or altered file fails with its problem named.
#include "safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "json_value.h"

namespace minilm {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100u << 20;  // the format's own limit is 100 MB

struct DTypeName {
  const char *name;
  DType dtype;
  int bytes;
};
constexpr DTypeName kDTypes[] = {{"F64", DType::f64, 8},     {"F32", DType::f32, 4}, {"F16", DType::f16, 2},
                                 {"BF16", DType::bf16, 2},   {"I64", DType::i64, 8}, {"I32", DType::i32, 4},
                                 {"I16", DType::i16, 2},     {"I8", DType::i8, 1},   {"U8", DType::u8, 1},
                                 {"BOOL", DType::boolean, 1}};

int dtype_bytes(DType d) {
  for (const DTypeName &t : kDTypes)
    if (t.dtype == d) return t.bytes;
  return 0;
}

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

uint64_t read_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16, exponent = h >> 10 & 0x1F, mantissa = h & 0x3FF;
  uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000 | mantissa << 13;  // inf or NaN
  } else if (exponent != 0) {
    bits = sign | (exponent + 112) << 23 | mantissa << 13;
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    int e = 113;
    uint32_t m = mantissa;
    while (!(m & 0x400)) m <<= 1, --e;
    bits = sign | uint32_t(e) << 23 | (m & 0x3FF) << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

SafetensorsFile SafetensorsFile::read(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SafetensorsError(SafetensorsProblem::io, path + ": cannot open the file");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw SafetensorsError(SafetensorsProblem::io, path + ": reading failed");
  return parse(std::move(bytes), path);
}

SafetensorsFile SafetensorsFile::parse(std::vector<uint8_t> bytes, const std::string &origin) {
  auto error = [&](SafetensorsProblem p, const std::string &what) {
    return SafetensorsError(p, origin + ": " + what);
  };
  if (bytes.size() < 8)
    throw error(SafetensorsProblem::truncated,
                "truncated: " + std::to_string(bytes.size()) + " bytes, fewer than the 8-byte header length");
  const uint64_t header_bytes = read_le64(bytes.data());
  if (header_bytes > kMaxHeaderBytes)
    throw error(SafetensorsProblem::header,
                "the header length " + std::to_string(header_bytes) + " is over the format's 100 MB limit");
  if (header_bytes > bytes.size() - 8)
    throw error(SafetensorsProblem::truncated, "truncated: the header needs " + std::to_string(header_bytes) +
                                                   " bytes, the file holds " +
                                                   std::to_string(bytes.size() - 8) + " after the length");
  JsonValue header;
  try {
    header = parse_json(std::string_view(reinterpret_cast<const char *>(bytes.data()) + 8, header_bytes));
  } catch (const JsonError &e) {
    throw error(SafetensorsProblem::header, std::string("the header is not valid JSON: ") + e.what());
  }
  if (header.kind != JsonValue::Kind::object)
    throw error(SafetensorsProblem::header, "the header is not a JSON object");

  SafetensorsFile file;
  file.origin_ = origin;
  file.data_start_ = 8 + header_bytes;
  const uint64_t data_bytes = bytes.size() - file.data_start_;
  for (const std::string &name : header.keys) {
    const JsonValue &entry = header.object.at(name);
    if (name == "__metadata__") {
      if (entry.kind != JsonValue::Kind::object)
        throw error(SafetensorsProblem::header, "__metadata__ is not an object");
      for (const auto &[key, value] : entry.object)
        if (value.kind != JsonValue::Kind::string)
          throw error(SafetensorsProblem::header, "__metadata__ value \"" + key + "\" is not a string");
      continue;
    }
    const std::string where = "tensor \"" + name + "\"";
    const JsonValue *dtype = entry.find("dtype"), *shape = entry.find("shape"),
                    *offsets = entry.find("data_offsets");
    if (!dtype || dtype->kind != JsonValue::Kind::string || !shape || shape->kind != JsonValue::Kind::array ||
        !offsets || offsets->kind != JsonValue::Kind::array)
      throw error(SafetensorsProblem::header,
                  where + " needs a string dtype, a shape array and a data_offsets array");
    TensorInfo info;
    info.name = name;
    const auto known = std::find_if(std::begin(kDTypes), std::end(kDTypes),
                                    [&](const DTypeName &t) { return dtype->string == t.name; });
    if (known == std::end(kDTypes))
      throw error(SafetensorsProblem::dtype, where + " has the unknown dtype \"" + dtype->string + "\"");
    info.dtype = known->dtype;
    // Elements and bytes in checked 64-bit products: a wrapped product (F64 [2^61 + 1] is 8 bytes
    // modulo 2^64) would match a small byte range. A zero dim makes any product 0.
    bool wrapped = false, empty = false;
    uint64_t elements = 1;
    for (const JsonValue &dim : shape->array) {
      if (dim.kind != JsonValue::Kind::number || !dim.is_integer || dim.integer < 0)
        throw error(SafetensorsProblem::header, where + ": a shape entry is not a non-negative integer");
      info.shape.push_back(dim.integer);
      empty = empty || dim.integer == 0;
      wrapped = __builtin_mul_overflow(elements, uint64_t(dim.integer), &elements) || wrapped;
    }
    uint64_t needed = 0;
    if (empty) elements = 0;
    if ((wrapped && !empty) || __builtin_mul_overflow(elements, uint64_t(known->bytes), &needed))
      throw error(SafetensorsProblem::shape, where + ": the shape " + shape_text(info.shape) + " of " +
                                                 known->name + " needs more than 2^64 bytes");
    if (offsets->array.size() != 2)
      throw error(SafetensorsProblem::header, where + ": data_offsets needs exactly two entries");
    for (const JsonValue &o : offsets->array)
      if (o.kind != JsonValue::Kind::number || !o.is_integer || o.integer < 0)
        throw error(SafetensorsProblem::header,
                    where + ": a data_offsets entry is not a non-negative integer");
    info.begin = uint64_t(offsets->array[0].integer);
    info.end = uint64_t(offsets->array[1].integer);
    if (info.end < info.begin)
      throw error(SafetensorsProblem::offsets, where + ": data_offsets [" + std::to_string(info.begin) +
                                                   ", " + std::to_string(info.end) + "] run backwards");
    if (info.end - info.begin != needed)
      throw error(SafetensorsProblem::shape,
                  where + ": shape " + shape_text(info.shape) + " of " + known->name + " needs " +
                      std::to_string(needed) + " bytes, data_offsets hold " + std::to_string(info.end - info.begin));
    if (info.end > data_bytes)
      throw error(SafetensorsProblem::truncated, "truncated: " + where + " ends at data byte " +
                                                     std::to_string(info.end) + ", the data section holds " +
                                                     std::to_string(data_bytes));
    file.tensors_.push_back(std::move(info));
  }
  // The data section must be covered exactly: no overlap, no hole, nothing left over.
  std::vector<const TensorInfo *> order;
  for (const TensorInfo &t : file.tensors_) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const TensorInfo *a, const TensorInfo *b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const TensorInfo *previous = nullptr;
  for (const TensorInfo *t : order) {
    if (t->begin < covered)
      throw error(SafetensorsProblem::offsets,
                  "tensors \"" + previous->name + "\" and \"" + t->name + "\" overlap");
    if (t->begin > covered)
      throw error(SafetensorsProblem::offsets, "data bytes " + std::to_string(covered) + " to " +
                                                   std::to_string(t->begin) + " belong to no tensor");
    covered = t->end;
    previous = t;
  }
  if (covered != data_bytes)
    throw error(SafetensorsProblem::offsets, "data bytes " + std::to_string(covered) + " to " +
                                                 std::to_string(data_bytes) + " belong to no tensor");
  file.bytes_ = std::move(bytes);
  return file;
}

const TensorInfo *SafetensorsFile::find(const std::string &name) const {
  for (const TensorInfo &t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<float> SafetensorsFile::floats(const std::string &name, const std::vector<int64_t> &shape) const {
  const TensorInfo *t = find(name);
  if (!t) throw SafetensorsError(SafetensorsProblem::missing, origin_ + ": no tensor \"" + name + "\"");
  if (t->shape != shape)
    throw SafetensorsError(SafetensorsProblem::shape, origin_ + ": tensor \"" + name + "\" has shape " +
                                                          shape_text(t->shape) + ", expected " +
                                                          shape_text(shape));
  const uint8_t *p = bytes_.data() + data_start_ + t->begin;
  const size_t n = (t->end - t->begin) / size_t(dtype_bytes(t->dtype));
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) {
    switch (t->dtype) {
      case DType::f32:
        std::memcpy(&out[i], p + 4 * i, 4);
        break;
      case DType::f64: {
        double d;
        std::memcpy(&d, p + 8 * i, 8);
        out[i] = float(d);
        break;
      }
      case DType::f16:
        out[i] = half_to_float(uint16_t(p[2 * i] | p[2 * i + 1] << 8));
        break;
      case DType::bf16: {
        const uint32_t bits = uint32_t(p[2 * i] | p[2 * i + 1] << 8) << 16;
        std::memcpy(&out[i], &bits, 4);
        break;
      }
      default:
        throw SafetensorsError(SafetensorsProblem::dtype, origin_ + ": tensor \"" + name +
                                                              "\" is an integer tensor, not floating point");
    }
  }
  return out;
}

}  // namespace minilm
