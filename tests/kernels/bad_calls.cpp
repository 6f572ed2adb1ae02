// bad_calls.cpp: valid calls from a kernel's argument declarations, and the variants that spoil them.
#include "bad_calls.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "attn/spec_text.h"
#include "kernel_test_support.h"

namespace attnc::test {
namespace {

constexpr int32_t i32_max = std::numeric_limits<int32_t>::max();
constexpr int32_t i32_min = std::numeric_limits<int32_t>::min();

// The sequence kernels' sizes follow from B, Sq and Sk: every cache holds the longest sequence
// (cache_seqlens up to 2, plus Sq) with room to spare, whatever the page size.
DimSizes with_sequence_sizes(DimSizes s) {
  s["B+1"] = s["B"] + 1;
  s["total_q"] = s["B"] * s["Sq"] - 1;
  s["total_k"] = s["B"] * s["Sk"] - 1;
  s["Smax"] = s["Sq"] + 4;
  s["max_pages"] = s["Sq"] + 2;
  s["num_pages"] = s["B"] * s["max_pages"] + 1;
  // A block mask's blocks (block_mask=input|pass): the runtime checks them against Sq and Sk.
  s["ceil(Sq/128)"] = (s["Sq"] + 127) / 128;
  s["ceil(Sk/128)"] = (s["Sk"] + 127) / 128;
  return s;
}

int64_t dtype_bytes(attn_dtype dtype) {
  return dtype == ATTN_U8 || dtype == ATTN_I8 ? 1 : dtype == ATTN_F16 || dtype == ATTN_BF16 ? 2 : dtype == ATTN_U64 ? 8 : 4;
}

// The sentinel of a written element: -777.0f, or its upper half for a 2-byte dtype.
void sentinel_bytes(int64_t element_bytes, uint8_t *out) {
  const float value = output_sentinel;
  uint8_t bits[4];
  std::memcpy(bits, &value, 4);
  std::memcpy(out, element_bytes == 4 ? bits : bits + 2, static_cast<size_t>(element_bytes));
}

bool has_dim(const BadCall &call, const std::string &dim_name) {
  for (const Arg &a : call.args)
    for (int d = 0; d < a.info.rank; ++d)
      if (a.info.dim_names[d] != nullptr && dim_name == a.info.dim_names[d]) return true;
  return false;
}

// The key length bound of key_lengths / prefix_lengths: Sk, or S in the block form.
int64_t key_extent(const BadCall &call, const DimSizes &sizes) {
  return sizes.at(has_dim(call, "Sk") ? "Sk" : "S");
}

// The cache's slots per sequence: Smax, or max_pages * P.
int64_t cache_capacity(const BadCall &call, const DimSizes &sizes) {
  const Arg *cache = call.find("k_cache");
  REQUIRE(cache != nullptr);
  return call.find("block_table") != nullptr ? sizes.at("max_pages") * cache->shape[1] : sizes.at("Smax");
}

// Valid values of an index (i32) input, by name; a name this does not know fails the test, so a
// new kind of index input gets its valid and bad values here.
void fill_index(Arg &a, const BadCall &call, const DimSizes &sizes) {
  auto *values = reinterpret_cast<int32_t *>(a.storage.data());
  const int64_t n = a.dense_elements();
  const int64_t batch = sizes.at("B");
  for (int64_t e = 0; e < n; ++e) {
    int64_t v = 0;
    if (a.captured) {
      v = e % 5 - 2;  // indices clamp into their tensor: every value is valid
    } else if (a.name == "key_lengths") {
      v = key_extent(call, sizes) - e % 2;
    } else if (a.name == "prefix_lengths") {
      v = std::min<int64_t>(2, key_extent(call, sizes));
    } else if (a.name == "segment_ids_q" || a.name == "segment_ids_k") {
      v = 0;
    } else if (a.name == "cache_seqlens") {
      v = 1 + e % 2;
    } else if (a.name == "block_table") {
      v = e;  // row b's pages: b * max_pages + p, every id distinct and below num_pages
    } else if (a.name == "cu_seqlens_q" || a.name == "cu_seqlens_k") {
      v = e * sizes.at(a.name == "cu_seqlens_q" ? "total_q" : "total_k") / batch;
    } else {
      FAIL("bad_calls.cpp knows no valid values of index input '", a.name, "'");
    }
    values[e] = static_cast<int32_t>(v);
  }
}

void fill(Arg &a, const BadCall &call, const DimSizes &sizes) {
  const size_t bytes = static_cast<size_t>(a.element_bytes());
  if (a.info.is_output == 1) {
    uint8_t element[4];
    sentinel_bytes(a.element_bytes(), element);
    for (size_t n = 0; n < a.storage.size(); n += bytes) std::memcpy(&a.storage[n], element, bytes);
    return;
  }
  if (a.info.dtype == ATTN_I32) return fill_index(a, call, sizes);
  for (size_t n = 0; n * bytes < a.storage.size(); ++n) {
    const int small = static_cast<int>(n % 97);
    if (a.info.dtype == ATTN_F32) {
      const float x = a.info.rank == 0 ? 0.5f : 0.001f * static_cast<float>(small);
      std::memcpy(&a.storage[n * 4], &x, 4);
    } else if (a.info.dtype == ATTN_U8) {
      a.storage[n] = 1;  // a mask keeping every pair (an fp8_e4m3 cache: 2^-9)
    } else if (a.info.dtype == ATTN_I8) {
      a.storage[n] = static_cast<uint8_t>(small - 48);  // int8 cache codes
    } else if (a.info.dtype == ATTN_U64) {
      const uint64_t x = 0x9E3779B97F4A7C15ull + n;  // dropout's seed or offset: any value
      std::memcpy(&a.storage[n * 8], &x, 8);
    } else {
      const uint16_t x = static_cast<uint16_t>((a.info.dtype == ATTN_F16 ? 0x2000 : 0x3C00) + small);
      std::memcpy(&a.storage[n * 2], &x, 2);
    }
  }
}

std::vector<int64_t> dense_strides(const std::vector<int64_t> &shape, int64_t inner) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = inner;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= shape[static_cast<size_t>(d)];
  }
  return strides;
}

// How many arguments give the runtime dim `name` in full (not as a broadcast dim).
int full_uses(const BadCall &call, const std::string &name) {
  int uses = 0;
  for (const Arg &a : call.args)
    for (int d = 0; d < a.info.rank; ++d)
      uses +=
          a.info.dim_names[d] != nullptr && name == a.info.dim_names[d] && !(a.info.broadcast_dims >> d & 1u);
  return uses;
}

void set_i32(BadCall &c, const std::string &name, int64_t element, int32_t value) {
  reinterpret_cast<int32_t *>(c.arg(name).storage.data())[element] = value;
}

// The index and scale values the kernel must refuse with ATTN_ERR_INVALID_VALUE.
void add_value_variants(const BadCall &good, const DimSizes &sizes, std::vector<BadVariant> *v) {
  const int64_t batch = sizes.at("B");
  auto bad = [&](const std::string &name, int64_t element, int32_t value) {
    v->push_back({name + "[" + std::to_string(element) + "] = " + std::to_string(value),
                  [name, element, value](BadCall &c) { set_i32(c, name, element, value); },
                  ATTN_ERR_INVALID_VALUE, name});
  };
  for (const Arg &a : good.args) {
    const std::string n = a.name;
    if (n == "key_lengths" || n == "prefix_lengths") {
      const auto bound = static_cast<int32_t>(key_extent(good, sizes));
      for (int32_t value : {-1, bound + 1, i32_max, i32_min}) bad(n, batch - 1, value);
    } else if (n == "cache_seqlens") {
      const auto past = static_cast<int32_t>(cache_capacity(good, sizes) - sizes.at("Sq") + 1);
      for (int32_t value : {-1, past, i32_max, i32_min}) bad(n, batch - 1, value);
    } else if (n == "block_table") {
      const auto pages = static_cast<int32_t>(sizes.at("num_pages"));
      // The first page of sequence 0 and the last page the last sequence uses (fill_index's lengths).
      const int64_t page = good.find("k_cache")->shape[1], keys = 1 + (batch - 1) % 2 + sizes.at("Sq");
      for (int64_t element : {int64_t{0}, (batch - 1) * sizes.at("max_pages") + (keys + page - 1) / page - 1})
        for (int32_t value : {-1, pages, i32_max, i32_min}) bad(n, element, value);
    } else if (n == "cu_seqlens_q" || n == "cu_seqlens_k") {
      const auto total = static_cast<int32_t>(sizes.at(n == "cu_seqlens_q" ? "total_q" : "total_k"));
      bad(n, 0, 1);
      bad(n, 0, -1);
      bad(n, 1, total + 1);  // then decreasing
      bad(n, 1, i32_min);
      bad(n, batch, total - 1);
      bad(n, batch, i32_max);
    } else if (a.info.rank == 0 && a.info.dtype == ATTN_F32) {
      for (float value : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
        v->push_back({n + " = " + std::to_string(value),
                      [n, value](BadCall &c) { std::memcpy(c.arg(n).storage.data(), &value, 4); },
                      ATTN_ERR_INVALID_VALUE, n});
      }
    }
  }
}

// A rank-0 (scalar) argument: given as rank 0 or [1]; its shape and strides are not read.
void add_scalar_variants(const Arg &a, std::vector<BadVariant> *v) {
  const std::string n = a.name, quoted = "'" + a.name + "'";
  v->push_back({n + ": rank 2", [n](BadCall &c) { c.arg(n).shape = {1, 1}; }, ATTN_ERR_RANK, quoted});
  v->push_back({n + ": rank 9", [n](BadCall &c) { c.arg(n).shape.assign(9, 1); }, ATTN_ERR_RANK, quoted});
  v->push_back({n + ": [2]", [n](BadCall &c) { c.arg(n).shape = {2}; }, ATTN_ERR_SHAPE, quoted});
}

void add_tensor_variants(const Arg &a, const BadCall &good, std::vector<BadVariant> *v) {
  const std::string n = a.name, quoted = "'" + a.name + "'";
  const int rank = static_cast<int>(a.shape.size());
  // A caller may give a broadcast tensor fewer dims (down to min_rank): one less is then valid.
  if (a.info.min_rank == 0 || rank - 1 < a.info.min_rank)
    v->push_back({n + ": rank one less", [n](BadCall &c) { c.arg(n).shape.erase(c.arg(n).shape.begin()); },
                  ATTN_ERR_RANK, quoted});
  v->push_back(
      {n + ": rank one more", [n](BadCall &c) { c.arg(n).shape.push_back(1); }, ATTN_ERR_RANK, quoted});
  v->push_back({n + ": rank 0", [n](BadCall &c) { c.arg(n).shape.clear(); }, ATTN_ERR_RANK, quoted});
  v->push_back({n + ": rank 9", [n](BadCall &c) { c.arg(n).shape.assign(9, 1); }, ATTN_ERR_RANK, quoted});
  for (int d = 0; d < rank; ++d) {
    const std::string dim = n + " " + a.dim_labels[static_cast<size_t>(d)];
    const bool broadcasts = (a.info.broadcast_dims >> d & 1u) != 0;
    const bool fixed = a.info.fixed_shape[d] > 0;
    // A runtime size off by one disagrees with another tensor's (where one gives it too); a fixed
    // one with the spec; size 1 is valid where the dim broadcasts.
    if (fixed || full_uses(good, a.info.dim_names[d]) > 1) {
      v->push_back({dim + " one larger", [n, d](BadCall &c) { ++c.arg(n).shape[static_cast<size_t>(d)]; },
                    ATTN_ERR_SHAPE, ""});
      if (a.shape[static_cast<size_t>(d)] > 1 && !(broadcasts && a.shape[static_cast<size_t>(d)] == 2))
        v->push_back({dim + " one smaller", [n, d](BadCall &c) { --c.arg(n).shape[static_cast<size_t>(d)]; },
                      ATTN_ERR_SHAPE, ""});
    }
    v->push_back({dim + " zero", [n, d](BadCall &c) { c.arg(n).shape[static_cast<size_t>(d)] = 0; },
                  ATTN_ERR_SHAPE, quoted});
    v->push_back({dim + " negative", [n, d](BadCall &c) { c.arg(n).shape[static_cast<size_t>(d)] = -3; },
                  ATTN_ERR_SHAPE, quoted});
  }
  v->push_back({n + ": innermost stride 2",
                [n](BadCall &c) { c.arg(n).strides = dense_strides(c.arg(n).shape, 2); }, ATTN_ERR_STRIDE,
                quoted});
  v->push_back({n + ": innermost stride 0",
                [n](BadCall &c) {
                  c.arg(n).strides = dense_strides(c.arg(n).shape, 1);
                  c.arg(n).strides.back() = 0;
                },
                ATTN_ERR_STRIDE, quoted});
  v->push_back({n + ": negative outer stride",
                [n](BadCall &c) {
                  c.arg(n).strides = dense_strides(c.arg(n).shape, 1);
                  c.arg(n).strides.front() = -c.arg(n).strides.front();
                },
                ATTN_ERR_STRIDE, quoted});
  if (!a.written() || rank < 2) return;
  // A written tensor must give every element its own address.
  if (a.shape[static_cast<size_t>(rank - 2)] > 1)
    v->push_back({n + " overlaps itself: its second-innermost stride is half the innermost size",
                  [n](BadCall &c) {
                    Arg &t = c.arg(n);
                    t.strides = dense_strides(t.shape, 1);
                    t.strides[t.shape.size() - 2] = t.shape.back() / 2;
                  },
                  ATTN_ERR_STRIDE, quoted});
  v->push_back({n + " overlaps itself: every outer stride 0",
                [n](BadCall &c) {
                  Arg &t = c.arg(n);
                  t.strides.assign(t.shape.size(), 0);
                  t.strides.back() = 1;
                },
                ATTN_ERR_STRIDE, quoted});
}

}  // namespace

DimSizes decode_sizes() {
  return with_sequence_sizes({{"B", 2}, {"Sq", 5}, {"Sk", 7}, {"S", 6}});
}
DimSizes prefill_sizes() {
  return with_sequence_sizes({{"B", 3}, {"Sq", 11}, {"Sk", 13}, {"S", 12}});
}

int64_t Arg::element_bytes() const {
  return dtype_bytes(info.dtype);
}

int64_t Arg::dense_elements() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

BadCall::BadCall(const attn_kernel *kernel, const DimSizes &sizes) {
  const attn::ParseResult spec = attn::parse_spec(attn_kernel_spec(kernel));
  for (int i = 0; i < attn_kernel_arg_count(kernel); ++i) {
    Arg a;
    REQUIRE(attn_kernel_arg(kernel, i, &a.info) == ATTN_OK);
    a.name = a.info.name;
    a.captured = spec.ok && spec.spec.captured.find(a.info.name) >= 0;
    a.dtype = a.info.dtype;
    for (int d = 0; d < a.info.rank; ++d) {
      const bool fixed = a.info.fixed_shape[d] > 0;
      const std::string dim = fixed ? std::to_string(a.info.fixed_shape[d]) : a.info.dim_names[d];
      REQUIRE_MESSAGE((fixed || sizes.count(dim) == 1), "no size for dim ", dim, " of ", a.name);
      a.shape.push_back(fixed ? a.info.fixed_shape[d] : sizes.at(dim));
      a.dim_labels.push_back("dim " + std::to_string(d) + " (" + dim + ")");
    }
    a.storage.resize(static_cast<size_t>((4 * a.dense_elements() + 64) * a.element_bytes()));
    args.push_back(std::move(a));
  }
  for (Arg &a : args) fill(a, *this, sizes);
}

const Arg *BadCall::find(const std::string &name) const {
  for (const Arg &a : args)
    if (a.name == name) return &a;
  return nullptr;
}

Arg &BadCall::arg(const std::string &name) {
  for (Arg &a : args)
    if (a.name == name) return a;
  FAIL("no argument ", name);
  return args.front();
}

attn_status BadCall::run(const attn_kernel *kernel, const DevicePlacement *placement) {
  std::vector<std::pair<Arg *, void *>> buffers;  // each uploaded argument and its buffer
  auto buffer_of = [&](Arg &a) -> void * {
    for (auto &[arg, buffer] : buffers)
      if (arg == &a) return buffer;
    void *buffer = placement->upload(a.storage.data(), a.storage.size());
    REQUIRE(buffer != nullptr);
    buffers.push_back({&a, buffer});
    return buffer;
  };
  std::vector<attn_arg> c_args;
  for (std::vector<Arg> *list : {&args, &extra})
    for (Arg &a : *list) {
      attn_tensor t{nullptr,
                    a.dtype,
                    static_cast<int32_t>(a.shape.size()),
                    a.shape.empty() ? nullptr : a.shape.data(),
                    a.strides.empty() ? nullptr : a.strides.data(),
                    ATTN_HOST};
      Arg &owner = a.data_of.empty() ? a : arg(a.data_of);
      // A scalar is read on the host: it stays there.
      if (placement != nullptr && a.info.rank > 0) {
        REQUIRE(a.data_offset_bytes == 0);
        t.data = buffer_of(owner);
        t.memory = placement->memory;
      } else {
        t.data = owner.storage.data() + a.data_offset_bytes;
      }
      if (a.null_data) t.data = nullptr;
      c_args.push_back(attn_arg{a.null_name ? nullptr : a.name.c_str(), t});
    }
  const attn_status status = attn_run(kernel, c_args.data(), static_cast<int>(c_args.size()));
  for (auto &[a, buffer] : buffers) {
    if (a->written()) CHECK(placement->download(buffer, a->storage.data(), a->storage.size()));
    placement->release(buffer);
  }
  return status;
}

std::vector<std::vector<uint8_t>> BadCall::written() const {
  std::vector<std::vector<uint8_t>> bytes;
  for (const Arg &a : args)
    if (a.written()) bytes.push_back(a.storage);
  return bytes;
}

std::vector<BadVariant> bad_variants(const BadCall &good, const DimSizes &sizes) {
  std::vector<BadVariant> v;
  for (const Arg &a : good.args) {
    const std::string n = a.name, quoted = "'" + a.name + "'";
    v.push_back(
        {n + ": null data", [n](BadCall &c) { c.arg(n).null_data = true; }, ATTN_ERR_NULL_DATA, quoted});
    for (attn_dtype dtype : {ATTN_F32, ATTN_F16, ATTN_BF16, ATTN_I32, ATTN_U8, ATTN_I8, ATTN_U64})
      if (dtype != a.info.dtype)
        v.push_back({n + ": dtype " + attn_dtype_name(dtype),
                     [n, dtype](BadCall &c) { c.arg(n).dtype = dtype; }, ATTN_ERR_DTYPE, quoted});
    if (a.info.rank == 0)
      add_scalar_variants(a, &v);
    else
      add_tensor_variants(a, good, &v);
    if (!a.info.is_optional)
      v.push_back({n + ": missing",
                   [n](BadCall &c) {
                     c.args.erase(std::find_if(c.args.begin(), c.args.end(),
                                               [&](const Arg &x) { return x.name == n; }));
                   },
                   ATTN_ERR_MISSING_TENSOR, quoted});
    v.push_back({n + ": given twice", [n](BadCall &c) { c.extra.push_back(c.arg(n)); },
                 ATTN_ERR_UNKNOWN_TENSOR, quoted});
  }
  v.push_back({"unknown tensor 'bias'",
               [](BadCall &c) {
                 c.extra.push_back(c.args.front());
                 c.extra.back().name = "bias";
               },
               ATTN_ERR_UNKNOWN_TENSOR, "'bias'"});
  v.push_back({"a tensor with a null name", [](BadCall &c) { c.args.front().null_name = true; },
               ATTN_ERR_UNKNOWN_TENSOR, ""});
  // An output or in-out sharing memory with any other tensor (out given as q, v_cache as k_cache).
  for (const Arg &w : good.args) {
    if (!w.written()) continue;
    for (const Arg &o : good.args) {
      if (o.name == w.name) continue;
      const std::string wn = w.name, on = o.name;
      // Two written tensors: the message names the one that comes first in argument order; a
      // written tensor larger than on's storage may reach into another tensor's first.
      const bool reaches_past =
          w.dense_elements() * w.element_bytes() > static_cast<int64_t>(o.storage.size());
      const std::string named = o.written() || reaches_past ? "shares memory with tensor '"
                                                            : "'" + wn + "' shares memory with tensor '";
      v.push_back({wn + " at " + on + "'s address", [wn, on](BadCall &c) { c.arg(wn).data_of = on; },
                   ATTN_ERR_ALIASED, named});
      // Only the last element of o under the first of w: still an overlap.
      const int64_t last = (o.dense_elements() - 1) * o.element_bytes();
      if (last > 0)
        v.push_back({wn + " from " + on + "'s last element",
                     [wn, on, last](BadCall &c) {
                       c.arg(wn).data_of = on;
                       c.arg(wn).data_offset_bytes = last;
                     },
                     ATTN_ERR_ALIASED, o.written() ? "shares memory" : "'" + wn + "'", /*host_only=*/true});
    }
  }
  add_value_variants(good, sizes, &v);
  return v;
}

void check_bad_calls(const attn_kernel *kernel, const DimSizes &sizes, BadCallCounts *counts,
                     const DevicePlacement *placement, attn_status good_status) {
  const std::string id = attn_kernel_id(kernel);
  const int64_t seq_q = sizes.at("Sq");
  CAPTURE(id);
  CAPTURE(seq_q);
  {
    BadCall good(kernel, sizes);
    const std::vector<std::vector<uint8_t>> before = good.written();
    const attn_status status = good.run(kernel, placement);
    INFO(last_error());
    REQUIRE(status_name(status) == status_name(good_status));
    if (good_status != ATTN_OK) {
      CHECK(good.written() == before);
    } else {
      // Every output element written, nothing past them.
      for (const Arg &a : good.args) {
        if (a.info.is_output != 1) continue;
        CAPTURE(a.name);
        const size_t bytes = static_cast<size_t>(a.element_bytes()),
                     end = static_cast<size_t>(a.dense_elements()) * bytes;
        uint8_t element[4];
        sentinel_bytes(a.element_bytes(), element);
        int64_t unwritten = 0;
        for (size_t n = 0; n < end; n += bytes) unwritten += std::memcmp(&a.storage[n], element, bytes) == 0;
        CHECK(unwritten == 0);
        int64_t past = 0;
        for (size_t n = end; n < a.storage.size(); n += bytes)
          past += std::memcmp(&a.storage[n], element, bytes) != 0;
        CHECK(past == 0);
      }
    }
  }
  ++counts->kernels;
  // Device tensors for a kernel that takes host tensors only: the whole call is what is refused.
  if (good_status == ATTN_ERR_DEVICE_TENSOR) {
    ++counts->refused;
    return;
  }
  for (const BadVariant &variant : bad_variants(BadCall(kernel, sizes), sizes)) {
    if (variant.host_only && placement != nullptr) continue;
    CAPTURE(variant.what);
    BadCall call(kernel, sizes);
    variant.spoil(call);
    const std::vector<std::vector<uint8_t>> before = call.written();
    const attn_status status = call.run(kernel, placement);
    const std::string message = last_error();
    CAPTURE(message);
    // A kernel that cannot run (no device) checks no values.
    const attn_status want =
        variant.expected == ATTN_ERR_INVALID_VALUE && good_status != ATTN_OK ? good_status : variant.expected;
    CHECK(status_name(status) == status_name(want));
    CHECK(!message.empty());
    if (!variant.message_names.empty() && want == variant.expected)
      CHECK(message.find(variant.message_names) != std::string::npos);
    CHECK(call.written() == before);
    ++counts->refused;
    counts->values += variant.expected == ATTN_ERR_INVALID_VALUE;
  }
}

}  // namespace attnc::test
