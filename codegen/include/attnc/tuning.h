// attnc/tuning.h: tuning files, the tile sizes `attnc tune` measured best per kernel and width.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnc {

// Tiles (core_tiles_text's form) for kernel `id` on targets with `lanes` f32 lanes.
struct TileOverride {
  std::string id;
  int lanes = 0;
  std::string tiles;
};

// One line per entry: "<kernel id> lanes=<n> tiles=<name=value,...>"; '#' starts a comment,
// blank lines are skipped. On a malformed line returns false with *error naming it.
bool parse_tuning(const std::string &text, std::vector<TileOverride> *entries, std::string *error);
// Tuning files hold a line a kernel and lanes: anything past 1 MiB is not one.
constexpr int64_t max_tuning_file_bytes = 1 << 20;
// parse_tuning of a regular file of at most max_tuning_file_bytes (read_text_file).
bool read_tuning_file(const std::string &path, std::vector<TileOverride> *entries, std::string *error);

// The entry for (id, lanes), or null.
const TileOverride *find_override(const std::vector<TileOverride> &entries, const std::string &id, int lanes);

// text with the line of (entry.id, entry.lanes) replaced by entry (and its comment), or appended.
std::string merge_tuning(const std::string &text, const TileOverride &entry, const std::string &comment);

}  // namespace attnc
