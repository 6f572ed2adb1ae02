// reference.cpp: plain loops over the contract, instantiated in double (reference) and float (naive).
#include "reference.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace attnc::reference {
namespace {

// A strided rank-4 view of T: the float inputs, or the projected heads of the block form.
template <class T>
struct View4 {
  const T *data = nullptr;
  std::array<int64_t, 4> shape{};
  std::array<int64_t, 4> strides{};

  const T *row(int64_t i0, int64_t i1, int64_t i2) const {
    return data + i0 * strides[0] + i1 * strides[1] + i2 * strides[2];
  }
};

View4<float> as_view4(const TensorView &t, const char *what) {
  if (t.rank != 4 || t.data == nullptr)
    throw std::invalid_argument(std::string(what) + " must be a rank-4 view");
  return View4<float>{t.data, t.shape, t.strides};
}

template <class T>
View4<T> dense_view4(const std::vector<T> &data, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  return View4<T>{data.data(), {d0, d1, d2, d3}, {d1 * d2 * d3, d2 * d3, d3, 1}};
}

// Every runtime input the options use, checked against the sizes (the reference's callers are tests:
// a mistake there is a thrown error, not a silent broadcast).
void check_inputs(const Options &o, int64_t batch, int64_t seq_q, int64_t seq_k, int64_t heads) {
  const RuntimeInputs &in = o.inputs;
  auto fail = [](const char *what) { throw std::invalid_argument(std::string("reference: ") + what); };
  auto per_batch = [&](const IndexView &v, const char *name) {
    if (v.empty() || v.rank != 1 || v.shape[0] != batch) fail(name);
    for (int64_t b = 0; b < batch; ++b)
      if (v.at(b) < 0 || v.at(b) > seq_k) fail(name);
  };
  auto score_shaped = [&](int rank, const std::array<int64_t, 4> &shape, const char *name) {
    if (rank < 2 || rank > 4 || shape[rank - 2] != seq_q || shape[rank - 1] != seq_k) fail(name);
    if (rank == 3 && shape[0] != 1 && shape[0] != heads) fail(name);
    if (rank == 4 && shape[0] != 1 && shape[0] != batch) fail(name);
    if (rank == 4 && shape[1] != 1 && shape[1] != heads) fail(name);
  };
  if (o.mask.uses(attn::MaskOp::padding)) per_batch(in.key_lengths, "key_lengths must be [B] in [0, Sk]");
  if (o.mask.uses(attn::MaskOp::prefix))
    per_batch(in.prefix_lengths, "prefix_lengths must be [B] in [0, Sk]");
  if (o.mask.uses(attn::MaskOp::document)) {
    const IndexView &sq = in.segment_ids_q, &sk = in.segment_ids_k;
    if (sq.rank != 2 || sq.shape[0] != batch || sq.shape[1] != seq_q) fail("segment_ids_q must be [B, Sq]");
    if (sk.rank != 2 || sk.shape[0] != batch || sk.shape[1] != seq_k) fail("segment_ids_k must be [B, Sk]");
  }
  if (o.mask.uses(attn::MaskOp::tensor)) {
    if (in.mask.empty()) fail("the mask uses tensor: give mask");
    score_shaped(in.mask.rank, in.mask.shape, "mask must be [Sq, Sk], [H, Sq, Sk] or [B, H, Sq, Sk]");
  }
  if (o.alibi && (in.alibi_slopes.empty() || in.alibi_slopes.rank != 1 || in.alibi_slopes.shape[0] != heads))
    fail("alibi_slopes must be [H]");
  if (o.score_bias) {
    if (in.score_bias.empty()) fail("score_bias is on: give score_bias");
    score_shaped(in.score_bias.rank, in.score_bias.shape, "score_bias must be shaped like the mask");
  }
  if (o.mask_block < 0 || o.softcap < 0) fail("mask_block and softcap must be >= 0");
}

// The core, computing in T whatever the storage type In.
template <class T, class In>
Result<T> attend(const View4<In> &q, const View4<In> &k, const View4<In> &v, const Options &o) {
  const int64_t batch = q.shape[0], seq_q = q.shape[1], heads = q.shape[2], head_dim = q.shape[3];
  const int64_t seq_k = k.shape[1], kv_heads = k.shape[2], head_dim_v = v.shape[3];
  if (k.shape[0] != batch || v.shape[0] != batch || v.shape[1] != seq_k || v.shape[2] != kv_heads ||
      k.shape[3] != head_dim || kv_heads == 0 || heads % kv_heads != 0)
    throw std::invalid_argument("core reference: q, k and v shapes disagree");
  check_inputs(o, batch, seq_q, seq_k, heads);
  const int64_t group = heads / kv_heads;
  const int64_t qs = q.strides[3], ks = k.strides[3], vs = v.strides[3];
  const T scale = static_cast<T>(o.scale), softcap = static_cast<T>(o.softcap);
  const bool padded = o.mask.uses(attn::MaskOp::padding);

  Result<T> r;
  r.out.assign(static_cast<size_t>(batch * seq_q * heads * head_dim_v), T(0));
  r.lse.assign(static_cast<size_t>(batch * seq_q * heads), -std::numeric_limits<T>::infinity());
  if (o.probs) r.probs.assign(static_cast<size_t>(batch * heads * seq_q * seq_k), T(0));
  std::vector<T> weight(static_cast<size_t>(seq_k));
  std::vector<char> kept(static_cast<size_t>(seq_k));
  std::vector<T> acc(static_cast<size_t>(head_dim_v));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t key_length = padded ? o.inputs.key_lengths.at(b) : seq_k;
    for (int64_t i = 0; i < seq_q; ++i) {
      const int64_t q_pos = o.top_left ? i : i + key_length - seq_q;  // bottom-right unless top_left
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t kvh = h / group;
        const In *q_row = q.row(b, i, h);
        T running_max = -std::numeric_limits<T>::infinity();
        bool any_kept = false;
        for (int64_t j = 0; j < seq_k; ++j) {
          const Pair pair{b, h, i, j, q_pos, key_length};
          kept[j] = keeps(o.mask, o.mask_block, o.inputs, pair) && (!o.mask_mod || o.mask_mod(pair));
          if (!kept[j]) continue;
          const In *k_row = k.row(b, j, kvh);
          T dot = 0;
          for (int64_t d = 0; d < head_dim; ++d) dot += T(q_row[d * qs]) * T(k_row[d * ks]);
          T s = dot * scale;
          if constexpr (std::is_same_v<T, double>) {
            if (o.score_mod_f64) s = o.score_mod_f64(s, pair);
          } else {
            if (o.score_mod_f32) s = o.score_mod_f32(s, pair);
          }
          if (o.softcap > 0) s = softcap * std::tanh(s / softcap);
          if (o.alibi) s -= T(o.inputs.alibi_slopes.at(h)) * T(std::abs(q_pos - j));
          if (o.score_bias) s += T(broadcast_at(o.inputs.score_bias, b, h, i, j));
          weight[j] = s;
          // NaN-sticky, as NumPy's max: a NaN score makes the row's max NaN, and every weight.
          if (!any_kept || s > running_max || std::isnan(s)) running_max = s;
          any_kept = true;
        }
        const int64_t row = (b * seq_q + i) * heads + h;
        if (!any_kept) continue;  // every key masked: out stays 0, lse -inf
        T running_sum = 0;
        for (int64_t j = 0; j < seq_k; ++j) {
          if (!kept[j]) continue;
          weight[j] = std::exp(weight[j] - running_max);
          running_sum += weight[j];
        }
        for (T &a : acc) a = 0;
        for (int64_t j = 0; j < seq_k; ++j) {
          if (!kept[j]) continue;
          const In *v_row = v.row(b, j, kvh);
          const T kept_weight = weight[j] * dropout_factor<T>(o.dropout, heads, b, h, i, j);
          for (int64_t e = 0; e < head_dim_v; ++e) acc[e] += kept_weight * T(v_row[e * vs]);
        }
        T *out_row = &r.out[static_cast<size_t>(row * head_dim_v)];
        for (int64_t e = 0; e < head_dim_v; ++e) out_row[e] = acc[e] / running_sum;
        r.lse[static_cast<size_t>(row)] = running_max + std::log(running_sum);
        if (!o.probs) continue;
        T *probs_row = &r.probs[static_cast<size_t>(((b * heads + h) * seq_q + i) * seq_k)];
        for (int64_t j = 0; j < seq_k; ++j)
          if (kept[j]) probs_row[j] = weight[j] / running_sum;
      }
    }
  }
  return r;
}

template <class T>
Result<T> core(const TensorView &q, const TensorView &k, const TensorView &v, const Options &o) {
  return attend<T, float>(as_view4(q, "q"), as_view4(k, "k"), as_view4(v, "v"), o);
}

Options plain(double scale, const attn::Mask &mask) {
  Options o;
  o.scale = scale;
  o.mask = mask;
  return o;
}

// y[b, s, r] = Σ_c x[b, s, c] · w[first_row + r, c] + bias[first_row + r], r < rows: dense [B, S, rows].
template <class T>
std::vector<T> project(const TensorView &x, const TensorView &w, const TensorView &bias, int64_t first_row,
                       int64_t rows) {
  const int64_t batch = x.shape[0], seq = x.shape[1], in_features = x.shape[2];
  if (w.rank != 2 || w.shape[1] != in_features || w.shape[0] < first_row + rows)
    throw std::invalid_argument("block reference: a weight's shape does not fit x");
  if (!bias.empty() && (bias.rank != 1 || bias.shape[0] < first_row + rows))
    throw std::invalid_argument("block reference: a bias's shape does not fit its weight");
  std::vector<T> y(static_cast<size_t>(batch * seq * rows));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < seq; ++s)
      for (int64_t r = 0; r < rows; ++r) {
        T sum = bias.empty() ? T(0) : T(bias.at(first_row + r));
        for (int64_t c = 0; c < in_features; ++c) sum += T(x.at(b, s, c)) * T(w.at(first_row + r, c));
        y[static_cast<size_t>((b * seq + s) * rows + r)] = sum;
      }
  return y;
}

// The merged heads [tokens, merged_width] through w_o (and b_o): [tokens, d_model].
template <class T>
std::vector<T> out_project(const std::vector<T> &merged, int64_t merged_width, const BlockWeights &w,
                           int64_t tokens, int64_t d_model) {
  if (w.w_o.rank != 2 || w.w_o.shape[0] != d_model || w.w_o.shape[1] != merged_width)
    throw std::invalid_argument("block reference: w_o must be [d_model, merged heads' width]");
  std::vector<T> out(static_cast<size_t>(tokens * d_model));
  for (int64_t t = 0; t < tokens; ++t) {
    const T *merged_row = &merged[static_cast<size_t>(t * merged_width)];
    for (int64_t m = 0; m < d_model; ++m) {
      T sum = w.b_o.empty() ? T(0) : T(w.b_o.at(m));
      for (int64_t c = 0; c < merged_width; ++c) sum += merged_row[c] * T(w.w_o.at(m, c));
      out[static_cast<size_t>(t * d_model + m)] = sum;
    }
  }
  return out;
}

// Queries from x [B, Sq, M]; keys and values from x_kv [B, Sk, M] (x itself for self-attention).
template <class T>
Result<T> block(const TensorView &x, const TensorView &x_kv, const BlockWeights &w, const BlockShape &shape,
                const Options &o) {
  if (x.rank != 3 || x.data == nullptr || x_kv.rank != 3 || x_kv.data == nullptr)
    throw std::invalid_argument("block reference: x and x_kv must be rank-3 views");
  if (x_kv.shape[0] != x.shape[0] || x_kv.shape[2] != x.shape[2])
    throw std::invalid_argument("block reference: x_kv must be [B, Sk, d_model] with x's B and d_model");
  const int64_t batch = x.shape[0], seq = x.shape[1], seq_kv = x_kv.shape[1], d_model = x.shape[2];
  const int64_t heads = shape.heads, kv_heads = shape.kv_heads, head_dim = shape.head_dim,
                head_dim_v = shape.head_dim_v;
  const int64_t q_rows = heads * head_dim, k_rows = kv_heads * head_dim, v_rows = kv_heads * head_dim_v;

  std::vector<T> q, k, v;
  if (!w.w_qkv.empty()) {
    q = project<T>(x, w.w_qkv, w.b_qkv, 0, q_rows);
    k = project<T>(x_kv, w.w_qkv, w.b_qkv, q_rows, k_rows);
    v = project<T>(x_kv, w.w_qkv, w.b_qkv, q_rows + k_rows, v_rows);
  } else {
    q = project<T>(x, w.w_q, w.b_q, 0, q_rows);
    k = project<T>(x_kv, w.w_k, w.b_k, 0, k_rows);
    v = project<T>(x_kv, w.w_v, w.b_v, 0, v_rows);
  }
  // [B, S, H*D] is [B, S, H, D] with head h in features h*D .. h*D+D-1; likewise the merge.
  Result<T> r = attend<T, T>(dense_view4(q, batch, seq, heads, head_dim),
                             dense_view4(k, batch, seq_kv, kv_heads, head_dim),
                             dense_view4(v, batch, seq_kv, kv_heads, head_dim_v), o);
  r.out = out_project(r.out, heads * head_dim_v, w, batch * seq, d_model);
  return r;
}

// The view of a head-indexed input (mask, score_bias: [..., H, Sq, Sk]; alibi_slopes: [H]) that
// group heads [first, first + count) read as their heads 0..count-1; broadcast dims stay as they are.
template <class V>
V group_heads(V t, int64_t first, int64_t count, int head_dim_index) {
  if (t.empty() || head_dim_index < 0 || t.shape[head_dim_index] == 1) return t;
  t.data += first * t.strides[head_dim_index];
  t.shape[head_dim_index] = count;
  return t;
}
int head_dim_index(int rank) {
  return rank == 4 ? 1 : rank == 3 ? 0 : -1;
}

int64_t heads_total(const std::vector<HeadGroupShape> &groups) {
  int64_t heads = 0;
  for (const HeadGroupShape &g : groups) heads += g.heads;
  return heads;
}

template <class T>
Result<T> block_groups(const TensorView &x, const BlockWeights &w, const std::vector<HeadGroupShape> &groups,
                       const Options &o) {
  if (x.rank != 3 || x.data == nullptr)
    throw std::invalid_argument("block reference: x must be a rank-3 view");
  const int64_t batch = x.shape[0], seq = x.shape[1], d_model = x.shape[2];
  int64_t q_width = 0, k_width = 0, heads = 0;
  for (const HeadGroupShape &g : groups) {
    q_width += int64_t{g.heads} * g.head_dim;
    k_width += int64_t{g.kv_heads} * g.head_dim;
    heads += g.heads;
  }
  const bool fused = !w.w_qkv.empty();
  std::vector<T> merged(static_cast<size_t>(batch * seq * q_width));
  Result<T> r;
  r.lse.assign(static_cast<size_t>(batch * seq * heads), T(0));
  int64_t q_first = 0, k_first = 0, first_head = 0;
  for (const HeadGroupShape &g : groups) {
    const int64_t q_rows = int64_t{g.heads} * g.head_dim, k_rows = int64_t{g.kv_heads} * g.head_dim;
    // Fused rows: every group's q part, then every group's k part, then every group's v part.
    const std::vector<T> q = project<T>(x, fused ? w.w_qkv : w.w_q, fused ? w.b_qkv : w.b_q, q_first, q_rows);
    const std::vector<T> k = project<T>(x, fused ? w.w_qkv : w.w_k, fused ? w.b_qkv : w.b_k,
                                        (fused ? q_width : 0) + k_first, k_rows);
    const std::vector<T> v = project<T>(x, fused ? w.w_qkv : w.w_v, fused ? w.b_qkv : w.b_v,
                                        (fused ? q_width + k_width : 0) + k_first, k_rows);
    Options go = o;
    go.scale = g.scale;
    RuntimeInputs &in = go.inputs;
    in.mask = group_heads(in.mask, first_head, g.heads, head_dim_index(in.mask.rank));
    in.score_bias = group_heads(in.score_bias, first_head, g.heads, head_dim_index(in.score_bias.rank));
    in.alibi_slopes = group_heads(in.alibi_slopes, first_head, g.heads, 0);
    go.dropout.heads = heads_total(groups);
    go.dropout.first_head = first_head;
    const Result<T> attended = attend<T, T>(dense_view4(q, batch, seq, g.heads, g.head_dim),
                                            dense_view4(k, batch, seq, g.kv_heads, g.head_dim),
                                            dense_view4(v, batch, seq, g.kv_heads, g.head_dim), go);
    for (int64_t t = 0; t < batch * seq; ++t) {
      for (int64_t c = 0; c < q_rows; ++c)
        merged[static_cast<size_t>(t * q_width + q_first + c)] =
            attended.out[static_cast<size_t>(t * q_rows + c)];
      for (int64_t h = 0; h < g.heads; ++h)
        r.lse[static_cast<size_t>(t * heads + first_head + h)] =
            attended.lse[static_cast<size_t>(t * g.heads + h)];
    }
    q_first += q_rows;
    k_first += k_rows;
    first_head += g.heads;
  }
  r.out = out_project(merged, q_width, w, batch * seq, d_model);
  return r;
}

}  // namespace

double default_scale(int head_dim) {
  return 1.0 / std::sqrt(static_cast<double>(head_dim));
}

Result<double> core_reference(const TensorView &q, const TensorView &k, const TensorView &v,
                              const Options &o) {
  return core<double>(q, k, v, o);
}

Result<float> core_naive_f32(const TensorView &q, const TensorView &k, const TensorView &v,
                             const Options &o) {
  return core<float>(q, k, v, o);
}

std::vector<double> core_reference(const TensorView &q, const TensorView &k, const TensorView &v,
                                   double scale, const attn::Mask &mask) {
  return core<double>(q, k, v, plain(scale, mask)).out;
}

std::vector<float> core_naive_f32(const TensorView &q, const TensorView &k, const TensorView &v, float scale,
                                  const attn::Mask &mask) {
  return core<float>(q, k, v, plain(scale, mask)).out;
}

Result<double> block_reference(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                               const Options &o) {
  return block<double>(x, x, w, shape, o);
}

Result<float> block_naive_f32(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                              const Options &o) {
  return block<float>(x, x, w, shape, o);
}

std::vector<double> block_reference(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                                    double scale, const attn::Mask &mask) {
  return block<double>(x, x, w, shape, plain(scale, mask)).out;
}

std::vector<float> block_naive_f32(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                                   float scale, const attn::Mask &mask) {
  return block<float>(x, x, w, shape, plain(scale, mask)).out;
}

Result<double> block_cross_reference(const TensorView &x, const TensorView &x_kv, const BlockWeights &w,
                                     const BlockShape &shape, const Options &o) {
  return block<double>(x, x_kv, w, shape, o);
}

Result<float> block_cross_naive_f32(const TensorView &x, const TensorView &x_kv, const BlockWeights &w,
                                    const BlockShape &shape, const Options &o) {
  return block<float>(x, x_kv, w, shape, o);
}

Result<double> block_groups_reference(const TensorView &x, const BlockWeights &w,
                                      const std::vector<HeadGroupShape> &groups, const Options &o) {
  return block_groups<double>(x, w, groups, o);
}

Result<float> block_groups_naive_f32(const TensorView &x, const BlockWeights &w,
                                     const std::vector<HeadGroupShape> &groups, const Options &o) {
  return block_groups<float>(x, w, groups, o);
}

}  // namespace attnc::reference
