// config.cpp: command-line parsing for the decoder example.
#include "config.h"

#include <charconv>
#include <cstring>

namespace llama {
namespace {

bool to_int(const char *text, int &value) {
  const char *end = text + std::strlen(text);
  const auto [ptr, error] = std::from_chars(text, end, value);
  return error == std::errc() && ptr == end;
}

bool to_list(const char *text, std::vector<int> &values) {
  values.clear();
  for (const char *p = text; *p != '\0';) {
    const char *comma = std::strchr(p, ',');
    const char *end = comma != nullptr ? comma : p + std::strlen(p);
    int value = 0;
    const auto [ptr, error] = std::from_chars(p, end, value);
    if (error != std::errc() || ptr != end) return false;
    values.push_back(value);
    p = comma != nullptr ? comma + 1 : end;
  }
  return !values.empty();
}

}  // namespace

std::string parse_args(int argc, char **argv, Config &config) {
  struct Option {
    const char *name;
    int *value;
    int minimum;
  };
  const Option options[] = {{"--layers", &config.layers, 1},  {"--ffn", &config.ffn, 1},
                            {"--vocab", &config.vocab, 2},    {"--tokens", &config.tokens, 1},
                            {"--chunk", &config.chunk, 1},    {"--pages", &config.pages, 0},
                            {"--threads", &config.threads, 0}};
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return "option " + flag + " needs a value";
    const char *value = argv[++i];
    if (flag == "--prompts") {
      if (!to_list(value, config.prompts))
        return "--prompts needs lengths like 37,100,13 (got '" + std::string(value) + "')";
      for (int p : config.prompts)
        if (p < 1) return "--prompts: every prompt needs at least 1 token";
      continue;
    }
    if (flag == "--attention") {
      config.attention = value;
      if (config.attention != "fused" && config.attention != "gathered")
        return "--attention needs fused or gathered (got '" + config.attention + "')";
      continue;
    }
    if (flag == "--kv") {
      config.kv.clear();
      for (const char *p = value; *p != '\0';) {
        const char *comma = std::strchr(p, ',');
        config.kv.emplace_back(p, comma != nullptr ? comma : p + std::strlen(p));
        p = comma != nullptr ? comma + 1 : p + std::strlen(p);
      }
      for (const std::string &kv : config.kv)
        if (kv != "f32" && kv != "int8" && kv != "fp8")
          return "--kv needs cache types from f32, int8 and fp8, like int8 or f32,int8,fp8 (got '" +
                 std::string(value) + "')";
      if (config.kv.empty()) return "--kv needs at least one cache type";
      continue;
    }
    if (flag == "--seed") {
      int seed = 0;
      if (!to_int(value, seed)) return "--seed needs an integer (got '" + std::string(value) + "')";
      config.seed = static_cast<unsigned>(seed);
      continue;
    }
    const Option *option = nullptr;
    for (const Option &o : options)
      if (flag == o.name) option = &o;
    if (option == nullptr) return "unknown option '" + flag + "'";
    if (!to_int(value, *option->value) || *option->value < option->minimum)
      return flag + " needs an integer >= " + std::to_string(option->minimum) + " (got '" + value + "')";
  }
  for (const std::string &kv : config.kv)
    if (kv != "f32" && config.attention == "gathered")
      return "--kv " + kv + " needs --attention fused (the gathered path keeps an f32 cache)";
  return {};
}

int pages_needed(const Config &config) {
  int pages = 0;
  for (int p : config.prompts) pages += (p + config.tokens + config.page_tokens - 1) / config.page_tokens;
  return pages;
}

std::string generation_plan(const Config &config) {
  const int steps = config.tokens - 1;
  if (steps == 0) return "1 token generated each, by the prefill (no decode step)";
  const std::string step_count = std::to_string(steps) + (steps == 1 ? " step" : " steps");
  return std::to_string(config.tokens) +
         " tokens generated each: the first by the prefill, then one per batched decode step (" + step_count +
         ": " + std::to_string(steps - 1) + " timed, the last checked against fp64 and not timed)";
}

}  // namespace llama
