// `relab bench sim [LAB...] [--trials N]`: how many simulated trials one core runs per second,
// through the same SimBackend::run a `relab run --backend sim --trials N` uses (checker included,
// reporters excluded).
#include <chrono>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "run/sim_backend.h"
#include "scenario/scenario.h"

namespace relab {

void setup_bench(CLI::App& app, BenchOptions& o) {
    app.add_option("backend", o.backend, "what to benchmark: sim")->required()->check(CLI::IsMember({"sim"}));
    app.add_option("labs", o.labs, "scenario ids, part names or files; none = 08a-baseline and 08c-s4a");
    app.add_option("--scenarios", o.scenarios_dir, "folder of scenario files");
    app.add_option("--trials", o.trials, "trials per lab")->check(CLI::Range(1, 10'000'000));
}

int run_bench(const BenchOptions& o) {
    try {
        RunOptions ro;
        ro.scenarios_dir = o.scenarios_dir;
        ro.labs = o.labs.empty() ? std::vector<std::string>{"08a-baseline", "08c-s4a"} : o.labs;
        const std::vector<Scenario> labs = select_labs(ro);
        std::cout << fmt::format("relab bench sim: {} trials per lab, one core\n", o.trials);
        for (const auto& s : labs) {
            if (auto reason = sim_skip_reason(s)) {
                std::cout << fmt::format("  {:<16} skipped: {}\n", s.id, *reason);
                continue;
            }
            SimOptions so;
            so.trials = o.trials;
            SimBackend backend(so);
            const auto started = std::chrono::steady_clock::now();
            const LabResult lab = backend.run(s);
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            // Trial 1 runs twice (the determinism self-check), so it counts twice.
            const int simulated = lab.total + 1;
            std::cout << fmt::format("  {:<16} {:>8} trials in {:7.3f} s = {:>9.0f} trials/s   (wrong {}/{} = {:.1f}%)\n",
                                     s.id, simulated, seconds, simulated / seconds, lab.wrong, lab.total,
                                     100.0 * lab.wrong_rate);
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "relab bench: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace relab
