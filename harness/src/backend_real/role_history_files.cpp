#include "backend_real/role_history_files.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "history/file_history.h"

namespace relab {

void RoleHistoryFiles::add(std::string path) { m_files.push_back(File{std::move(path)}); }

void RoleHistoryFiles::poll(std::vector<HistoryRecord>& out) {
    for (auto& f : m_files) {
        std::ifstream in(f.path, std::ios::binary);
        if (!in) continue;
        in.seekg(static_cast<std::streamoff>(f.read_offset));
        std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const size_t end = chunk.rfind('\n');
        if (end == std::string::npos) continue;
        f.read_offset += end + 1;
        std::istringstream lines(chunk.substr(0, end + 1));
        for (std::string line; std::getline(lines, line);) {
            auto j = nlohmann::json::parse(line, nullptr, false);
            if (!j.is_discarded()) out.push_back(history_record_from_json(j));
        }
    }
}

int64_t RoleHistoryFiles::bytes() const {
    int64_t total = 0;
    for (const auto& f : m_files) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(f.path, ec);
        if (!ec) total += static_cast<int64_t>(size);
    }
    return total;
}

void RoleHistoryFiles::read_all(std::vector<HistoryRecord>& out) const {
    for (const auto& f : m_files) {
        // Moved, not copied: a soak's consumer writes half a million records, and a copy of them
        // doubled relab's peak memory while the trial was read.
        auto part = read_history_file(f.path);
        if (out.empty()) {
            out = std::move(part);
            continue;
        }
        out.insert(out.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
}

}  // namespace relab
