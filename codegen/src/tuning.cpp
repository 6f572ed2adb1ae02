// Tuning files: parse, look up and merge "<id> lanes=<n> tiles=<...>" lines.
#include "attnc/tuning.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include "attnc/text_file.h"
#include "attnc/tile_config.h"

namespace attnc {
namespace {

// The line without its comment and surrounding blanks.
std::string content_of(const std::string &line) {
  std::string text = line.substr(0, line.find('#'));
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") + 1 - first);
}

bool parse_line(const std::string &content, TileOverride *entry, std::string *why) {
  std::istringstream words(content);
  std::string lanes, tiles, extra;
  if (!(words >> entry->id >> lanes >> tiles) || (words >> extra)) {
    *why = "expected '<kernel id> lanes=<n> tiles=<name=value,...>'";
    return false;
  }
  if (!lanes.starts_with("lanes=")) {
    *why = "the second word must be lanes=<n>, not '" + lanes + "'";
    return false;
  }
  const char *begin = lanes.data() + 6, *end = lanes.data() + lanes.size();
  const auto [ptr, ec] = std::from_chars(begin, end, entry->lanes);
  if (ec != std::errc() || ptr != end || entry->lanes < 1) {
    *why = "'" + lanes + "' is not a positive lane count";
    return false;
  }
  if (!tiles.starts_with("tiles=")) {
    *why = "the third word must be tiles=<name=value,...>, not '" + tiles + "'";
    return false;
  }
  entry->tiles = tiles.substr(6);
  CpuTiles probe{};
  return apply_tiles_text(entry->tiles, &probe, why);
}

}  // namespace

bool parse_tuning(const std::string &text, std::vector<TileOverride> *entries, std::string *error) {
  std::istringstream in(text);
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string content = content_of(line);
    if (content.empty()) continue;
    TileOverride entry;
    std::string why;
    if (!parse_line(content, &entry, &why)) {
      *error = "line " + std::to_string(number) + ": " + why;
      return false;
    }
    if (find_override(*entries, entry.id, entry.lanes) != nullptr) {
      *error = "line " + std::to_string(number) + ": a second entry for " + entry.id +
               " at lanes=" + std::to_string(entry.lanes);
      return false;
    }
    entries->push_back(entry);
  }
  return true;
}

bool read_tuning_file(const std::string &path, std::vector<TileOverride> *entries, std::string *error) {
  std::string text;
  if (!read_text_file(path, "tuning file '" + path + "'", max_tuning_file_bytes, &text, error)) return false;
  if (!parse_tuning(text, entries, error)) {
    *error = "tuning file '" + path + "', " + *error;
    return false;
  }
  return true;
}

const TileOverride *find_override(const std::vector<TileOverride> &entries, const std::string &id,
                                  int lanes) {
  for (const TileOverride &e : entries)
    if (e.id == id && e.lanes == lanes) return &e;
  return nullptr;
}

std::string merge_tuning(const std::string &text, const TileOverride &entry, const std::string &comment) {
  const std::string line = entry.id + " lanes=" + std::to_string(entry.lanes) + " tiles=" + entry.tiles +
                           (comment.empty() ? "" : "  # " + comment);
  std::istringstream in(text);
  std::string out;
  bool replaced = false;
  for (std::string existing; std::getline(in, existing);) {
    TileOverride old;
    std::string why;
    const std::string content = content_of(existing);
    if (!replaced && !content.empty() && parse_line(content, &old, &why) && old.id == entry.id &&
        old.lanes == entry.lanes) {
      out += line + "\n";
      replaced = true;
    } else {
      out += existing + "\n";
    }
  }
  if (!replaced) out += line + "\n";
  return out;
}

}  // namespace attnc
