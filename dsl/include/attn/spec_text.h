// attn/spec_text.h: the one-line text form of a spec (`key=value ...`), printing and parsing.
#pragma once

#include <string>
#include <string_view>

#include "attn/spec.h"

namespace attn {

// Every key, in a fixed order, so equal specs print equally:
// "name=gpt2 d_model=768 heads=12 kv_heads=12 head_dim=64 head_dim_v=64 form=block qkv=fused
//  proj_bias=true mask=causal dtype=f32 scale=0.125"
std::string to_string(const Spec &spec);
// The mask alone in its text form: "none", "causal", "window(128,0)", "(causal|window(4,4))&...".
std::string to_string(const Mask &mask);

struct ParseResult {
  bool ok = false;
  Spec spec{};
  std::string message;  // why parsing or validation failed
};

// Parses the text form; unknown keys, repeated keys, bad values and invalid specs are rejected
// with a message naming the key and the value. Unset keys take the DSL's defaults.
ParseResult parse_spec(std::string_view text);

struct MaskParseResult {
  bool ok = false;
  Mask mask{};
  std::string message;
};
MaskParseResult parse_mask(std::string_view text);

}  // namespace attn
