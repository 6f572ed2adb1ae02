// derived_sizes.cpp: reads "ceil(NAME/N)" dim names.
#include "derived_sizes.h"

#include <cstring>

namespace attn::detail {

std::optional<DerivedSize> derived_size(const char *name) {
  if (name == nullptr || std::strncmp(name, "ceil(", 5) != 0) return std::nullopt;
  const char *slash = std::strchr(name, '/');
  const size_t length = std::strlen(name);
  if (slash == nullptr || slash == name + 5 || name[length - 1] != ')') return std::nullopt;
  DerivedSize d;
  d.base.assign(name + 5, slash);
  d.divisor = 0;
  for (const char *c = slash + 1; c < name + length - 1; ++c) {
    if (*c < '0' || *c > '9' || d.divisor > 1000000) return std::nullopt;
    d.divisor = d.divisor * 10 + (*c - '0');
  }
  if (d.divisor <= 0) return std::nullopt;
  return d;
}

}  // namespace attn::detail
