// mask_text.h (private to dsl/): the mask grammar and the wording of mask term problems, shared by
// parse_mask(), parse_spec()'s mask key and validate().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "attn/mask.h"

namespace attn::detail {

// The mask `text` spells, its term values not yet checked (they are recorded in Mask::bad_term);
// nullopt when the text breaks the grammar, with `error` saying why (no "mask: " prefix).
std::optional<Mask> parse_mask_expression(std::string_view text, std::string &error);

// "window bound (-2) must be >= -1 (-1 means unbounded)", "global(G) needs G >= 1 (got 0)", ...;
// empty for MaskProblem::none.
std::string mask_problem_text(MaskProblem problem, int32_t value);

}  // namespace attn::detail
