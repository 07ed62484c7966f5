#include "scenario/scenario.h"

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

std::string RecordMatch::describe() const {
    std::string text = op;
    const char* separator = " with ";
    for (const auto& [key, value] : fields.items()) {
        // Strings read better unquoted ("method=DELEX IFEQ"); anything else as JSON.
        text += separator + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
        separator = ", ";
    }
    return text;
}

std::string Expectation::describe() const {
    std::string text;
    switch (wrong) {
        case Count::all: text = "wrong = all"; break;
        case Count::none: text = "wrong = none"; break;
        case Count::at_least: text = fmt::format("wrong >= {}", n); break;
        case Count::at_most: text = fmt::format("wrong <= {}", n); break;
        case Count::exactly: text = fmt::format("wrong = {}", n); break;
    }
    const char* separator = "; every trial has ";
    for (const auto& m : every_trial_has) {
        text += separator + m.describe();
        separator = ", ";
    }
    if (!every_trial_stream.empty()) text += fmt::format("; stream order {}", fmt::join(every_trial_stream, " "));
    for (const auto& d : publish_delay_ms)
        text += fmt::format("; #{} delayed {}–{} ms", d.order, d.min_ms, d.max_ms);
    return text;
}

bool Expectation::holds(int wrong_trials, int trials) const {
    switch (wrong) {
        // "All of zero trials" would hold without anything having run.
        case Count::all: return trials > 0 && wrong_trials == trials;
        case Count::none: return wrong_trials == 0;
        case Count::at_least: return wrong_trials >= n;
        case Count::at_most: return wrong_trials <= n;
        case Count::exactly: return wrong_trials == n;
    }
    return false;
}

std::string to_string(WriteMode m) {
    switch (m) {
        case WriteMode::plain: return "plain";
        case WriteMode::cas: return "cas";
    }
    return "unknown";
}

std::string to_string(VersionSource v) {
    switch (v) {
        case VersionSource::event: return "event";
        case VersionSource::entry_id: return "entry_id";
    }
    return "unknown";
}

std::string to_string(DispatchOrder o) {
    switch (o) {
        case DispatchOrder::naive: return "naive";
        case DispatchOrder::per_key: return "per_key";
    }
    return "unknown";
}

}  // namespace relab
