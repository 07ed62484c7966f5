#include "real/temp_dir.h"

#include "real/reaper.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace relab {

TempDir::TempDir(const std::string& prefix) {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw std::runtime_error("cannot create a temp dir under " + templ);
    m_path = buf.data();
    reaper::watch_dir(m_path);
}

TempDir::TempDir(TempDir&& other) noexcept : m_path(std::move(other.m_path)) { other.m_path.clear(); }

TempDir::~TempDir() { remove(); }

void TempDir::remove() noexcept {
    if (m_path.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
    reaper::forget_dir(m_path);
    m_path.clear();
}

}  // namespace relab
