#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "run/role_process.h"

namespace relab {

void setup_role(CLI::App& app, RoleOptions& o) {
    app.add_option("--config", o.config_path, "role config written by relab run")->required();
}

int run_role(const RoleOptions& o) { return run_role_process(o.config_path); }

}  // namespace relab
