// Rotary position embeddings: one rotation for q, the keys of a cache-less kernel and appended keys.
#include "attnc/rope.h"

#include "attnc/schedule_around_core_gpu.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

Func rope_angles(const attn::Spec &s, const std::string &name, bool on_gpu) {
  Var pair("pair"), pos("pos");
  // The angles in fp32 as docs/DSL.md writes them: inv_freq = theta^(-2i / rope_dim), then
  // position * inv_freq, then cos and sin. inv_freq is a table of its own: computed per
  // (pair, position), the pow took 40% of the table's time.
  Func inv_freq(name + "_inv_freq");
  inv_freq(pair) =
      Halide::pow(Expr(s.rope_theta), Halide::cast<float>(-2 * pair) / static_cast<float>(s.rope_dim));
  Func angles(name);
  const Expr angle = Halide::cast<float>(pos) * inv_freq(pair);
  angles(pair, pos) = Halide::Tuple(Halide::cos(angle), Halide::sin(angle));
  if (on_gpu) {
    schedule_table_gpu(angles);
  } else {
    // Positions in parallel tasks: a table that one thread filled (scalar sincosf per entry, two
    // tables for q and k) held the other one idle: 0.6 ms of W1's 8.5. AMD EPYC (Zen 5), W1 (B1
    // H12 S1024 D64), 2 threads, 7 interleaved rounds, RoPE / none: 1.12 -> 1.02 (none), 1.26 ->
    // 1.06 (causal), with the keys still rotated in a pass of their own.
    inv_freq.compute_root();
    angles.compute_root().parallel(pos, 64, Halide::TailStrategy::GuardWithIf);
  }
  return angles;
}

Func rope_rotated(const Func &x, const attn::Spec &s, const std::function<Expr(Expr, Expr)> &position,
                  const std::string &name, bool on_gpu, const Func &shared_angles) {
  const int half = s.rope_dim / 2;
  Var d("d"), head("head"), row("row"), b("b");
  const Func angles = shared_angles.defined() ? shared_angles : rope_angles(s, name + "_angles", on_gpu);

  const bool neox = s.rope == attn::Rope::neox;
  const Expr first = neox ? d < half : d % 2 == 0;  // the pair's first element: turned by -sin
  // Clamped so that bounds inference keeps every read inside [0, head_dim) and the table's pairs.
  const Expr partner =
      Halide::clamp(neox ? Halide::select(first, d + half, d - half) : Halide::select(first, d + 1, d - 1), 0,
                    s.head_dim - 1);
  const Expr index = Halide::clamp(neox ? d % half : d / 2, 0, half - 1);
  const Expr p = position(row, b);
  const Expr c = angles(index, p)[0], sn = angles(index, p)[1];
  const Expr other = x(partner, head, row, b);
  const Expr turned = x(d, head, row, b) * c + Halide::select(first, -other, other) * sn;
  Func rotated(name);
  rotated(d, head, row, b) =
      s.rope_dim == s.head_dim ? turned : Halide::select(d < s.rope_dim, turned, x(d, head, row, b));
  return rotated;
}

int rope_half_block(const attn::Spec &s) {
  if (s.rope != attn::Rope::neox || s.rope_dim < 2) return 0;
  const int half = s.rope_dim / 2;
  return s.head_dim % half == 0 ? half : 0;
}

void vectorize_rotated(Func f, const Var &d, int half_block, int lanes) {
  if (half_block == 0 || half_block % lanes != 0) {
    f.vectorize(d, lanes);
    return;
  }
  Var part(d.name() + "_half"), within(d.name() + "_within");
  f.split(d, part, within, half_block).unroll(part).vectorize(within, lanes);
}

}  // namespace attnc
