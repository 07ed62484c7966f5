// The roles' history files (one JSON line per record, history/file_history.h), read as they grow:
// while the trial runs, the complete lines written since the last look; at its end, every record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab {

class RoleHistoryFiles {
public:
    // A role's file, read from its start; it need not exist yet.
    void add(std::string path);
    // Appends the records of the complete lines written since the last call, file by file; a line
    // still being written waits for the next call, one that is not JSON is skipped.
    void poll(std::vector<HistoryRecord>& out);
    // The bytes of every file: a stat per file, no read.
    int64_t bytes() const;
    // Appends every record of every file (read_history_file), moved rather than copied.
    void read_all(std::vector<HistoryRecord>& out) const;

private:
    struct File {
        std::string path;
        size_t read_offset = 0;
    };
    std::vector<File> m_files;
};

}  // namespace relab
