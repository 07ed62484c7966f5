// relab's command line: the subcommands, parsed with CLI11, run; returns the exit status.
// main.cpp only calls it, so the executable's own file compiles in a moment and CLI11 is compiled
// once, in the cli layer's unity batch.
#pragma once

namespace relab {

int cli_main(int argc, char** argv);

}  // namespace relab
