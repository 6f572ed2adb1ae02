// tune.h: `attnc tune`, which times tile candidates for one spec on this machine.
#pragma once

namespace attnc::tool {

// argv[2..]: the tune command's arguments. Returns the process exit code.
int run_tune(int argc, char **argv);

}  // namespace attnc::tool
