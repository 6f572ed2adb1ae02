// backward_reference.h: the fp64 attention backward (and its naive fp32 twin), written from the math.
#pragma once

#include <vector>

#include "reference.h"

namespace attnc::reference {

// dq [B, Sq, H, D], dk [B, Sk, KVH, D], dv [B, Sk, KVH, Dv], dense; dlogit [B, H, Sq, Sk], the
// gradient by each pair's logit, P (dP - D), 0 where masked (a score_bias tensor's gradient).
template <class T>
struct Gradients {
  std::vector<T> dq, dk, dv, dlogit;
};

// The gradients of L = sum(out * dout) for out = core_reference(q, k, v, options): the softmax
// recomputed from q and k (not from a kernel's lse), then per row dP = dout . v, D = sum P dP,
// dS = P (dP - D) times softcap's 1 - tanh^2, dq = scale dS k, dk = scale dS q, dv = P dout; a KV
// head's gradients summed over its query heads. Masked pairs contribute nothing (their k and v are
// never read), rows with no kept key give zero.
// dout: [B, Sq, H, Dv].
Gradients<double> core_backward_reference(const TensorView &q, const TensorView &k, const TensorView &v,
                                          const TensorView &dout, const Options &options);
// out_for_delta: empty, or the forward's out [B, Sq, H, Dv] as a kernel stored it (f16 / bf16
// rounded), whose rowsum(dout * out) then stands for D as in a backward kernel given that out.
Gradients<float> core_backward_naive_f32(const TensorView &q, const TensorView &k, const TensorView &v,
                                         const TensorView &dout, const Options &options,
                                         const TensorView &out_for_delta = TensorView{});

}  // namespace attnc::reference
