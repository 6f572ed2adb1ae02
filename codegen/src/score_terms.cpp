// Score modifiers and length checks shared by the tiled and the split-keys core.
#include "attnc/score_terms.h"

#include <string>

namespace attnc {

using Halide::Expr;
using Halide::Func;

Expr modified_logit(const attn::Spec &s, const CoreInputs &in, const Expr &score, const ScorePoint &p) {
  Expr logit = score;
  if (!s.score_mod.empty()) {
    const ExprPoint at{score,       p.batch,   p.head,      p.head / (s.heads / s.kv_heads),
                       p.query_pos, p.key_pos, p.query_row, in.seq_q,
                       in.seq_k};
    logit = lower_expr(s.score_mod, at, in.captured);
  }
  if (s.has_softcap) logit = s.softcap * Halide::tanh(logit * (1.0f / s.softcap));
  if (s.alibi) {
    const Expr distance = Halide::abs(p.query_pos - p.key_pos);
    logit = logit - in.alibi_slopes(p.head) * Halide::cast<float>(distance);
  }
  if (s.score_bias) logit = logit + in.score_bias(p.key_row, p.query_row, p.head, p.batch);
  return logit;
}

Expr score_scale(const attn::Spec &s, const CoreInputs &in) {
  return in.scale.defined() ? in.scale() : Expr(s.scale);
}

namespace {

// The run-time scale with a check that it is finite. By its exponent bits: Halide compiles
// without IEEE infinities and NaNs, so is_finite could be folded to true.
Func checked_scale(const Func &scale) {
  Func checked("scale_checked");
  const Expr value = scale();
  const Expr all_ones = Halide::cast<uint32_t>(Expr(0x7f800000));  // float's exponent field
  const Expr exponent = Halide::reinterpret(Halide::UInt(32), value) & all_ones;
  checked() = Halide::require(exponent != all_ones, value, "scale must be a finite number, got", value);
  return checked;
}

// lengths(b) as given, with a run-time check that 0 <= lengths(b) <= seq_k.
Func checked_lengths(const Func &lengths, const Expr &seq_k, const std::string &name, const std::string &prefix) {
  Func checked(prefix + name + "_checked");
  Halide::Var b("b");
  const Expr value = lengths(b);
  checked(b) = Halide::require(value >= 0 && value <= seq_k, value, name, "must lie in [0, Sk]: batch", b,
                               "has", value, "with Sk =", seq_k);
  return checked;
}

}  // namespace

CoreInputs with_checked_lengths(const CoreInputs &unchecked, std::vector<Func> *checks) {
  CoreInputs in = unchecked;
  if (in.masks.key_lengths.defined()) {
    in.masks.key_lengths = checked_lengths(in.masks.key_lengths, in.seq_k, "key_lengths", in.name_prefix);
    checks->push_back(in.masks.key_lengths);
  }
  if (in.masks.prefix_lengths.defined()) {
    in.masks.prefix_lengths = checked_lengths(in.masks.prefix_lengths, in.seq_k, "prefix_lengths", in.name_prefix);
    checks->push_back(in.masks.prefix_lengths);
  }
  if (in.scale.defined()) {
    in.scale = checked_scale(in.scale);
    checks->push_back(in.scale);
  }
  return in;
}

}  // namespace attnc
