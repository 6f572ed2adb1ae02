// test_sha256.cpp: the runtime's SHA-256 against the FIPS 180-2 example digests.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "sha256.h"

using attn::detail::Sha256;
using attn::detail::sha256_hex;

TEST_CASE("sha256 gives the FIPS 180-2 example digests") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Two blocks: the padding does not fit after 56 bytes of message.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 gives one digest however the bytes are fed") {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>(i * 7 + 3);
  const std::string whole = sha256_hex(text);
  for (size_t piece : {1u, 55u, 56u, 63u, 64u, 65u, 999u}) {
    CAPTURE(piece);
    Sha256 hash;
    for (size_t at = 0; at < text.size(); at += piece)
      hash.update(text.data() + at, std::min(piece, text.size() - at));
    CHECK(attn::detail::hex_digest(hash.digest()) == whole);
  }
}
