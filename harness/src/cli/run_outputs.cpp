#include "cli/run_outputs.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "report/lab_summary.h"
#include "report/comparison_table.h"
#include "report/text/load_table.h"
#include "report/text/soak_table.h"

namespace relab {

int64_t peak_rss_kb() {
    struct rusage usage {};
    return ::getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_maxrss : 0;
}

TextOptions text_options(const RunOptions& o) {
    TextOptions t;
    if (o.lang == "en")
        t.lang = Lang::en;
    else if (o.lang == "vi")
        t.lang = Lang::vi;
    else
        throw UsageError("--lang takes en or vi, got '" + o.lang + "'");
    static const std::map<std::string, TimelineSelection> sel = {{"first", TimelineSelection::first_and_wrong},
                                                                  {"wrong", TimelineSelection::wrong},
                                                                  {"all", TimelineSelection::all},
                                                                  {"none", TimelineSelection::none}};
    const auto it = sel.find(o.timelines);
    if (it == sel.end()) throw UsageError("--timelines takes first, wrong, all or none, got '" + o.timelines + "'");
    t.timelines = it->second;
    return t;
}

namespace {

std::string errno_text(int err) { return err != 0 ? std::strerror(err) : "write failed"; }

// `write` fills the file; `option` names what asked for it ("--json", "--out-dir") in the message.
void write_file(const std::string& path, const char* option, const std::function<void(std::ostream&)>& write) {
    errno = 0;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
        throw OutputError(fmt::format("{}: cannot create {}: {}; give a path in a folder you can write", option, path,
                                      errno_text(errno)));
    write(out);
    out.close();  // flushes: a full disk or a device that refuses the bytes shows here
    if (!out)
        throw OutputError(fmt::format("{}: could not write all of {}: {}; free space or give another path", option,
                                      path, errno_text(errno)));
}

}  // namespace

// Before any server starts: --json's folder exists and can be written, --out-dir exists (it is
// created) and can be written. The writes themselves are checked again at the end.
void check_outputs_writable(const RunOptions& o) {
    namespace fs = std::filesystem;
    if (!o.json_path.empty()) {
        const fs::path p(o.json_path);
        const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
        std::error_code ec;
        if (!fs::is_directory(dir, ec))
            throw OutputError(fmt::format("--json {}: the folder {} does not exist; create it or give another path",
                                          o.json_path, dir.string()));
        if (fs::is_directory(p, ec))
            throw OutputError(fmt::format("--json {}: is a folder; give a file name", o.json_path));
        if (::access(dir.c_str(), W_OK) != 0)
            throw OutputError(fmt::format("--json {}: cannot write in {}: {}; give a path in a folder you can write",
                                          o.json_path, dir.string(), errno_text(errno)));
    }
    if (!o.out_dir.empty()) {
        std::error_code ec;
        fs::create_directories(o.out_dir, ec);
        if (ec || !fs::is_directory(o.out_dir))
            throw OutputError(fmt::format("--out-dir {}: cannot create it: {}; give a folder you can write", o.out_dir,
                                          ec ? ec.message() : "not a folder"));
        if (::access(o.out_dir.c_str(), W_OK) != 0)
            throw OutputError(fmt::format("--out-dir {}: cannot write in it: {}; give a folder you can write", o.out_dir,
                                          errno_text(errno)));
    }
}

namespace {

// Every output is tried; the first that could not be written is said after the summary.
class Outputs {
public:
    void write(const std::string& path, const char* option, const std::function<void(std::ostream&)>& fill) {
        try {
            write_file(path, option, fill);
        } catch (const OutputError& e) {
            errors.push_back(e.what());
        }
    }
    std::vector<std::string> errors;
};

// Each output's labs in <output>[.sim].txt and .json; the labs are moved into each part and back.
void write_out_dir(const RunOptions& o, RunReport& report, const std::vector<std::string>& lab_texts, bool sim,
                   Outputs& outputs) {
    auto json = make_json_reporter();
        std::vector<std::string> order;
        for (const auto& lab : report.labs)
            if (std::find(order.begin(), order.end(), lab.scenario.output) == order.end())
                order.push_back(lab.scenario.output);
        // The run's header without its labs; each output's labs are moved in for its JSON and back.
        std::vector<LabResult> labs = std::move(report.labs);
        report.labs.clear();
        const RunReport header = report;
        report.labs = std::move(labs);
        // A simulated run writes <output>.sim.txt/.json: it never replaces the real run's files in the
        // same folder, and `relab report` shows both.
        const std::string suffix = sim ? ".sim" : "";
        for (const auto& name : order) {
            RunReport part = header;
            std::vector<size_t> mine;
            std::string t;
            for (size_t i = 0; i < report.labs.size(); ++i)
                if (report.labs[i].scenario.output == name) {
                    mine.push_back(i);
                    t += lab_texts[i];
                    part.labs.push_back(std::move(report.labs[i]));
                }
            std::ostringstream j;
            json->report(part, j);
            for (size_t k = 0; k < mine.size(); ++k) report.labs[mine[k]] = std::move(part.labs[k]);
            outputs.write(o.out_dir + "/" + name + suffix + ".txt", "--out-dir", [&](std::ostream& out) { out << t; });
            outputs.write(o.out_dir + "/" + name + suffix + ".json", "--out-dir",
                         [&](std::ostream& out) { out << j.str(); });
        }
}

void write_load_table(const RunOptions& o, const RunReport& report, bool sim, Outputs& outputs) {
    // The load labs side by side, on stdout and beside the labs' files.
    if (const std::vector<LoadRow> rows = load_rows(report.labs); !rows.empty()) {
        std::ostringstream table;
        write_load_table(rows, table);
        if (!o.quiet) std::cout << '\n' << table.str();
        if (!o.out_dir.empty()) {
            const std::string suffix = sim ? ".sim" : "";
            outputs.write(o.out_dir + "/load-table" + suffix + ".txt", "--out-dir",
                         [&](std::ostream& out) { out << table.str(); });
            outputs.write(o.out_dir + "/load-table" + suffix + ".json", "--out-dir", [&](std::ostream& out) {
                out << nlohmann::json{{"load_table", load_table_json(rows)},
                                      {"relab_peak_rss_kb", peak_rss_kb()},
                                      {"relab_commit", report.relab_commit},
                                      {"started_at", report.started_at}}
                           .dump(2)
                    << '\n';
            });
        }
    }

}

void write_soak_table(const RunOptions& o, const RunReport& report, bool sim, Outputs& outputs) {
    // The soak labs' accounting, last on stdout, and beside the labs' files.
    if (const std::vector<SoakRow> rows = soak_rows(report.labs); !rows.empty()) {
        std::ostringstream table;
        write_soak_table(rows, table);
        if (!o.quiet) std::cout << '\n' << table.str();
        if (!o.out_dir.empty()) {
            const std::string suffix = sim ? ".sim" : "";
            outputs.write(o.out_dir + "/soak-table" + suffix + ".txt", "--out-dir",
                         [&](std::ostream& out) { out << table.str(); });
            outputs.write(o.out_dir + "/soak-table" + suffix + ".json", "--out-dir", [&](std::ostream& out) {
                out << nlohmann::json{{"soak_table", soak_table_json(rows)},
                                      {"relab_peak_rss_kb", peak_rss_kb()},
                                      {"wall_s", report.wall_s},
                                      {"relab_commit", report.relab_commit},
                                      {"started_at", report.started_at}}
                           .dump(2)
                    << '\n';
            });
        }
    }

}

// Labs that name the same comparison table, last on stdout and beside the labs' files.
void write_comparison_tables(const RunOptions& o, const RunReport& report, bool sim, Outputs& outputs) {
    for (const ComparisonTable& c : comparison_tables(report.labs)) {
        std::ostringstream table;
        write_comparison_table(c, table);
        if (!o.quiet) std::cout << '\n' << table.str();
        if (o.out_dir.empty()) continue;
        const std::string base = o.out_dir + "/comparison-" + c.name + (sim ? ".sim" : "");
        outputs.write(base + ".txt", "--out-dir", [&](std::ostream& out) { out << table.str(); });
        outputs.write(base + ".json", "--out-dir",
                      [&](std::ostream& out) { out << comparison_table_json(c).dump(2) << '\n'; });
    }
}

// The verdicts on stderr: the counts, each skipped or broken lab with its first reasons, the times.
void print_summary(const RunReport& report, const LabCounts& n) {
    // A skipped lab did not run: it neither holds nor breaks, and does not fail the run, but it
    // is said (the text report says why, junit.xml has a <skipped>).
    std::cerr << fmt::format("relab: {} lab(s), {} held, {} broken, {} skipped\n", n.labs, n.held, n.broken,
                             n.skipped);
    for (const auto& lab : report.labs) {
        if (lab.skipped)
            std::cerr << fmt::format("  SKIPPED {}: {}\n", lab.scenario.id, lab.skip_reason);
        else if (!lab.held) {
            // The first few reasons; the text and JSON reports have them all.
            constexpr size_t shown = 6;
            for (size_t k = 0; k < lab.failures.size() && k < shown; ++k)
                std::cerr << fmt::format("  BROKEN {}: {}\n", lab.scenario.id, lab.failures[k]);
            if (lab.failures.size() > shown)
                std::cerr << fmt::format("  BROKEN {}: … and {} more (see its report)\n", lab.scenario.id,
                                         lab.failures.size() - shown);
        }
    }
    // The labs' wall time beside what their trials and cases take by their own content: the
    // harness's cost around them at --jobs 1, what parallel runs save at --jobs N.
    const double ratio = report.inherent_s > 0 ? report.wall_s / report.inherent_s : 0;
    std::cerr << fmt::format("relab: wall time {:.1f} s, inherent time {:.1f} s (W/I = {:.2f}×), jobs {}; relab's peak "
                             "RSS {:.0f} MB\n",
                             report.wall_s, report.inherent_s, ratio, report.jobs, peak_rss_kb() / 1024.0);
}

}  // namespace

int report_run(const RunOptions& o, const TextOptions& topts, RunReport& report, bool sim) {
    // Each lab's text report is written once: stdout and the per-output files are made of them.
    std::vector<std::string> lab_texts;
    if (!o.quiet || !o.out_dir.empty())
        for (const auto& lab : report.labs) {
            std::ostringstream t;
            write_text_lab(lab, topts, t);
            lab_texts.push_back(t.str());
        }
    if (!o.quiet)
        for (const auto& t : lab_texts) std::cout << t;
    Outputs outputs;
    if (!o.json_path.empty())
        outputs.write(o.json_path, "--json", [&](std::ostream& out) { make_json_reporter()->report(report, out); });
    if (!o.out_dir.empty()) write_out_dir(o, report, lab_texts, sim, outputs);
    write_load_table(o, report, sim, outputs);
    write_soak_table(o, report, sim, outputs);
    write_comparison_tables(o, report, sim, outputs);
    const LabCounts n = count_labs(report);
    print_summary(report, n);
    if (!outputs.errors.empty()) {
        for (const auto& e : outputs.errors) std::cerr << "relab: " << e << "\n";
        std::cerr << "relab: the run's report was not written whole; exit 2 whatever the verdicts\n";
        return 2;
    }
    if (!report.shard.whole()) {
        // A shard's verdicts judge its share of the trials only: the merged run's are the lab's.
        std::cerr << fmt::format("relab: shard {}: these verdicts are of this shard's trials only; `relab merge` of "
                                 "all {} shards' reports gives the labs' verdicts\n",
                                 to_string(report.shard), report.shard.count);
        return 0;
    }
    return n.broken == 0 ? 0 : 1;
}

}  // namespace relab
