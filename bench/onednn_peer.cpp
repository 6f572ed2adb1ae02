// onednn_peer.cpp: the attention peer built from oneDNN primitives: per (batch, head) a matmul
// Q·Kᵀ (scaled; causal adds a 0/−inf mask as a binary post-op), a softmax, a matmul P·V.
//
// Usage: onednn_peer IN_DIR OUT.npy none|causal THREADS WARMUP RUNS [f32|bf16]
// Reads IN_DIR/{q,k,v}.npy ([B,S,H,D] float32), prints {"median_ms": ...} as JSON.
// bf16: q, k, v are converted to bf16 before the timed calls (the harness rounded them already, so
// exactly); both matmuls take bf16 operands and accumulate into f32 scores and an f32 out, and the
// softmax writes its probabilities in bf16 for P·V, as a bf16 attention on oneDNN would.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "bf16_bits.h"
#include "npy_io.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace {

using dnnl::memory;
using Dims = memory::dims;

// The three primitives of one head and the memory they run on; the data pointers move per head.
// q, k, v and the probabilities are in `storage` (f32 or bf16); scores and out are f32.
struct HeadAttention {
  int64_t batch, seq_q, seq_k, heads, kv_heads, head_dim, head_dim_v;
  size_t element;  // bytes of one q, k or v element
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul scores_op, values_op;
  dnnl::softmax_v2_forward softmax_op;
  memory q, k_t, scores, probs, v, out, causal_mask;

  HeadAttention(const std::vector<int64_t> &q_shape, const std::vector<int64_t> &k_shape,
                const std::vector<int64_t> &v_shape, bool causal, memory::data_type storage)
      : batch(q_shape[0]),
        seq_q(q_shape[1]),
        seq_k(k_shape[1]),
        heads(q_shape[2]),
        kv_heads(k_shape[2]),
        head_dim(q_shape[3]),
        head_dim_v(v_shape[3]),
        element(storage == memory::data_type::bf16 ? 2 : 4) {
    const auto f32 = memory::data_type::f32;
    // q_h: [Sq, D] rows H·D apart; k_hᵀ: [D, Sk] read from k's rows; v_h: [Sk, Dv]; out_h: [Sq, Dv].
    const memory::desc q_md({seq_q, head_dim}, storage, Dims{heads * head_dim, 1});
    const memory::desc k_t_md({head_dim, seq_k}, storage, Dims{1, kv_heads * head_dim});
    const memory::desc scores_md({seq_q, seq_k}, f32, Dims{seq_k, 1});
    const memory::desc probs_md({seq_q, seq_k}, storage, Dims{seq_k, 1});
    const memory::desc v_md({seq_k, head_dim_v}, storage, Dims{kv_heads * head_dim_v, 1});
    const memory::desc out_md({seq_q, head_dim_v}, f32, Dims{heads * head_dim_v, 1});

    dnnl::primitive_attr scores_attr;
    scores_attr.set_output_scales(0, {1.0f / std::sqrt(static_cast<float>(head_dim))});
    if (causal) {  // bottom-right aligned: key k is kept for query i when k <= i + Sk - Sq
      dnnl::post_ops ops;
      ops.append_binary(dnnl::algorithm::binary_add, scores_md);
      scores_attr.set_post_ops(ops);
      causal_mask = memory(scores_md, engine);
      float *mask = static_cast<float *>(causal_mask.get_data_handle());
      for (int64_t i = 0; i < seq_q; ++i)
        for (int64_t j = 0; j < seq_k; ++j)
          mask[i * seq_k + j] = j <= i + seq_k - seq_q ? 0.0f : -std::numeric_limits<float>::infinity();
    }
    scores_op = dnnl::matmul({{q_md, k_t_md, scores_md}, scores_attr, engine});
    softmax_op = dnnl::softmax_v2_forward(
        {{dnnl::prop_kind::forward_inference, dnnl::algorithm::softmax_accurate, scores_md, probs_md, 1},
         engine});
    values_op = dnnl::matmul({{probs_md, v_md, out_md}, engine});
    q = memory(q_md, engine, nullptr);
    k_t = memory(k_t_md, engine, nullptr);
    v = memory(v_md, engine, nullptr);
    out = memory(out_md, engine, nullptr);
    scores = memory(scores_md, engine);
    probs = storage == f32 ? scores : memory(probs_md, engine);  // f32: the softmax runs in place
  }

  // q, k, v: [B, S, heads, dim] contiguous in the storage type; out: the same, f32.
  void run(const void *q_data, const void *k_data, const void *v_data, float *out_data) {
    const int64_t group = heads / kv_heads;
    auto at = [&](const void *base, int64_t offset) {
      return const_cast<char *>(static_cast<const char *>(base)) + offset * static_cast<int64_t>(element);
    };
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t kvh = h / group;
        q.set_data_handle(at(q_data, (b * seq_q * heads + h) * head_dim));
        k_t.set_data_handle(at(k_data, (b * seq_k * kv_heads + kvh) * head_dim));
        v.set_data_handle(at(v_data, (b * seq_k * kv_heads + kvh) * head_dim_v));
        out.set_data_handle(out_data + (b * seq_q * heads + h) * head_dim_v);
        std::unordered_map<int, memory> scores_args{
            {DNNL_ARG_SRC, q}, {DNNL_ARG_WEIGHTS, k_t}, {DNNL_ARG_DST, scores}};
        if (causal_mask) scores_args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = causal_mask;
        scores_op.execute(stream, scores_args);
        softmax_op.execute(stream, {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, probs}});
        values_op.execute(stream, {{DNNL_ARG_SRC, probs}, {DNNL_ARG_WEIGHTS, v}, {DNNL_ARG_DST, out}});
      }
    stream.wait();
  }
};

// The tensor's elements as the peer stores them: the f32 data itself, or a bf16 copy.
const void *stored(const bench_npy::Array &array, bool bf16, std::vector<uint16_t> *copy) {
  if (!bf16) return array.data.data();
  copy->resize(array.data.size());
  std::transform(array.data.begin(), array.data.end(), copy->begin(), bench_bf16::from_f32);
  return copy->data();
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 7 && argc != 8) {
    std::fprintf(stderr, "usage: onednn_peer IN_DIR OUT.npy none|causal THREADS WARMUP RUNS [f32|bf16]\n");
    return 2;
  }
  const std::string folder = argv[1], out_path = argv[2], mask = argv[3], dtype = argc == 8 ? argv[7] : "f32";
  const int threads = std::atoi(argv[4]), warmup = std::atoi(argv[5]), runs = std::atoi(argv[6]);
  if (dtype != "f32" && dtype != "bf16") {
    std::fprintf(stderr, "onednn_peer: dtype is '%s', expected f32 or bf16\n", dtype.c_str());
    return 2;
  }
  const bool bf16 = dtype == "bf16";
  try {
    omp_set_num_threads(threads);
    const bench_npy::Array q = bench_npy::read(folder + "/q.npy"), k = bench_npy::read(folder + "/k.npy"),
                           v = bench_npy::read(folder + "/v.npy");
    std::vector<uint16_t> q_bf16, k_bf16, v_bf16;
    const void *q_data = stored(q, bf16, &q_bf16), *k_data = stored(k, bf16, &k_bf16),
               *v_data = stored(v, bf16, &v_bf16);
    HeadAttention attention(q.shape, k.shape, v.shape, mask == "causal",
                            bf16 ? memory::data_type::bf16 : memory::data_type::f32);
    bench_npy::Array out{{q.shape[0], q.shape[1], q.shape[2], v.shape[3]}, {}};
    out.data.resize(static_cast<size_t>(out.shape[0] * out.shape[1] * out.shape[2] * out.shape[3]));
    for (int i = 0; i < warmup; ++i) attention.run(q_data, k_data, v_data, out.data.data());
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i) {
      const auto start = std::chrono::steady_clock::now();
      attention.run(q_data, k_data, v_data, out.data.data());
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    bench_npy::write(out_path, out);
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    const double median = n % 2 == 1 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
    const dnnl_version_t *version = dnnl_version();
    std::printf(
        "{\"median_ms\": %.6f, \"min_ms\": %.6f, \"runs\": %d, \"threads\": %d, \"version\": \"oneDNN "
        "%d.%d.%d\"}\n",
        median, ms.front(), runs, omp_get_max_threads(), version->major, version->minor, version->patch);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "onednn_peer: %s\n", e.what());
    return 1;
  }
  return 0;
}
