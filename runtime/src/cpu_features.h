// cpu_features.h: whether this CPU has the features a kernel table names.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace attn::detail {

// features: comma-separated names as __builtin_cpu_supports spells them ("avx2,fma,f16c";
// "sse41" is accepted for "sse4.1"); "" needs nothing. Unknown names count as missing. On false,
// missing (when not null) lists the absent names, comma separated.
bool cpu_supports_all(const char *features, std::string *missing);

// Calls visit with each name of a comma-separated feature list, trimmed, empty names skipped.
void for_each_feature(const char *features, const std::function<void(std::string_view)> &visit);

}  // namespace attn::detail
