// Fuzzes the spec and mask text parsers: any text is parsed or refused with a message, and what
// parses prints to a text that parses back to the same spec (mask).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "attn/kernel_id.h"
#include "attn/spec_text.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view text(reinterpret_cast<const char *>(data), size);

  const attn::ParseResult spec = attn::parse_spec(text);
  if (!spec.ok) {
    FUZZ_CHECK(!spec.message.empty(), "parse_spec refused '%.*s' without a message", static_cast<int>(size),
               text.data());
  } else {
    const std::string printed = attn::to_string(spec.spec);
    const attn::ParseResult again = attn::parse_spec(printed);
    FUZZ_CHECK(again.ok, "the printed spec '%s' does not parse: %s", printed.c_str(), again.message.c_str());
    FUZZ_CHECK(attn::to_string(again.spec) == printed, "'%s' prints as '%s' after a round trip",
               printed.c_str(), attn::to_string(again.spec).c_str());
    FUZZ_CHECK(attn::kernel_id(again.spec) == attn::kernel_id(spec.spec),
               "the round trip of '%s' changes its id", printed.c_str());
  }

  const attn::MaskParseResult mask = attn::parse_mask(text);
  if (!mask.ok) {
    FUZZ_CHECK(!mask.message.empty(), "parse_mask refused '%.*s' without a message", static_cast<int>(size),
               text.data());
  } else {
    const std::string printed = attn::to_string(mask.mask);
    const attn::MaskParseResult again = attn::parse_mask(printed);
    FUZZ_CHECK(again.ok, "the printed mask '%s' does not parse: %s", printed.c_str(), again.message.c_str());
    FUZZ_CHECK(attn::to_string(again.mask) == printed, "mask '%s' prints as '%s' after a round trip",
               printed.c_str(), attn::to_string(again.mask).c_str());
  }
  return 0;
}
