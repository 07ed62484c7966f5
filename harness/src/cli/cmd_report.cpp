// `relab report [DIR]`: renders index.html, summary.md and junit.xml from the JSON run reports in
// DIR. It re-runs nothing, so it can be repeated, or run on reports copied from elsewhere; but it
// recomputes every verdict from the saved trials and scenario. Exit status: 0 when no lab shown is
// broken, 1 when one is (the files are written either way), 2 when the reports cannot be read or
// written.
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "report/lab_summary.h"
#include "report/compare/report_dir.h"
#include "report/reporter.h"

namespace relab {

namespace {

// Written beside the target and renamed over it, so a reader never sees half a report.
void write_report(const std::string& path, Reporter& reporter, const RunReport& run) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw std::runtime_error("cannot write " + tmp);
        reporter.report(run, out);
        out.flush();
        if (!out) throw std::runtime_error("cannot write " + tmp);
    }
    std::filesystem::rename(tmp, path);
}

}  // namespace

void setup_report(CLI::App& app, ReportOptions& o) {
    app.add_option("dir", o.dir, "folder of JSON run reports (relab run --out-dir); the reports are written there too")
        ->capture_default_str();
}

int run_report(const ReportOptions& o) {
    try {
        const SavedReports saved = read_report_dir(o.dir);
        for (const auto& f : saved.ignored) std::cerr << "relab report: ignored " << f << " (not a run report)\n";
        for (const auto& note : saved.notes) std::cerr << "relab report: " << note << "\n";
        if (saved.files.empty()) {
            std::cerr << "relab report: no run reports (*.json with \"labs\") in " << o.dir
                      << "; run labs first, e.g. ./run_labs.sh baseline\n";
            if (!saved.digests.empty())
                std::cerr << "relab report: " << saved.digests.front()
                          << " is a lab digest (no trials to render); compare it with a run: relab diff "
                          << o.dir << " reports/out\n";
            return 2;
        }
        const auto dir = std::filesystem::path(o.dir);
        write_report((dir / "index.html").string(), *make_html_reporter(), saved.run);
        write_report((dir / "summary.md").string(), *make_markdown_reporter(), saved.run);
        write_report((dir / "junit.xml").string(), *make_junit_reporter(), saved.run);
        const LabCounts n = count_labs(saved.run);
        std::cerr << fmt::format("relab report: {} lab(s) from {} file(s): {} held, {} broken, {} skipped → {}/index.html, "
                                 "summary.md, junit.xml\n",
                                 n.labs, saved.files.size(), n.held, n.broken, n.skipped, o.dir);
        if (n.broken > 0) {
            std::cerr << fmt::format("relab report: {} broken lab(s); summary.md lists why under \"Broken "
                                     "expectations\" (fix the lab or its expectation, then run it again)\n",
                                     n.broken);
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "relab report: " << e.what() << "\n";
        return 2;
    }
}

}  // namespace relab
