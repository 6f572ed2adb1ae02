// text_file.h: reads a small text file given on the command line, refusing what is not one.
#pragma once

#include <cstdint>
#include <string>

namespace attnc {

// The whole of a regular file of at most max_bytes into *text. False, with *error naming `what`
// ("spec file 'x'"), the path and why, for a directory, a fifo, a device or a socket (refused
// before it is opened, so a fifo with no writer cannot block and /dev/zero cannot grow without
// end), a file that cannot be read, or one larger than max_bytes (read up to one byte past it).
bool read_text_file(const std::string &path, const std::string &what, int64_t max_bytes, std::string *text,
                    std::string *error);

}  // namespace attnc
