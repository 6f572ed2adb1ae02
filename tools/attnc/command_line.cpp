// command_line.cpp: splitting one subcommand's arguments into options, values and flags.
#include "command_line.h"

#include <algorithm>

namespace attnc::tool {
namespace {

bool contains(const std::vector<std::string> &names, const std::string &name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::vector<std::string> CommandLine::values(const std::string &option) const {
  std::vector<std::string> out;
  for (const Argument &a : arguments)
    if (a.option == option) out.push_back(a.value);
  return out;
}

bool CommandLine::single(const std::string &option, std::string *value, std::string *error) const {
  const std::vector<std::string> given = values(option);
  if (given.size() > 1) {
    *error = option + " given twice ('" + given[0] + "', then '" + given[1] + "')";
    return false;
  }
  if (!given.empty()) *value = given[0];
  return true;
}

bool CommandLine::has(const std::string &flag) const {
  return std::any_of(arguments.begin(), arguments.end(), [&](const Argument &a) { return a.option == flag; });
}

CommandLine parse_command_line(int argc, char **argv, int first, const std::vector<std::string> &with_value,
                               const std::vector<std::string> &flags) {
  CommandLine line;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      line.help = true;
      return line;
    }
    std::string option = arg, value;
    bool inline_value = false;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      option = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    if (contains(flags, option) && inline_value) {
      line.error = option + " takes no value (got '" + arg + "')";
    } else if (contains(flags, option)) {
      line.arguments.push_back({option, ""});
    } else if (contains(with_value, option) && !inline_value && i + 1 >= argc) {
      line.error = option + " needs a value";
    } else if (contains(with_value, option)) {
      line.arguments.push_back({option, inline_value ? value : argv[++i]});
    } else {
      line.error = "unknown argument '" + arg + "'";
    }
    if (!line.error.empty()) {
      // A request for help still wins over a mistake before it.
      for (int j = i + 1; j < argc; ++j)
        if (std::string(argv[j]) == "-h" || std::string(argv[j]) == "--help") line.help = true;
      return line;
    }
  }
  return line;
}

}  // namespace attnc::tool
