// attn/expr_text.h: the text of score_mod / mask_mod and of `inputs=`: canonical printing, parsing,
// and problems worded with the expression and the column they are at.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/expr_check.h"

namespace attn {

// The canonical text: C precedence, parentheses only where needed, floats with 9 digits and a
// '.' or exponent ("s * 0.5 + rel[h, q - k + 63]"). Equal trees print equally (the kernel id).
std::string to_string(const ExprTree &e);
// "rel:f32[H,127];ids:i32[B,Sk]" (empty when none).
std::string to_string(const CapturedInputs &inputs);

struct ExprParse {
  bool ok = false;
  ExprTree tree{};
  std::vector<int> columns;  // 1-based column of each node's token in the text
  std::string message;       // why the text breaks the grammar or the limits (with the column)
};
// The grammar of docs/DSL.md, syntax only: types and tensor names are check_expr's.
ExprParse parse_expr(std::string_view text);

// `NAME:DTYPE[DIM,...];...`; nullopt with `error` when the text breaks that form.
std::optional<CapturedInputs> parse_inputs(std::string_view text, std::string &error);

// "at column 5 ('x[1]'): unknown tensor 'x' ..."; the column from `columns` where it has the node.
std::string expr_problem_text(const ExprTree &e, const CapturedInputs &inputs, const ExprCheck &c,
                              const std::vector<int> &columns = {});
std::string input_problem_text(const CapturedInputs &inputs, const InputCheck &c);

}  // namespace attn
