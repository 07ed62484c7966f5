// `relab diff OLD NEW`: the labs whose outcome changed between two runs (lab_diff.h has the rules).
// OLD and NEW are each a folder of run reports (reports/out), a lab digest (reports/reference) or
// one file of either kind. `relab diff --save-reference OUT_DIR IN` writes IN's digest to
// OUT_DIR/reference.json. Exit status: 0 no regression, 1 a regression, 2 bad input.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "report/compare/lab_diff.h"

namespace relab {

void setup_diff(CLI::App& app, DiffOptions& o) {
    app.add_option("paths", o.paths,
                   "OLD NEW: folders of run reports (reports/out) or lab digests (reports/reference), or files of "
                   "either kind; with --save-reference: IN alone");
    app.add_option("--save-reference", o.save_reference,
                   "write IN's lab digest (verdicts, wrong counts, intervals, accounting totals; no histories) to "
                   "OUT_DIR/reference.json instead of comparing");
    app.add_flag("--strict", o.strict, "a lab in OLD and not in NEW is a regression too");
    app.add_flag("--json", o.json, "print the changes as JSON instead of lines");
}

namespace {

int save_reference(const DiffOptions& o) {
    namespace fs = std::filesystem;
    if (o.paths.size() != 1) {
        std::cerr << "relab diff: --save-reference OUT_DIR takes one input, e.g. relab diff --save-reference "
                     "reports/reference reports/out\n";
        return 2;
    }
    std::vector<std::string> notes;
    const RunDigest d = read_digest(o.paths.front(), notes);
    for (const auto& n : notes) std::cerr << "relab diff: " << n << "\n";
    if (d.labs.empty()) {
        std::cerr << "relab diff: " << o.paths.front() << " holds no lab; nothing to save\n";
        return 2;
    }
    fs::create_directories(o.save_reference);
    const fs::path target = fs::path(o.save_reference) / "reference.json";
    const std::string tmp = target.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << digest_text(d);
        out.flush();
        if (!out) throw std::runtime_error("cannot write " + tmp);
    }
    fs::rename(tmp, target);
    int held = 0, broken = 0, skipped = 0;
    for (const auto& l : d.labs) (l.verdict == "held" ? held : l.verdict == "broken" ? broken : skipped)++;
    std::cerr << fmt::format("relab diff: {} lab(s), {} held, {} broken, {} skipped → {} ({} KB)\n", d.labs.size(), held,
                             broken, skipped, target.string(), (fs::file_size(target) + 1023) / 1024);
    if (broken > 0)
        std::cerr << "relab diff: the reference holds broken labs; a later run is compared with them as they are\n";
    return 0;
}

}  // namespace

int run_diff(const DiffOptions& o) {
    try {
        if (!o.save_reference.empty()) return save_reference(o);
        if (o.paths.size() != 2) {
            std::cerr << "relab diff: give OLD and NEW, e.g. relab diff reports/reference reports/out\n";
            return 2;
        }
        std::vector<std::string> notes;
        const RunDigest old_run = read_digest(o.paths[0], notes);
        const RunDigest new_run = read_digest(o.paths[1], notes);
        for (const auto& n : notes) std::cerr << "relab diff: " << n << "\n";
        const DigestDiff d = diff_digests(old_run, new_run, o.strict);
        if (o.json)
            std::cout << diff_json(d).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        else
            std::cout << diff_text(d);
        return d.regressions > 0 ? 1 : 0;
    } catch (const std::exception& e) {
        std::cerr << "relab diff: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace relab
