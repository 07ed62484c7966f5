#include "history/file_history.h"

#include <fstream>
#include <stdexcept>

namespace relab {

// Appends: a role restarted by a fault goes on writing its actor's file.
FileHistory::FileHistory(const std::string& path) : m_file(std::fopen(path.c_str(), "a")) {
    if (!m_file) throw std::runtime_error("cannot write history file " + path);
}

FileHistory::~FileHistory() {
    if (m_file) std::fclose(m_file);
}

void FileHistory::record(HistoryRecord r) {
    const std::string line = to_json(r).dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), m_file);
    std::fflush(m_file);
}

std::vector<HistoryRecord> read_history_file(const std::string& path) {
    std::vector<HistoryRecord> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded()) continue;
        out.push_back(history_record_from_json(j));
    }
    return out;
}

}  // namespace relab
