// flops.h: the floating-point work of one kernel call, from its spec text and its tensor sizes.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn::run_tool {

// The spec keys that decide the work; attn-run links the runtime only, so it reads the text
// form itself instead of using dsl/'s parser. Zero means "not given" (the DSL's defaults apply).
struct SpecNumbers {
  bool block = false;
  bool causal = false;  // mask=causal (or its window form); other masks count every pair
  int64_t d_model = 0, heads = 0, kv_heads = 0, head_dim = 0, head_dim_v = 0;
  // head_groups=4x128+8x64/4 (block form): each group's heads, kv heads and head dim (Dv = D).
  struct Group {
    int64_t heads = 0, kv_heads = 0, head_dim = 0;
  };
  std::vector<Group> groups;
};

// "4x128+8x64/4" -> groups; false when a group is not HEADSxDIM[/KV_HEADS] of positive numbers.
inline bool parse_head_groups(std::string_view text, std::vector<SpecNumbers::Group> *groups) {
  auto number = [](std::string_view digits, int64_t *v) {
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *v);
    return ec == std::errc() && ptr == digits.data() + digits.size() && *v > 0;
  };
  while (true) {
    const size_t plus = text.find('+');
    const std::string_view item = text.substr(0, plus);
    const size_t x = item.find('x'), slash = item.find('/');
    SpecNumbers::Group g;
    if (x == std::string_view::npos || !number(item.substr(0, x), &g.heads) ||
        !number(item.substr(x + 1, slash == std::string_view::npos ? slash : slash - x - 1), &g.head_dim))
      return false;
    g.kv_heads = g.heads;
    if (slash != std::string_view::npos && !number(item.substr(slash + 1), &g.kv_heads)) return false;
    groups->push_back(g);
    if (plus == std::string_view::npos) return true;
    text.remove_prefix(plus + 1);
  }
}

// The runtime sizes of one call. Block kernels have one sequence, seq_q == seq_k == S, unless they
// attend across (x_kv: seq_k is its length).
struct CallSizes {
  int64_t batch = 0, seq_q = 0, seq_k = 0;
};

// Reads "key=value" words; on failure (no heads, a bad number) returns nullopt and sets why.
inline std::optional<SpecNumbers> parse_spec_numbers(std::string_view spec, std::string *why) {
  SpecNumbers numbers;
  auto fail = [&](std::string text) {
    *why = std::move(text);
    return std::optional<SpecNumbers>();
  };
  while (!spec.empty()) {
    const size_t start = spec.find_first_not_of(" \t\n");
    if (start == std::string_view::npos) break;
    spec.remove_prefix(start);
    const size_t end = std::min(spec.find_first_of(" \t\n"), spec.size());
    const std::string_view word = spec.substr(0, end);
    spec.remove_prefix(end);
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "form") numbers.block = value == "block";
    if (key == "mask") numbers.causal = value == "causal" || value == "window(-1,0)";
    if (key == "head_groups") {
      if (!parse_head_groups(value, &numbers.groups))
        return fail("spec key 'head_groups' has value '" + std::string(value) + "', expected e.g. 4x128+8x64/4");
      for (const SpecNumbers::Group &g : numbers.groups) {
        numbers.heads += g.heads;
        numbers.kv_heads += g.kv_heads;
        numbers.head_dim = std::max(numbers.head_dim, g.head_dim);
      }
    }
    int64_t *field = key == "d_model"      ? &numbers.d_model
                     : key == "heads"      ? &numbers.heads
                     : key == "kv_heads"   ? &numbers.kv_heads
                     : key == "head_dim"   ? &numbers.head_dim
                     : key == "head_dim_v" ? &numbers.head_dim_v
                                           : nullptr;
    if (field == nullptr) continue;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), *field);
    if (ec != std::errc() || ptr != value.data() + value.size() || *field < 0) {
      return fail("spec key '" + std::string(key) + "' has value '" + std::string(value) +
                  "', expected a non-negative integer");
    }
  }
  if (numbers.heads == 0) return fail("the spec gives no heads");
  if (numbers.head_dim == 0) numbers.head_dim = numbers.d_model / numbers.heads;
  if (numbers.head_dim_v == 0) numbers.head_dim_v = numbers.head_dim;
  if (numbers.kv_heads == 0) numbers.kv_heads = numbers.heads;
  if (numbers.d_model == 0) numbers.d_model = numbers.heads * numbers.head_dim;
  if (numbers.head_dim == 0) return fail("the spec gives neither head_dim nor d_model");
  return numbers;
}

// Query-key pairs a call scores: all of them, or for causal those with key position at most the
// query's bottom-right aligned position (query i sees min(Sk, i + Sk - Sq + 1) keys).
inline double kept_pairs(const SpecNumbers &spec, int64_t seq_q, int64_t seq_k) {
  if (!spec.causal) return static_cast<double>(seq_q) * static_cast<double>(seq_k);
  double pairs = 0;
  for (int64_t i = 0; i < seq_q; ++i) {
    pairs += static_cast<double>(std::clamp<int64_t>(i + seq_k - seq_q + 1, 0, seq_k));
  }
  return pairs;
}

// Multiply-adds count two FLOPs: scores (D per pair) and the weighted sum of values (Dv per pair),
// plus for the block form the input projections and the output projection.
inline double call_flops(const SpecNumbers &spec, const CallSizes &sizes) {
  if (!spec.groups.empty()) {
    // Every term is a sum over heads (projection rows included), so the groups' work adds up.
    double flops = 0;
    for (const SpecNumbers::Group &g : spec.groups) {
      SpecNumbers group = spec;
      group.groups.clear();
      group.heads = g.heads;
      group.kv_heads = g.kv_heads;
      group.head_dim = group.head_dim_v = g.head_dim;
      flops += call_flops(group, sizes);
    }
    return flops;
  }
  const double b = static_cast<double>(sizes.batch);
  const double h = static_cast<double>(spec.heads), kvh = static_cast<double>(spec.kv_heads);
  const double d = static_cast<double>(spec.head_dim), dv = static_cast<double>(spec.head_dim_v);
  double flops = 2.0 * b * h * kept_pairs(spec, sizes.seq_q, sizes.seq_k) * (d + dv);
  if (spec.block) {
    // q and the output projection over the queries' tokens, k and v over the keys' (x_kv's
    // tokens under cross-attention; the same tokens otherwise).
    const double sq = static_cast<double>(sizes.seq_q), sk = static_cast<double>(sizes.seq_k);
    const double dm = static_cast<double>(spec.d_model);
    flops += 2.0 * b * dm * (sq * h * d + sk * (kvh * d + kvh * dv));
    flops += 2.0 * b * sq * (h * dv) * dm;
  }
  return flops;
}

}  // namespace attn::run_tool
