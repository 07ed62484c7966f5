#include "report/report_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "report/lab_summary.h"
#include "report/reporter.h"

namespace relab {

RunReport merge_runs(const std::vector<RunReport>& runs) {
    RunReport merged;
    if (runs.empty()) return merged;
    // Latest = greatest started_at (ISO 8601 UTC sorts as text); ties go to the later run.
    size_t latest = 0;
    for (size_t i = 1; i < runs.size(); ++i)
        if (runs[i].started_at >= runs[latest].started_at) latest = i;
    merged.relab_commit = runs[latest].relab_commit;
    merged.seed = runs[latest].seed;
    merged.started_at = runs[latest].started_at;
    merged.servers = runs[latest].servers;

    // A lab's real and simulated results are two results (lab_key): each keeps its latest.
    std::map<std::string, size_t> position;    // lab key → index in merged.labs
    std::map<std::string, std::string> when;  // lab key → started_at of the run it came from
    for (const auto& run : runs)
        for (const auto& lab : run.labs) {
            const std::string key = lab_key(lab);
            const auto it = position.find(key);
            if (it == position.end()) {
                position[key] = merged.labs.size();
                when[key] = run.started_at;
                merged.labs.push_back(lab);
            } else if (run.started_at >= when[key]) {
                merged.labs[it->second] = lab;
                when[key] = run.started_at;
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

    SavedReports saved;
    std::vector<RunReport> runs;
    for (const auto& path : paths) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw std::runtime_error(path.string() + ": cannot open");
        std::ostringstream text;
        text << in.rdbuf();
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(text.str());
        } catch (const nlohmann::json::parse_error& e) {
            throw std::runtime_error(path.string() + ": not JSON: " + e.what());
        }
        if (!j.is_object() || !j.contains("labs") || !j.at("labs").is_array()) {
            saved.ignored.push_back(path.string());
            continue;
        }
        try {
            runs.push_back(run_from_json(j));
        } catch (const std::exception& e) {
            throw std::runtime_error(path.string() + ": " + e.what());
        }
        saved.files.push_back(path.string());
    }
    saved.run = merge_runs(runs);
    return saved;
}

}  // namespace relab
