#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "ports/ports.h"

namespace relab {

// One JSON object per line, flushed per record so a crashed role leaves what it did.
class FileHistory : public History {
public:
    explicit FileHistory(const std::string& path);
    ~FileHistory() override;
    FileHistory(const FileHistory&) = delete;
    FileHistory& operator=(const FileHistory&) = delete;
    void record(HistoryRecord r) override;

private:
    std::FILE* m_file = nullptr;
};

class MemoryHistory : public History {
public:
    void record(HistoryRecord r) override { m_records.push_back(std::move(r)); }
    const std::vector<HistoryRecord>& records() const { return m_records; }
    std::vector<HistoryRecord> take() { return std::move(m_records); }

private:
    std::vector<HistoryRecord> m_records;
};

// Stamps a trial number on every record a role writes (roles record trial 0; the process knows
// which trial it serves).
class TrialHistory : public History {
public:
    TrialHistory(History& inner, int trial) : m_inner(inner), m_trial(trial) {}
    void record(HistoryRecord r) override {
        r.trial = m_trial;
        m_inner.record(std::move(r));
    }

private:
    History& m_inner;
    int m_trial;
};

// Reads a file written by FileHistory; a torn last line (a role killed mid-write) is ignored.
std::vector<HistoryRecord> read_history_file(const std::string& path);

}  // namespace relab
