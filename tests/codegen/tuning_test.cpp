// Tile overrides: their text form, the checks on them, the candidates attnc tune times, and the
// tuning file format.
#include "attnc/tuning.h"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "attnc/tile_config.h"

namespace {

attn::Spec spec_of(const std::string &text) {
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE_MESSAGE(parsed.ok, parsed.message);
  return attn::resolve(parsed.spec);
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("tile text round-trips and names every tunable field") {
  const attn::Spec s = spec_of("heads=12 head_dim=64");
  const attnc::CpuTiles defaults = attnc::cpu_tiles(s, 8);
  const std::string text = attnc::core_tiles_text(defaults);
  for (const char *name :
       {"query_tile=", "key_block=", "score_vectors=", "score_rows=", "pv_rows=", "pv_vectors="})
    CHECK(contains(text, name));
  attnc::CpuTiles other = attnc::cpu_tiles(s, 8);
  other.query_tile = 7, other.key_block = 7, other.pv_rows = 7;
  std::string error;
  REQUIRE(attnc::apply_tiles_text(text, &other, &error));
  CHECK(attnc::core_tiles_text(other) == text);
  // A subset changes only what it names.
  REQUIRE(attnc::apply_tiles_text("key_block=64", &other, &error));
  CHECK(other.key_block == 64);
  CHECK(other.query_tile == defaults.query_tile);
}

TEST_CASE("malformed tile text is refused with the item named") {
  attnc::CpuTiles t{};
  std::string error;
  for (const char *bad : {"query_tiles=32", "query_tile", "query_tile=0", "query_tile=-4", "query_tile=3x",
                          "key_block=", "key_block=99999999999"}) {
    CAPTURE(bad);
    CHECK_FALSE(attnc::apply_tiles_text(bad, &t, &error));
    CHECK(contains(error, bad));
  }
}

TEST_CASE("tile_problem catches sizes that do not fit or divide") {
  const attn::Spec s = spec_of("heads=12 head_dim=64");
  const attnc::CpuTiles ok = attnc::cpu_tiles(s, 8);
  CHECK(attnc::tile_problem(s, ok).empty());
  struct Bad {
    const char *text, *problem;
  };
  for (const Bad b : {Bad{"query_tile=40", "multiple of score_vectors"}, Bad{"key_block=130", "score_rows"},
                      Bad{"score_vectors=4,score_rows=4", "vector registers"},
                      Bad{"pv_rows=7,pv_vectors=2", "vector registers"}, Bad{"pv_rows=5", "pv_rows"},
                      Bad{"pv_rows=1,pv_vectors=3", "head_dim_v"}, Bad{"query_tile=512", "above 256"},
                      Bad{"key_block=2048", "above 1024"},
                      Bad{"score_vectors=1048576,score_rows=1048576", "vector registers"},
                      Bad{"pv_rows=2147483647,pv_vectors=2", "vector registers"}}) {
    CAPTURE(std::string(b.text));
    attnc::CpuTiles t = ok;
    std::string error;
    REQUIRE(attnc::apply_tiles_text(b.text, &t, &error));
    const std::string problem = attnc::tile_problem(s, t);
    CAPTURE(problem);
    CHECK(contains(problem, b.problem));
  }
}

TEST_CASE("tune candidates: the defaults first, every one valid, none twice") {
  for (const char *text : {"heads=12 head_dim=64", "heads=12 head_dim=64 mask=causal", "heads=3 head_dim=80",
                           "heads=2 head_dim=32 head_dim_v=80", "heads=2 head_dim=7 head_dim_v=9"})
    for (int lanes : {4, 8, 16}) {
      CAPTURE(text);
      CAPTURE(lanes);
      const attn::Spec s = spec_of(text);
      const std::vector<attnc::CpuTiles> candidates = attnc::tile_candidates(s, lanes);
      REQUIRE(!candidates.empty());
      CHECK(attnc::core_tiles_text(candidates.front()) == attnc::core_tiles_text(attnc::cpu_tiles(s, lanes)));
      CHECK(candidates.size() >= (attnc::whole_row_core(s) ? 3u : 5u));
      std::set<std::string> seen, seen_without_key_block;
      for (const attnc::CpuTiles &t : candidates) {
        CHECK(attnc::tile_problem(s, t).empty());
        CHECK(seen.insert(attnc::core_tiles_text(t)).second);
        // The whole-row core has no key blocks: candidates differing in key_block alone would
        // time the same kernel twice.
        attnc::CpuTiles any_key_block = t;
        any_key_block.key_block = 0;
        if (attnc::whole_row_core(s))
          CHECK(seen_without_key_block.insert(attnc::core_tiles_text(any_key_block)).second);
      }
    }
}

TEST_CASE("tuning files: entries, comments, and errors with their line") {
  std::vector<attnc::TileOverride> entries;
  std::string error;
  const std::string text =
      "# tuned here\n"
      "\n"
      "attn_core_a lanes=8 tiles=query_tile=48,key_block=128  # 103 ms\n"
      "  attn_core_a lanes=16 tiles=key_block=64\n";
  REQUIRE_MESSAGE(attnc::parse_tuning(text, &entries, &error), error);
  REQUIRE(entries.size() == 2);
  const attnc::TileOverride *eight = attnc::find_override(entries, "attn_core_a", 8);
  REQUIRE(eight != nullptr);
  CHECK(eight->tiles == "query_tile=48,key_block=128");
  CHECK(attnc::find_override(entries, "attn_core_a", 4) == nullptr);
  CHECK(attnc::find_override(entries, "attn_core_b", 8) == nullptr);

  struct Bad {
    const char *text, *message;
  };
  for (const Bad b :
       {Bad{"x lanes=8", "expected"}, Bad{"x lanes=8 tiles=key_block=64 extra", "expected"},
        Bad{"x width=8 tiles=key_block=64", "lanes="}, Bad{"x lanes=0 tiles=key_block=64", "lanes=0"},
        Bad{"x lanes=8 query_tile=32", "tiles="}, Bad{"x lanes=8 tiles=rows=3", "rows=3"},
        Bad{"x lanes=8 tiles=key_block=64\nx lanes=8 tiles=key_block=32", "second entry"}}) {
    CAPTURE(std::string(b.text));
    std::vector<attnc::TileOverride> none;
    CHECK_FALSE(attnc::parse_tuning(std::string("# first\n") + b.text, &none, &error));
    CHECK(contains(error, "line 2") == (std::string(b.message) != "second entry"));
    CHECK(contains(error, b.message));
  }
  std::vector<attnc::TileOverride> missing;
  CHECK_FALSE(attnc::read_tuning_file("/nonexistent/tuning.txt", &missing, &error));
  CHECK(contains(error, "/nonexistent/tuning.txt"));
  // Issue 32: /dev/zero was read without end (2 GB in 3.6 s); what is not a regular file is refused
  // before it is opened.
  CHECK_FALSE(attnc::read_tuning_file("/dev/zero", &missing, &error));
  CHECK(contains(error, "tuning file '/dev/zero' is a character device; expected a regular text file"));
  CHECK_FALSE(attnc::read_tuning_file("/", &missing, &error));
  CHECK(contains(error, "tuning file '/' is a directory"));
}

TEST_CASE("merging replaces the entry of the same kernel and width, and keeps the rest") {
  const std::string text =
      "# header\n"
      "attn_core_a lanes=8 tiles=key_block=64  # old\n"
      "attn_core_a lanes=16 tiles=key_block=32\n";
  const std::string merged = attnc::merge_tuning(text, {"attn_core_a", 8, "key_block=128"}, "new");
  CHECK(
      merged ==
      "# header\nattn_core_a lanes=8 tiles=key_block=128  # new\nattn_core_a lanes=16 tiles=key_block=32\n");
  const std::string appended = attnc::merge_tuning(merged, {"attn_core_b", 8, "query_tile=32"}, "");
  CHECK(appended == merged + "attn_core_b lanes=8 tiles=query_tile=32\n");
  std::vector<attnc::TileOverride> entries;
  std::string error;
  REQUIRE(attnc::parse_tuning(appended, &entries, &error));
  CHECK(entries.size() == 3);
}

TEST_CASE("short-sequence tiles: valid where they exist, and chosen only where they pad less") {
  for (const char *text : {"heads=12 head_dim=64", "heads=12 head_dim=64 mask=causal", "heads=3 head_dim=80",
                           "heads=2 head_dim=7 head_dim_v=9"})
    for (int lanes : {4, 8, 16}) {
      CAPTURE(text);
      CAPTURE(lanes);
      const attn::Spec s = spec_of(text);
      const attnc::CpuTiles short_tiles = attnc::cpu_tiles_short(s, lanes),
                            defaults = attnc::cpu_tiles_blocks(s, lanes);
      CHECK(attnc::tile_problem(s, short_tiles).empty());
      CHECK(short_tiles.query_tile * short_tiles.key_block < defaults.query_tile * defaults.key_block);
    }
  // AVX-512 (measured on Zen 4): short for Sq 100 x Sk 300, where 128-key blocks pad 384 keys;
  // the defaults where both pad alike (S = 256, measured even) and for long calls. (Measured
  // with this spec's block-core tiles; it runs the whole-row core now, with no short pipeline.)
  const attn::Spec s = spec_of("heads=12 head_dim=64");
  const attnc::CpuTiles wide = attnc::cpu_tiles_blocks(s, 16), wide_short = attnc::cpu_tiles_short(s, 16);
  CHECK(attnc::short_tiles_win(100, 300, wide, wide_short));
  CHECK_FALSE(attnc::short_tiles_win(256, 256, wide, wide_short));
  CHECK_FALSE(attnc::short_tiles_win(1024, 1024, wide, wide_short));
  CHECK_FALSE(attnc::short_tiles_win(1000, 1000, wide, wide_short));
  const attnc::CpuTiles defaults = attnc::cpu_tiles_blocks(s, 8), short_tiles = attnc::cpu_tiles_short(s, 8);
  // AVX2 (measured on Zen 1, docs/PERFORMANCE.md): short for S = 256 and Sq 100 x Sk 300; the
  // defaults for S = 512 and 1024. The kernel sweeps' 1000 x 1000 cases run the defaults, the
  // rest short.
  CHECK(attnc::short_tiles_win(256, 256, defaults, short_tiles));
  CHECK(attnc::short_tiles_win(100, 300, defaults, short_tiles));
  CHECK_FALSE(attnc::short_tiles_win(512, 512, defaults, short_tiles));
  CHECK_FALSE(attnc::short_tiles_win(1024, 1024, defaults, short_tiles));
  CHECK_FALSE(attnc::short_tiles_win(1000, 1000, defaults, short_tiles));
  CHECK(attnc::short_tiles_win(129, 129, defaults, short_tiles));
  attnc::CpuTiles none = short_tiles;
  none.query_tile = 0;
  CHECK_FALSE(attnc::short_tiles_win(100, 300, defaults, none));
}

TEST_CASE("the packed pipeline runs from 1024 keys with 8 tasks, from 512 with 32") {
  CHECK(attnc::runs_packed(1024, 8));
  CHECK_FALSE(attnc::runs_packed(1023, 8));
  CHECK_FALSE(attnc::runs_packed(1024, 7));
  CHECK(attnc::runs_packed(512, 32));
  CHECK_FALSE(attnc::runs_packed(511, 64));
  CHECK_FALSE(attnc::runs_packed(1000, 31));
  CHECK(attnc::runs_packed(attnc::packed_max_keys, 64));
  CHECK_FALSE(attnc::runs_packed(attnc::packed_max_keys + 1, 64));
}

TEST_CASE("the packed pipeline: core specs whose tiles read most keys") {
  for (const char *text :
       {"heads=12 head_dim=64", "heads=12 head_dim=64 mask=causal", "heads=4 kv_heads=1 head_dim=32",
        "heads=2 head_dim=16 mask=(causal|prefix)&padding", "heads=2 head_dim=16 mask=tensor",
        "heads=2 head_dim=16 mask=document&causal", "heads=2 head_dim=16 mask=window(-1,4)"}) {
    CAPTURE(text);
    CHECK(attnc::packs_head_rows(spec_of(text)));
  }
  // Windows with a finite left edge, global tokens and random blocks visit a few blocks per tile;
  // the block form's K and V come from its own projections.
  for (const char *text :
       {"heads=2 head_dim=16 mask=window(16,0)", "heads=2 head_dim=16 mask=window(4,4)|causal",
        "heads=2 head_dim=16 mask=global(4)", "heads=2 head_dim=16 mask=random(16,2,42)&causal",
        "d_model=64 heads=2 form=block mask=causal"}) {
    CAPTURE(text);
    CHECK_FALSE(attnc::packs_head_rows(spec_of(text)));
  }
}

TEST_CASE("the packed pipeline takes the main tiles and packs the head rows") {
  for (int lanes : {4, 8, 16}) {
    CAPTURE(lanes);
    for (const char *text : {"heads=2 head_dim=16", "heads=12 head_dim=64 mask=causal",
                             "heads=2 head_dim=16 mask=window(-1,4)&padding",
                             "heads=2 head_dim=16 mask=padding", "heads=2 head_dim=16 mask=window(16,0)"}) {
      CAPTURE(text);
      const attn::Spec s = spec_of(text);
      const attnc::CpuTiles packed = attnc::cpu_tiles_packed(s, lanes), plain = attnc::cpu_tiles(s, lanes);
      CHECK(packed.pack_head_rows);
      CHECK_FALSE(plain.pack_head_rows);
      CHECK(attnc::tile_problem(s, packed).empty());
      CHECK(attnc::core_tiles_text(packed) == attnc::core_tiles_text(plain));
    }
  }
}
