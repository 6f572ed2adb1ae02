// derived_sizes.h: run-time sizes that another one fixes, such as a block mask's "ceil(Sq/128)".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace attn::detail {

// "ceil(NAME/N)": the size ceil(NAME / N) of run-time size NAME (N > 0).
struct DerivedSize {
  std::string base;
  int64_t divisor = 1;
  int64_t of(int64_t base_size) const { return (base_size + divisor - 1) / divisor; }
};

// The rule a dim's name states, or nullopt for a plain name ("B", "Sq").
std::optional<DerivedSize> derived_size(const char *name);

}  // namespace attn::detail
