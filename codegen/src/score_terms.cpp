// Score modifiers and length checks shared by the tiled and the split-keys core.
#include "attnc/score_terms.h"

#include <string>

namespace attnc {

using Halide::Expr;
using Halide::Func;

Expr modified_logit(const attn::Spec &s, const CoreInputs &in, const Expr &score, const ScorePoint &p) {
  Expr logit = score;
  if (s.has_softcap) logit = s.softcap * Halide::tanh(logit * (1.0f / s.softcap));
  if (s.alibi) {
    const Expr distance = Halide::abs(p.query_pos - p.key_pos);
    logit = logit - in.alibi_slopes(p.head) * Halide::cast<float>(distance);
  }
  if (s.score_bias) logit = logit + in.score_bias(p.key_row, p.query_row, p.head, p.batch);
  return logit;
}

namespace {

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
  return in;
}

}  // namespace attnc
