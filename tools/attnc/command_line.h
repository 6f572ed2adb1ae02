// command_line.h: one attnc subcommand's arguments: `--opt VALUE`, `--opt=VALUE`, flags, -h/--help.
#pragma once

#include <string>
#include <vector>

namespace attnc::tool {

struct Argument {
  std::string option;  // as declared: "--spec", "-o", "--shared"
  std::string value;   // empty for a flag
};

struct CommandLine {
  std::vector<Argument> arguments;  // in the order given
  bool help = false;                // -h or --help was given (anywhere): print the usage, exit 0
  std::string error;                // not empty: a usage error naming the argument

  // Every value given to `option`, in order.
  std::vector<std::string> values(const std::string &option) const;
  // The value of an option that may be given once; false (with `error` set) when given twice.
  bool single(const std::string &option, std::string *value, std::string *error) const;
  bool has(const std::string &flag) const;
};

// Reads argv[first..argc). An option in `with_value` takes the next argument or `=VALUE` when it
// is a long option (--spec=TEXT); one in `flags` takes none. Anything else is a usage error.
CommandLine parse_command_line(int argc, char **argv, int first, const std::vector<std::string> &with_value,
                               const std::vector<std::string> &flags);

}  // namespace attnc::tool
