// Writes the run_variant of a kernel with a KV cache or the varlen layout: value checks, the
// cache append, then the attention pipelines once per sequence on views of the call's tensors.
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "attnc/emit.h"

namespace attnc {
namespace {

int arg_index(const std::vector<ArgSpec> &args, const std::string &name) {
  for (size_t a = 0; a < args.size(); ++a)
    if (args[a].name == name) return static_cast<int>(a);
  return -1;
}

// Whether any of the kernel's variants is a GPU one (its pipelines copy buffers to the device).
bool runs_on_a_gpu(const KernelRecord &k) {
  for (const VariantTiles &t : k.variant_tiles)
    if (t.gpu) return true;
  return false;
}

std::string buffer(const KernelRecord &k, const std::string &name) {
  return "buffers[" + std::to_string(arg_index(k.args, name)) + "]";
}

// The append pipeline's arguments, as the entry passes them: "kn", "vn" (k_new, v_new views),
// fp8's scalar scales (the call's k_scale, v_scale), then its outputs "kc", "vc" (the cache's
// slots) and int8's "ks", "vs" (their scales).
std::vector<std::string> append_views(const KernelRecord &k) {
  std::vector<std::string> views = {"&kn.buffer", "&vn.buffer"};
  if (k.spec.kv_dtype == attn::KvDType::fp8_e4m3) {
    views.push_back(buffer(k, "k_scale"));
    views.push_back(buffer(k, "v_scale"));
  }
  views.insert(views.end(), {"&kc.buffer", "&vc.buffer"});
  if (k.spec.kv_dtype == attn::KvDType::int8) views.insert(views.end(), {"&ks.buffer", "&vs.buffer"});
  return views;
}

// How many of append_views come first as inputs (the rest are outputs).
size_t append_inputs(const KernelRecord &k) {
  return k.spec.kv_dtype == attn::KvDType::fp8_e4m3 ? 4 : 2;
}

// A switch over the variants calling <id>_append_v<i> on append_views (a GPU variant's outputs
// come back to the host before the call returns).
void write_append(std::ostringstream &o, const KernelRecord &k) {
  const size_t count = append_views(k).size(), inputs = append_inputs(k);
  if (runs_on_a_gpu(k)) {
    o << "static const unsigned char " << k.id << "_append_outputs[] = {";
    for (size_t i = 0; i < count; ++i) o << (i > 0 ? ", " : "") << (i < inputs ? 0 : 1);
    o << "};\n\n";
  }
  o << "static int " << k.id << "_append(attn_call_context *context, void **views, int32_t variant) {\n"
    << "  switch (variant) {\n";
  for (size_t v = 0; v < k.targets.size(); ++v) {
    std::string call = k.id + "_append_v" + std::to_string(v) + "(context";
    for (size_t i = 0; i < count; ++i) call += ", views[" + std::to_string(i) + "]";
    call += ")";
    o << "    case " << v << ": return "
      << (k.variant_tiles[v].gpu ? "attn_device_finish(context, views, " + std::to_string(count) + ", " +
                                       k.id + "_append_outputs, " + call + ")"
                                 : call)
      << ";\n";
  }
  o << "  }\n  attn_abi_record_error(context, \"no such variant\");\n  return -1;\n}\n\n";
}

// The append's views as a C array `views`.
std::string append_view_array(const KernelRecord &k) {
  std::string list;
  for (const std::string &view : append_views(k)) list += (list.empty() ? "" : ", ") + view;
  return "void *views[] = {" + list + "};";
}

// The views of the per-sequence attention pipeline's arguments, as C statements declaring
// `inner`; `how` gives each argument's view (a statement filling view_<name>), or "" to pass the
// call's own buffer. With a GPU variant, a copy of it instead: a GPU pipeline marks the buffers it
// copied to the device clean, and the entry frees those copies after each sequence, so each
// sequence takes the call's buffer afresh (host_dirty as the caller passed it).
void write_inner(std::ostringstream &o, const KernelRecord &k,
                 const std::function<std::string(const std::string &)> &how) {
  std::string list;
  for (const ArgSpec &a : k.inner_args) {
    std::string statement = how(a.name);
    if (statement.empty() && runs_on_a_gpu(k))
      statement = "attn_view_copy(&view_" + a.name + ", " + buffer(k, a.name) + ");";
    if (statement.empty()) {
      list += (list.empty() ? "" : ", ") + buffer(k, a.name);
      continue;
    }
    o << "    attn_view view_" << a.name << ";\n    " << statement << "\n";
    list += (list.empty() ? "" : ", ") + std::string("&view_") + a.name + ".buffer";
  }
  o << "    void *inner[] = {" << list << "};\n";
}

// The value checks of a cache call, for every sequence before anything is written, in 64-bit
// arithmetic: cache_seqlens[b] + Sq, the pages it spans and max_pages * P can pass 2^31 - 1, and
// a wrapped bound would let a bad page id through. Lk = cache_seqlens[b] + Sq must also fit the
// int32 extents a pipeline addresses; past these checks the entry's int32 arithmetic cannot wrap.
void write_cache_checks(std::ostringstream &o, const KernelRecord &k) {
  const bool paged = k.spec.kv_cache == attn::KvCache::paged;
  const int page = k.spec.page_size;
  const std::string room = paged ? "max_pages * P" : "Smax";
  const std::string sizes =
      paged ? "(max_pages %d, P " + std::to_string(page) + ", Sq %d)" : "(Smax %d, Sq %d)";
  const std::string sizes_args = paged ? "max_pages, seq_q" : "smax, seq_q";
  o << "  const int64_t capacity = " << (paged ? "(int64_t)max_pages * " + std::to_string(page) : "smax")
    << ";\n"
    << "  int status = 0;\n"
    << "  /* Every value first: a refused call writes nothing, neither out nor the cache. */\n";
  if (k.spec.kv_dtype == attn::KvDType::fp8_e4m3) {
    // x / scale on append and e4m3 * scale on read: only a finite positive scale means anything.
    for (const char *name : {"k_scale", "v_scale"})
      o << "  if (!(attn_view_f32_scalar(" << buffer(k, name) << ") > 0.0f && attn_view_f32_scalar("
        << buffer(k, name) << ") <= 3.4028234663852886e38f))\n"
        << "    return attn_view_refuse(context, \"" << name
        << " is %g: an fp8_e4m3 cache's scales must be finite and > 0\", (double)attn_view_f32_scalar("
        << buffer(k, name) << "));\n";
  }
  o << "  if (batch > 0 && seq_q > capacity)\n"
    << "    return attn_view_refuse(context, \"Sq (%d) is more than " << room
    << " (%lld): the cache has no room for the call's new keys " << sizes
    << "\", seq_q, (long long)capacity, " << sizes_args << ");\n"
    << "  for (int32_t b = 0; b < batch; ++b) {\n"
    << "    const int64_t cached = attn_view_i32(" << buffer(k, "cache_seqlens") << ", 0, b);\n"
    << "    if (cached < 0 || cached + seq_q > capacity)\n"
    << "      return attn_view_refuse(context, \"cache_seqlens[%d] is %lld: it must be in [0, " << room
    << " - Sq] = [0, %lld] " << sizes << "\", b, (long long)cached, (long long)(capacity - seq_q), "
    << sizes_args << ");\n";
  if (paged) {
    o << "    if (cached + seq_q > INT32_MAX)\n"
      << "      return attn_view_refuse(context, \"cache_seqlens[%d] is %lld: with Sq %d the sequence would "
         "attend to %lld keys, at most %d are addressable (cache_seqlens[b] + Sq <= %d)\", b, (long "
         "long)cached, seq_q, (long long)(cached + seq_q), INT32_MAX, INT32_MAX);\n"
      << "    /* Only the pages the sequence uses after this call are read: entries past them may hold "
         "anything. */\n"
      << "    const int64_t used = (cached + seq_q + " << page - 1 << ") / " << page << ";\n"
      << "    for (int64_t p = 0; p < used; ++p) {\n"
      << "      const int32_t id = attn_view_i32(" << buffer(k, "block_table") << ", b, (int32_t)p);\n"
      << "      if (id < 0 || id >= pages)\n"
      << "        return attn_view_refuse(context, \"block_table[%d][%lld] is %d: page ids must be in [0, "
         "num_pages) = [0, %d)\", b, (long long)p, id, pages);\n"
      << "    }\n";
  }
  o << "  }\n";
}

void write_cache_run(std::ostringstream &o, const KernelRecord &k) {
  const bool paged = k.spec.kv_cache == attn::KvCache::paged;
  const bool int8 = k.spec.kv_dtype == attn::KvDType::int8;
  const int page = k.spec.page_size;
  o << "static int " << k.id
    << "_run_variant(attn_call_context *context, void **buffers, int32_t variant) {\n"
    << "  const int32_t batch = attn_view_extent(" << buffer(k, "q") << ", 3);\n"
    << "  const int32_t seq_q = attn_view_extent(" << buffer(k, "q") << ", 2);\n";
  if (paged) {
    o << "  const int32_t pages = attn_view_extent(" << buffer(k, "k_cache") << ", 3);\n"
      << "  const int32_t max_pages = attn_view_extent(" << buffer(k, "block_table") << ", 0);\n";
  } else {
    o << "  const int32_t smax = attn_view_extent(" << buffer(k, "k_cache") << ", 2);\n";
  }
  write_cache_checks(o, k);
  o << "  /* The new keys (rotated with rope) and values into the cache. */\n"
    << "  for (int32_t b = 0; b < batch; ++b) {\n"
    << "    const int32_t cached = attn_view_i32(" << buffer(k, "cache_seqlens") << ", 0, b);\n";
  auto append_call = [&](const char *indent, const char *first, const char *count, const char *position) {
    o << indent << "attn_view kn, vn, kc, vc;\n"
      << indent << "attn_view_batch(&kn, " << buffer(k, "k_new") << ", b);\n"
      << indent << "attn_view_batch(&vn, " << buffer(k, "v_new") << ", b);\n"
      << indent << "attn_view_crop(&kn, 2, " << first << ", " << count << ", " << position << ");\n"
      << indent << "attn_view_crop(&vn, 2, " << first << ", " << count << ", " << position << ");\n";
  };
  if (paged) {
    o << "    for (int32_t position = cached; position < cached + seq_q;) {\n"
      << "      const int32_t slot = position % " << page << ", left = cached + seq_q - position;\n"
      << "      const int32_t count = left < " << page << " - slot ? left : " << page << " - slot;\n"
      << "      const int32_t id = attn_view_i32(" << buffer(k, "block_table") << ", b, position / " << page
      << ");\n";
    append_call("      ", "position - cached", "count", "position");
    o << "      attn_view_copy(&kc, " << buffer(k, "k_cache") << ");\n"
      << "      attn_view_copy(&vc, " << buffer(k, "v_cache") << ");\n"
      << "      attn_view_crop(&kc, 3, id, 1, 0);\n"
      << "      attn_view_crop(&vc, 3, id, 1, 0);\n"
      << "      attn_view_crop(&kc, 2, slot, count, position);\n"
      << "      attn_view_crop(&vc, 2, slot, count, position);\n";
    if (int8) {
      o << "      attn_view ks, vs;\n"
        << "      attn_view_copy(&ks, " << buffer(k, "k_scale") << ");\n"
        << "      attn_view_copy(&vs, " << buffer(k, "v_scale") << ");\n"
        << "      attn_view_crop(&ks, 2, id, 1, 0);\n"
        << "      attn_view_crop(&vs, 2, id, 1, 0);\n"
        << "      attn_view_crop(&ks, 1, slot, count, position);\n"
        << "      attn_view_crop(&vs, 1, slot, count, position);\n";
    }
    o << "      " << append_view_array(k) << "\n"
      << "      if ((status = " << k.id << "_append(context, views, variant)) != 0) return status;\n"
      << "      position += count;\n"
      << "    }\n";
  } else {
    append_call("    ", "0", "seq_q", "cached");
    o << "    attn_view_batch(&kc, " << buffer(k, "k_cache") << ", b);\n"
      << "    attn_view_batch(&vc, " << buffer(k, "v_cache") << ", b);\n"
      << "    attn_view_crop(&kc, 2, cached, seq_q, cached);\n"
      << "    attn_view_crop(&vc, 2, cached, seq_q, cached);\n";
    if (int8) {
      o << "    attn_view ks, vs;\n"
        << "    attn_view_batch(&ks, " << buffer(k, "k_scale") << ", b);\n"
        << "    attn_view_batch(&vs, " << buffer(k, "v_scale") << ", b);\n"
        << "    attn_view_crop(&ks, 1, cached, seq_q, cached);\n"
        << "    attn_view_crop(&vs, 1, cached, seq_q, cached);\n";
    }
    o << "    " << append_view_array(k) << "\n"
      << "    if ((status = " << k.id << "_append(context, views, variant)) != 0) return status;\n";
  }
  o << "  }\n"
    << "  /* Each sequence attends to its Lk = cache_seqlens[b] + Sq cached keys. */\n"
    << "  for (int32_t b = 0; b < batch; ++b) {\n"
    << "    const int32_t keys = attn_view_i32(" << buffer(k, "cache_seqlens") << ", 0, b) + seq_q;\n";
  write_inner(o, k, [&](const std::string &name) -> std::string {
    if (name == "q" || name == "out" || name == "lse")
      return "attn_view_batch(&view_" + name + ", " + buffer(k, name) + ", b);";
    if (name == "k" || name == "v")
      return "attn_view_batch(&view_" + name + ", " + buffer(k, name + "_cache") +
             ", b); attn_view_crop(&view_" + name + ", 2, 0, keys, 0);";
    // int8's per-token scales [B, Smax, KVH], cut like the cache (paged: passed whole).
    if ((name == "k_scale" || name == "v_scale") && int8 && !paged)
      return "attn_view_batch(&view_" + name + ", " + buffer(k, name) + ", b); attn_view_crop(&view_" + name +
             ", 1, 0, keys, 0);";
    if (name == "block_table")
      return "attn_view_copy(&view_" + name + ", " + buffer(k, name) + "); attn_view_crop(&view_" + name +
             ", 1, b, 1, 0);";
    if (name == "key_count")  // Lk as an extent: cache_seqlens[b] repeated by a stride of 0
      return "attn_view_copy(&view_" + name + ", " + buffer(k, "cache_seqlens") + "); attn_view_crop(&view_" +
             name + ", 0, b, keys, 0); view_" + name + ".dims[0].stride = 0;";
    return "";
  });
  o << "    if ((status = " << k.id
    << "_pipelines(context, inner, variant, seq_q, keys)) != 0) return status;\n"
    << "  }\n  return 0;\n}\n\n";
}

void write_varlen_run(std::ostringstream &o, const KernelRecord &k) {
  const std::string cu_q = buffer(k, "cu_seqlens_q"), cu_k = buffer(k, "cu_seqlens_k");
  o << "static int " << k.id
    << "_run_variant(attn_call_context *context, void **buffers, int32_t variant) {\n"
    << "  const int32_t batch = attn_view_extent(" << cu_q << ", 0) - 1;\n"
    << "  const void *prefix_sums[2] = {" << cu_q << ", " << cu_k << "};\n"
    << "  const char *names[2] = {\"cu_seqlens_q\", \"cu_seqlens_k\"};\n"
    << "  const int32_t totals[2] = {attn_view_extent(" << buffer(k, "q") << ", 2), attn_view_extent("
    << buffer(k, "k") << ", 2)};\n"
    << "  int status = 0;\n"
    << "  /* Every prefix sum first: a refused call writes nothing. */\n"
    << "  for (int t = 0; t < 2; ++t) {\n"
    << "    if (attn_view_i32(prefix_sums[t], 0, 0) != 0)\n"
    << "      return attn_view_refuse(context, \"%s[0] is %d: prefix sums start at 0\", names[t], "
       "attn_view_i32(prefix_sums[t], 0, 0));\n"
    << "    for (int32_t b = 0; b < batch; ++b)\n"
    << "      if (attn_view_i32(prefix_sums[t], 0, b + 1) < attn_view_i32(prefix_sums[t], 0, b))\n"
    << "        return attn_view_refuse(context, \"%s[%d] is %d, less than %s[%d] = %d: prefix sums must not "
       "decrease\", names[t], b + 1, attn_view_i32(prefix_sums[t], 0, b + 1), names[t], b, "
       "attn_view_i32(prefix_sums[t], 0, b));\n"
    << "    if (attn_view_i32(prefix_sums[t], 0, batch) != totals[t])\n"
    << "      return attn_view_refuse(context, \"%s[%d] is %d: the last prefix sum must be the total length "
       "%d\", "
       "names[t], batch, attn_view_i32(prefix_sums[t], 0, batch), totals[t]);\n"
    << "  }\n"
    << "  for (int32_t b = 0; b < batch; ++b) {\n"
    << "    const int32_t first_q = attn_view_i32(" << cu_q << ", 0, b), first_k = attn_view_i32(" << cu_k
    << ", 0, b);\n"
    << "    const int32_t seq_q = attn_view_i32(" << cu_q << ", 0, b + 1) - first_q;\n"
    << "    const int32_t seq_k = attn_view_i32(" << cu_k << ", 0, b + 1) - first_k;\n"
    << "    if (seq_q == 0) {\n";
  // A backward's keys that no query meets have zero gradients; a query that meets no key, too.
  if (k.spec.backward_pass)
    o << "      attn_view_no_keys(" << buffer(k, "dk") << ", 0, first_k, seq_k);\n"
      << "      attn_view_no_keys(" << buffer(k, "dv") << ", 0, first_k, seq_k);\n";
  o << "      continue;\n"
    << "    }\n"
    << "    if (seq_k == 0) {\n";
  if (k.spec.backward_pass) {
    o << "      attn_view_no_keys(" << buffer(k, "dq") << ", 0, first_q, seq_q);\n";
  } else {
    o << "      attn_view_no_keys(" << buffer(k, "out") << ", " << (k.spec.lse ? buffer(k, "lse") : "0")
      << ", first_q, seq_q);\n";
  }
  o << "      continue;\n"
    << "    }\n";
  write_inner(o, k, [&](const std::string &name) -> std::string {
    if (name == "q" || name == "out" || name == "lse" || name == "dout" || name == "dq")
      return "attn_view_rows(&view_" + name + ", " + buffer(k, name) + ", first_q, seq_q);";
    if (name == "k" || name == "v" || name == "dk" || name == "dv")
      return "attn_view_rows(&view_" + name + ", " + buffer(k, name) + ", first_k, seq_k);";
    return "";
  });
  o << "    if ((status = " << k.id
    << "_pipelines(context, inner, variant, seq_q, seq_k)) != 0) return status;\n"
    << "  }\n  return 0;\n}\n\n";
}

}  // namespace

void write_sequence_run(std::ostringstream &o, const KernelRecord &k) {
  if (k.spec.kv_cache != attn::KvCache::none) {
    write_append(o, k);
    write_cache_run(o, k);
  } else {
    write_varlen_run(o, k);
  }
}

}  // namespace attnc
