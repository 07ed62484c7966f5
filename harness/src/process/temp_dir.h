#pragma once

#include <string>

namespace relab {

// A directory under $TMPDIR (or /tmp) removed with everything in it when destroyed.
class TempDir {
public:
    explicit TempDir(const std::string& prefix = "relab-");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir(TempDir&& other) noexcept;
    const std::string& path() const { return m_path; }
    void remove() noexcept;  // idempotent

private:
    std::string m_path;
};

}  // namespace relab
