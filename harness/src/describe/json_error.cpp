#include "describe/json_error.h"

#include <fmt/format.h>

namespace relab {

namespace {

std::string error_text(const std::string& file, const std::string& json_path, const std::string& reason) {
    // An empty path is the whole document (or the file itself): "at " would name nothing.
    if (json_path.empty()) return fmt::format("{}: {}", file, reason);
    return fmt::format("{}: at {}: {}", file, json_path, reason);
}

}  // namespace

ScenarioError::ScenarioError(std::string file, std::string json_path, std::string reason)
    : std::runtime_error(error_text(file, json_path, reason)),
      m_file(std::move(file)),
      m_json_path(std::move(json_path)),
      m_reason(std::move(reason)) {}

}  // namespace relab
