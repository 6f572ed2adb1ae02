// expr_random.cpp: the random expression generator. Four kinds of values keep the fp32 kernel and
// the fp64 reference on the same side of every discontinuity: ints; "exact" floats (ints, dyadic
// literals, captured f32 values, sums and dyadic multiples: the same in fp32 and fp64, so floor,
// int() and comparisons of them agree); score floats (s, tanh, exp, log ...: continuous, and kept
// away from NaN and overflow); bools (comparisons of ints or exact floats).
#include "expr_random.h"

#include <random>
#include <stdexcept>
#include <vector>

#include "attn/expr_text.h"
#include "attn/spec_text.h"

namespace attnc::test {
namespace {

struct Tensor {
  std::string name;
  std::vector<std::string> dims;  // B, H, KVH, Sq, Sk or a number
};

class Generator {
 public:
  Generator(uint32_t seed, std::vector<Tensor> tensors) : rng_(seed), tensors_(std::move(tensors)) {}

  std::string integer(int depth) {
    if (depth <= 0 || chance(0.3)) return int_leaf();
    switch (pick(14)) {
      case 0:
        return "(" + integer(depth - 1) + " + " + integer(depth - 1) + ")";
      case 1:
        return "(" + integer(depth - 1) + " - " + integer(depth - 1) + ")";
      case 2:
        return "(" + integer(depth - 1) + " * " + small_literal() + ")";
      case 3:
        return "(" + integer(depth - 1) + " / " + divisor(depth - 1) + ")";
      case 4:
        return "(" + integer(depth - 1) + " % " + nonzero_literal() + ")";
      case 5:
        return "min(" + integer(depth - 1) + ", " + integer(depth - 1) + ")";
      case 6:
        return "max(" + integer(depth - 1) + ", " + integer(depth - 1) + ")";
      case 7:
        return "abs(" + integer(depth - 1) + ")";
      case 8:
        return "select(" + boolean(depth - 1) + ", " + integer(depth - 1) + ", " + integer(depth - 1) + ")";
      case 9:
        return "int(" + exact(depth - 1) + ")";
      case 10:
        return element("ti", depth - 1);
      case 12:  // a difference of positions: often negative, where C's / and % differ from floor's
        return "((" + int_leaf() + " - " + int_leaf() + ") / " + nonzero_literal() + ")";
      case 13:
        return "((" + int_leaf() + " - " + int_leaf() + ") % " + nonzero_literal() + ")";
      default:
        return element("tu", depth - 1);
    }
  }

  std::string exact(int depth) {
    if (depth <= 0 || chance(0.3)) {
      switch (pick(3)) {
        case 0:
          return "float(" + int_leaf() + ")";
        case 1:
          return dyadic();
        default:
          return element("tf", 0);
      }
    }
    switch (pick(9)) {
      case 0:
        return "(" + exact(depth - 1) + " + " + exact(depth - 1) + ")";
      case 1:
        return "(" + exact(depth - 1) + " - " + exact(depth - 1) + ")";
      case 2:
        return "(" + exact(depth - 1) + " * " + dyadic() + ")";
      case 3:
        return "floor(" + exact(depth - 1) + ")";
      case 4:
        return "ceil(" + exact(depth - 1) + ")";
      case 5:
        return "min(" + exact(depth - 1) + ", " + exact(depth - 1) + ")";
      case 6:
        return "abs(" + exact(depth - 1) + ")";
      case 7:
        return "select(" + boolean(depth - 1) + ", " + exact(depth - 1) + ", " + exact(depth - 1) + ")";
      default:
        return "float(" + integer(depth - 1) + ")";
    }
  }

  std::string score(int depth) {
    if (depth <= 0 || chance(0.25)) {
      switch (pick(3)) {
        case 0:
          return "s";
        case 1:
          return "tanh(" + exact(0) + ")";
        default:
          return "(" + exact(0) + " * 0.125)";
      }
    }
    switch (pick(11)) {
      case 0:
        return "(" + score(depth - 1) + " + " + score(depth - 1) + ")";
      case 1:
        return "(" + score(depth - 1) + " - " + score(depth - 1) + ")";
      case 2:
        return "(" + score(depth - 1) + " * " + dyadic() + ")";
      case 3:
        return "tanh(" + score(depth - 1) + ")";
      case 4:
        return "exp(min(" + score(depth - 1) + ", 3.0))";
      case 5:
        return "log(abs(" + score(depth - 1) + ") + 1.0)";
      case 6:
        return "sqrt(abs(" + score(depth - 1) + "))";
      case 7:
        return "(" + score(depth - 1) + " / (abs(" + score(depth - 1) + ") + 1.0))";
      case 8:
        return "max(" + score(depth - 1) + ", " + score(depth - 1) + ")";
      case 9:
        return "select(" + boolean(depth - 1) + ", " + score(depth - 1) + ", " + score(depth - 1) + ")";
      default:
        return "(s + " + score(depth - 1) + ")";
    }
  }

  std::string boolean(int depth) {
    static const char *const compare[] = {" < ", " <= ", " > ", " >= ", " == ", " != "};
    if (depth <= 0 || chance(0.35)) {
      switch (pick(3)) {
        case 0:
          return "(" + int_leaf() + compare[pick(6)] + int_leaf() + ")";
        case 1:
          return "(" + element("tu", 0) + " != 0)";
        default:
          return "(" + int_leaf() + compare[pick(6)] + int_leaf() + ")";
      }
    }
    switch (pick(6)) {
      case 0:
        return "(" + integer(depth - 1) + compare[pick(6)] + integer(depth - 1) + ")";
      case 1:
        return "(" + exact(depth - 1) + compare[pick(4)] + exact(depth - 1) + ")";
      case 2:
        return "(" + boolean(depth - 1) + " && " + boolean(depth - 1) + ")";
      case 3:
        return "(" + boolean(depth - 1) + " || " + boolean(depth - 1) + ")";
      case 4:
        return "!" + boolean(depth - 1);
      default:
        return "(" + integer(depth - 1) + compare[pick(6)] + integer(depth - 1) + ")";
    }
  }

  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::string int_leaf() {
    static const char *const vars[] = {"b", "h", "kvh", "q", "k", "i", "Sq", "Sk", "q", "k"};
    if (chance(0.3)) return small_literal();
    return vars[pick(10)];
  }
  // Any int, which may be 0 at run time (x / 0 is 0), but not the literal 0 (rejected by check).
  std::string divisor(int depth) {
    const std::string d = integer(depth);
    return d == "0" || d == "-0" ? "(k - k)" : d;
  }
  std::string small_literal() { return std::to_string(pick(19) - 9); }
  std::string nonzero_literal() {
    const int v = pick(9) + 1;
    return std::to_string(chance(0.5) ? v : -v);
  }
  std::string dyadic() {
    static const char *const values[] = {"0.5", "0.25", "1.5", "2.0", "0.125", "3.0", "0.75"};
    return values[pick(7)];
  }
  // NAME[...]: indices that mostly follow the dim (k for Sk, h for H ...), often shifted or
  // random, so that many fall outside and clamp.
  std::string element(const std::string &name, int depth) {
    for (const Tensor &t : tensors_) {
      if (t.name != name) continue;
      std::string text = name + "[";
      for (size_t d = 0; d < t.dims.size(); ++d) text += (d ? ", " : "") + index_for(t.dims[d], depth);
      return text + "]";
    }
    throw std::logic_error("no tensor " + name);
  }
  std::string index_for(const std::string &dim, int depth) {
    const std::string natural = dim == "B"     ? "b"
                                : dim == "H"   ? "h"
                                : dim == "KVH" ? "kvh"
                                : dim == "Sq"  ? "i"
                                : dim == "Sk"  ? "k"
                                               : std::to_string(pick(std::stoi(dim)));
    switch (pick(4)) {
      case 0:
        return natural;
      case 1:
        return "(" + natural + " + " + small_literal() + ")";
      case 2:
        return depth > 0 ? integer(depth) : int_leaf();
      default:
        return natural;
    }
  }

  std::mt19937 rng_;
  std::vector<Tensor> tensors_;
};

const char *const bases[] = {
    "heads=2 head_dim=16",
    "heads=4 kv_heads=2 head_dim=16",
    "heads=2 kv_heads=1 head_dim=32 lse=true",
    "heads=2 head_dim=16 mask=window(1000,1000)",  // the block core
    "heads=2 head_dim=16 mask=causal align=top_left",
    "d_model=32 heads=2 form=block",
    "heads=2 head_dim=16 probs=true lse=true",
    "heads=2 head_dim=16 softcap=5 alibi=true",
};

std::vector<std::string> random_dims(Generator &g) {
  static const char *const dims[] = {"B", "H", "KVH", "Sq", "Sk", "3", "7"};
  std::vector<std::string> out;
  const int rank = 1 + g.pick(3);
  for (int d = 0; d < rank; ++d) out.push_back(dims[g.pick(7)]);
  return out;
}

std::string declaration(const Tensor &t, const char *dtype) {
  std::string text = t.name + ":" + dtype + "[";
  for (size_t d = 0; d < t.dims.size(); ++d) text += (d ? "," : "") + t.dims[d];
  return text + "]";
}

int nodes_of(const std::string &text) {
  const attn::ExprParse p = attn::parse_expr(text);
  return p.ok ? p.tree.count : 1 << 20;
}

// select(pick[slot] == 0, E0, select(... , E_{n-1})) within the node limit: each expression
// drawn again (shallower each time) until the chain fits.
std::string chain(Generator &g, int slot, bool mask) {
  std::vector<std::string> parts;
  const int budget = (attn::limits::max_expr_nodes - 2) / expr_random_picks - 5;
  for (int j = 0; j < expr_random_picks; ++j) {
    std::string e;
    for (int depth = 3;; depth = depth > 0 ? depth - 1 : 0) {
      e = mask ? g.boolean(depth) : g.score(depth);
      if (nodes_of(e) <= budget) break;
    }
    parts.push_back(e);
  }
  std::string text = parts.back();
  for (int j = expr_random_picks - 2; j >= 0; --j)
    text = "select(pick[" + std::to_string(slot) + "] == " + std::to_string(j) + ", " + parts[j] + ", " +
           text + ")";
  return text;
}

}  // namespace

std::string random_expr_spec(uint32_t seed, int n) {
  Generator shapes(seed * 7919u + static_cast<uint32_t>(n), {});
  const std::vector<Tensor> tensors = {
      {"pick", {"2"}}, {"tf", random_dims(shapes)}, {"ti", random_dims(shapes)}, {"tu", random_dims(shapes)}};
  Generator g(seed * 104729u + static_cast<uint32_t>(n), tensors);
  const std::string text = std::string(bases[n % (sizeof(bases) / sizeof(bases[0]))]) +
                           " inputs=" + declaration(tensors[0], "i32") + ";" +
                           declaration(tensors[1], "f32") + ";" + declaration(tensors[2], "i32") + ";" +
                           declaration(tensors[3], "u8") + " score_mod=\"" + chain(g, 0, false) +
                           "\" mask_mod=\"" + chain(g, 1, true) + "\"";
  const attn::ParseResult parsed = attn::parse_spec(text);
  if (!parsed.ok) throw std::logic_error("random_expr_spec: " + parsed.message + " in " + text);
  return text;
}

}  // namespace attnc::test
