// The command line as plain data, read from the same CLI11 app that `relab` parses with, so a
// check of the docs (the docs lint test) knows every subcommand and option without including
// CLI11 or keeping a list of its own.
#pragma once

#include <string>
#include <vector>

namespace relab {

struct CliOptionSpec {
    std::vector<std::string> names;  // "--out-dir", "-h", ...
    bool takes_value = false;        // a flag takes none
};

struct CliCommandSpec {
    std::string name;                       // "" for the app itself
    std::vector<CliOptionSpec> options;     // named options, --help included
    std::vector<std::string> positionals;   // their names, in order ("labs", "paths")
    const CliOptionSpec* option(const std::string& name) const;  // nullptr: no such option
};

// The app first (name ""), then each subcommand in the order `relab --help` lists them.
std::vector<CliCommandSpec> cli_spec();

}  // namespace relab
