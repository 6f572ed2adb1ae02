// Rotary position embeddings: one rotation for q, the keys of a cache-less kernel and appended keys.
#include "attnc/rope.h"

#include "attnc/schedule_around_core_gpu.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

Func rope_rotated(const Func &x, const attn::Spec &s, const std::function<Expr(Expr, Expr)> &position,
                  const std::string &name, bool on_gpu) {
  const int half = s.rope_dim / 2;
  Var pair("pair"), pos("pos"), d("d"), head("head"), row("row"), b("b");
  // The angles in fp32 as docs/DSL.md writes them: inv_freq = theta^(-2i / rope_dim), then
  // position * inv_freq, then cos and sin.
  Func angles(name + "_angles");
  const Expr inv_freq =
      Halide::pow(Expr(s.rope_theta), Halide::cast<float>(-2 * pair) / static_cast<float>(s.rope_dim));
  const Expr angle = Halide::cast<float>(pos) * inv_freq;
  angles(pair, pos) = Halide::Tuple(Halide::cos(angle), Halide::sin(angle));
  if (on_gpu) {
    schedule_table_gpu(angles);
  } else {
    angles.compute_root();
  }

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

}  // namespace attnc
