#include "report/compare/report_dir.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "report/compare/lab_digest.h"
#include "report/lab_summary.h"
#include "report/reporter.h"
#include "report/compare/verdict_recheck.h"

namespace relab {

namespace {

// µs since the Unix epoch of "2026-11-29T20:52:59Z" (the second-precision started_at of reports
// written before started_at_us); 0 when the text is not that.
int64_t iso_utc_us(const std::string& text) {
    std::tm tm{};
    char zulu = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                    &tm.tm_min, &tm.tm_sec, &zulu) != 7 ||
        zulu != 'Z')
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return static_cast<int64_t>(timegm(&tm)) * 1'000'000;
}

int64_t run_started_us(const RunReport& run) {
    return run.started_at_us != 0 ? run.started_at_us : iso_utc_us(run.started_at);
}

// How new a saved result is: when it finished, then its place in the run. A report without
// finished_at_us counts as finished when its run started.
std::pair<int64_t, int> newness(const RunReport& run, const LabResult& lab) {
    return {lab.finished_at_us != 0 ? lab.finished_at_us : run_started_us(run), lab.sequence};
}

}  // namespace

RunReport merge_runs(const std::vector<RunReport>& runs) {
    RunReport merged;
    if (runs.empty()) return merged;
    // Latest = the greatest start; ties go to the later run.
    size_t latest = 0;
    for (size_t i = 1; i < runs.size(); ++i) {
        const auto a = std::make_pair(run_started_us(runs[i]), runs[i].started_at);
        const auto b = std::make_pair(run_started_us(runs[latest]), runs[latest].started_at);
        if (a >= b) latest = i;
    }
    merged.relab_commit = runs[latest].relab_commit;
    merged.seed = runs[latest].seed;
    merged.started_at = runs[latest].started_at;
    merged.started_at_us = runs[latest].started_at_us;
    merged.servers = runs[latest].servers;
    merged.shard = runs[latest].shard;
    merged.wall_s = runs[latest].wall_s;
    merged.inherent_s = runs[latest].inherent_s;
    merged.jobs = runs[latest].jobs;

    // A lab's real and simulated results are two results (lab_key): each keeps its newest, by
    // (finished_at_us, sequence), whatever the order of the files; an exact tie goes to the later run.
    std::map<std::string, size_t> position;                   // lab key → index in merged.labs
    std::map<std::string, std::pair<int64_t, int>> when;      // lab key → newness of the result kept
    for (const auto& run : runs)
        for (const auto& lab : run.labs) {
            const std::string key = lab_key(lab);
            const auto it = position.find(key);
            if (it == position.end()) {
                position[key] = merged.labs.size();
                when[key] = newness(run, lab);
                merged.labs.push_back(lab);
            } else if (newness(run, lab) >= when[key]) {
                merged.labs[it->second] = lab;
                when[key] = newness(run, lab);
            }
        }
    return merged;
}

SavedReports read_report_dir(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw std::runtime_error(dir + ": not a directory");
    std::vector<fs::path> paths;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.is_regular_file() && entry.path().extension() == ".json") paths.push_back(entry.path());
    }
    std::sort(paths.begin(), paths.end());
    std::vector<std::string> names;
    for (const auto& p : paths) names.push_back(p.string());
    return read_report_files(names);
}

SavedReports read_report_files(const std::vector<std::string>& names) {
    namespace fs = std::filesystem;
    SavedReports saved;
    std::vector<RunReport> runs;
    for (const auto& name : names) {
        const fs::path path(name);
        std::ifstream in(path, std::ios::binary);
        if (!in) throw std::runtime_error(path.string() + ": cannot open");
        std::ostringstream text;
        text << in.rdbuf();
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text.str());
        } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range: a number beyond a double
            throw std::runtime_error(path.string() + ": not JSON: " + e.what());
        }
        if (is_digest_json(j)) {
            saved.digests.push_back(path.string());
            continue;
        }
        if (!j.is_object() || !j.contains("labs") || !j.at("labs").is_array()) {
            // relab run's load, soak and comparison tables sit beside the labs' files; none is a run of its own.
            const bool table = j.is_object() && (j.contains("load_table") || j.contains("soak_table") ||
                                                 (j.contains("table") && j.contains("rows")));
            if (!table)
                saved.ignored.push_back(path.string());
            continue;
        }
        try {
            runs.push_back(run_from_json(j));
        } catch (const std::exception& e) {
            throw std::runtime_error(path.string() + ": " + e.what());
        }
        for (auto& lab : runs.back().labs) {
            const std::string note = recheck_verdict(lab);
            if (!note.empty())
                saved.notes.push_back(fmt::format("{}: lab {} ({}): {}", path.string(), lab.scenario.id, backend_of(lab), note));
        }
        saved.files.push_back(path.string());
    }
    saved.run = merge_runs(runs);
    return saved;
}

}  // namespace relab
