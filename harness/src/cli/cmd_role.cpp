#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "process/role_process.h"

namespace relab {

void setup_role(CLI::App& app, RoleOptions& o) {
    auto* config = app.add_option("--config", o.config_path, "role config written by relab run");
    auto* spawner = app.add_flag("--spawner", o.spawner, "fork roles on relab run's requests (its socket on stdin)");
    config->excludes(spawner);
    app.callback([config, spawner] {
        if (config->count() == 0 && spawner->count() == 0) throw CLI::RequiredError("--config");
    });
}

int run_role(const RoleOptions& o) { return o.spawner ? serve_role_spawner() : run_role_process(o.config_path); }

}  // namespace relab
