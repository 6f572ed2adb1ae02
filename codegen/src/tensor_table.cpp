// Builds docs/DSL.md's tensor table from kernel_arguments, so the doc and the code cannot drift.
#include "attnc/tensor_table.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/arguments.h"

namespace attnc {
namespace {

// One kernel family: a base spec, and the settings that each add tensors to it.
struct Family {
  const char *title;
  const char *base;
  std::vector<const char *> settings;
};

// Small sizes keep the specs valid; the table prints fixed sizes by their labels, not values.
const std::vector<Family> &families() {
  static const std::vector<Family> all = {
      {"core (`form=core`, the default)",
       "heads=4 kv_heads=2 head_dim=16",
       {"mask=padding", "mask=prefix", "mask=document", "mask=tensor", "alibi=true", "score_bias=tensor",
        "runtime_scale=true", "dropout=0.1", "lse=true", "probs=true", "mask_mod=\"q>=k\" block_mask=input"}},
      {"block-mask pass (`block_mask=pass`; B and H are 1 where the mask_mod reads no b, h or kvh)",
       "heads=4 kv_heads=2 head_dim=16 mask_mod=\"q>=k+b+h\" block_mask=pass",
       {}},
      {"block (`form=block`)",
       "d_model=64 heads=4 kv_heads=2 form=block",
       {"proj_bias=true", "qkv=fused", "qkv=fused proj_bias=true", "mask=padding", "mask=prefix",
        "mask=document", "mask=tensor", "alibi=true", "score_bias=tensor", "runtime_scale=true",
        "dropout=0.1", "lse=true", "probs=true"}},
      {"block with `cross=true` (cross-attention)",
       "d_model=64 heads=4 kv_heads=2 form=block cross=true",
       {"proj_bias=true", "qkv=fused", "qkv=fused proj_bias=true", "mask=padding", "mask=prefix",
        "mask=document", "mask=tensor", "alibi=true", "score_bias=tensor", "runtime_scale=true", "lse=true",
        "probs=true"}},
      {"KV cache, contiguous (`kv_cache=contiguous`)",
       "heads=4 kv_heads=2 head_dim=16 kv_cache=contiguous",
       {"alibi=true", "runtime_scale=true", "lse=true", "kv_dtype=int8", "kv_dtype=fp8_e4m3"}},
      {"KV cache, paged (`kv_cache=paged(P)`)",
       "heads=4 kv_heads=2 head_dim=16 kv_cache=paged(16)",
       {"alibi=true", "runtime_scale=true", "lse=true", "kv_dtype=int8", "kv_dtype=fp8_e4m3"}},
      {"varlen (`layout=varlen`)",
       "heads=4 kv_heads=2 head_dim=16 layout=varlen",
       {"alibi=true", "runtime_scale=true", "lse=true", "backward=true"}},
      {"backward (`backward=true`: the core form's gradients)",
       "heads=4 kv_heads=2 head_dim=16 backward=true",
       {"mask=padding", "mask=prefix", "mask=document", "mask=tensor", "alibi=true", "score_bias=tensor",
        "runtime_scale=true", "dropout=0.1", "score_bias=tensor dscore_bias=true"}},
  };
  return all;
}

std::optional<std::vector<ArgSpec>> arguments_of(const std::string &text) {
  const attn::ParseResult parsed = attn::parse_spec(text);
  if (!parsed.ok) return std::nullopt;
  return kernel_arguments(attn::resolve(parsed.spec));
}

const ArgSpec *find(const std::vector<ArgSpec> &args, const std::string &name) {
  const auto at = std::find_if(args.begin(), args.end(), [&](const ArgSpec &a) { return a.name == name; });
  return at == args.end() ? nullptr : &*at;
}

// "`[B, Sq, H, D]`", every size by its name or label (a code span: labels hold '*'), then what a
// caller may leave out: dims that broadcast, fewer dims, the whole tensor.
std::string shape(const ArgSpec &a) {
  std::string text = "`[", broadcast;
  for (size_t d = 0; d < a.dims.size(); ++d) {
    text += (d > 0 ? ", " : "") + a.dims[d].symbol;
    if ((a.broadcast_dims >> d) & 1u) broadcast += (broadcast.empty() ? "" : " and ") + a.dims[d].symbol;
  }
  text += "]`";
  if (!broadcast.empty()) text += "; " + broadcast + " may be 1 (broadcast)";
  if (a.min_rank > 0 && a.min_rank < static_cast<int>(a.dims.size()))
    text += ", at least " + std::to_string(a.min_rank) + " dims (aligned from the right)";
  if (a.is_optional) text += "; optional (left out: the spec's value)";
  return text;
}

// The spec's storage type where the tensor follows it (it changes with dtype), else its own.
std::string dtype(const ArgSpec &a, const std::vector<ArgSpec> *in_f16) {
  const ArgSpec *other = in_f16 == nullptr ? nullptr : find(*in_f16, a.name);
  return other != nullptr && other->dtype != a.dtype ? "`dtype`" : a.dtype;
}

const char *direction(const ArgSpec &a) {
  return a.is_inout ? "read and written" : a.is_output ? "written" : "read";
}

std::string row(const ArgSpec &a, const std::vector<ArgSpec> *in_f16, const std::string &when) {
  return "| `" + a.name + "` | " + shape(a) + " | " + dtype(a, in_f16) + " | " + direction(a) + " | " + when +
         " |\n";
}

// "always", or "unless `qkv=fused`" for a base tensor that a setting replaces.
std::string unless(const Family &f, const std::string &name) {
  std::string settings;
  for (const char *setting : f.settings) {
    const std::optional<std::vector<ArgSpec>> args = arguments_of(std::string(f.base) + " " + setting);
    if (args && find(*args, name) == nullptr)
      settings += (settings.empty() ? "`" : ", `") + std::string(setting) + "`";
  }
  return settings.empty() ? "always" : "unless " + settings;
}

std::string family_table(const Family &f) {
  const std::vector<ArgSpec> base = *arguments_of(f.base);
  std::string text = "**" + std::string(f.title) + "**\n\n| tensor | shape | dtype | direction | when |\n" +
                     "| --- | --- | --- | --- | --- |\n";
  const std::optional<std::vector<ArgSpec>> base_f16 = arguments_of(std::string(f.base) + " dtype=f16");
  for (const ArgSpec &a : base) text += row(a, base_f16 ? &*base_f16 : nullptr, unless(f, a.name));
  std::vector<std::string> listed;
  for (const ArgSpec &a : base) listed.push_back(a.name);
  for (const char *setting : f.settings) {
    const std::string spec = std::string(f.base) + " " + setting;
    const std::optional<std::vector<ArgSpec>> args = arguments_of(spec),
                                              in_f16 = arguments_of(spec + " dtype=f16");
    if (!args) continue;
    for (const ArgSpec &a : *args) {
      if (std::find(listed.begin(), listed.end(), a.name) != listed.end()) continue;
      listed.push_back(a.name);
      text += row(a, in_f16 ? &*in_f16 : nullptr, "`" + std::string(setting) + "`");
    }
  }
  return text;
}

}  // namespace

std::string tensor_table_markdown() {
  std::string text;
  for (const Family &f : families()) text += (text.empty() ? "" : "\n") + family_table(f);
  return text;
}

}  // namespace attnc
