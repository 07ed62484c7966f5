// A JSON file relab cannot use (a scenario, or relab's own JSON read back): the file, the JSON
// Pointer of the offending value and the reason, so that the message says where to look and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace relab {

// what() reads "FILE: at /json/path: expected ..., got ...".
class ScenarioError : public std::runtime_error {
public:
    ScenarioError(std::string file, std::string json_path, std::string reason);
    const std::string& file() const { return m_file; }
    const std::string& json_path() const { return m_json_path; }
    const std::string& reason() const { return m_reason; }

private:
    std::string m_file, m_json_path, m_reason;
};

}  // namespace relab
