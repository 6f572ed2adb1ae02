// sha256.h: SHA-256 (FIPS 180-4), so a kernel library can be checked against its manifest's hash.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attn::detail {

// Hashes bytes fed in any number of pieces; digest() ends the message.
class Sha256 {
 public:
  Sha256();
  void update(const void *data, size_t size);
  std::array<uint8_t, 32> digest();

 private:
  void compress(const uint8_t *block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> pending_{};  // a block not yet full
  size_t pending_size_ = 0;
  uint64_t message_bytes_ = 0;
};

// The digest as 64 lower-case hex digits, the form manifests record it in.
std::string hex_digest(const std::array<uint8_t, 32> &digest);

// The hex digest of text, for short inputs (tests, manifests).
std::string sha256_hex(std::string_view text);

}  // namespace attn::detail
