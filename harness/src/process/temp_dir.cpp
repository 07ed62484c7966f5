#include "process/temp_dir.h"

#include "process/reaper.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <utility>

namespace relab {

// Registered with the reaper before it exists, as mkdtemp would name it: a kill between the mkdir
// and the registration would leave it behind.
TempDir::TempDir(const std::string& prefix) {
    const char* base = std::getenv("TMPDIR");
    const std::string stem = std::string(base && *base ? base : "/tmp") + "/" + prefix;
    static const char k_letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::random_device entropy;
    for (int attempt = 0; attempt < 100; ++attempt) {
        std::string path = stem;
        for (int i = 0; i < 6; ++i) path += k_letters[entropy() % (sizeof k_letters - 1)];
        reaper::watch_dir(path);
        if (::mkdir(path.c_str(), 0700) == 0) {
            m_path = std::move(path);
            return;
        }
        const int error = errno;
        reaper::forget_dir(path);
        if (error != EEXIST)
            throw std::runtime_error("cannot create a temp dir under " + stem + "XXXXXX: " + std::strerror(error));
    }
    throw std::runtime_error("cannot create a temp dir under " + stem + "XXXXXX: every name tried exists");
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
