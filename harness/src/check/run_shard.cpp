#include "check/run_shard.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace relab {

std::optional<RunShard> parse_run_shard(const std::string& text) {
    const auto slash = text.find('/');
    if (slash == std::string::npos) return std::nullopt;
    RunShard s;
    const char* b = text.data();
    const char* e = b + text.size();
    auto k = std::from_chars(b, b + slash, s.index);
    auto n = std::from_chars(b + slash + 1, e, s.count);
    if (k.ec != std::errc() || k.ptr != b + slash || n.ec != std::errc() || n.ptr != e) return std::nullopt;
    if (s.count < 1 || s.index < 1 || s.index > s.count) return std::nullopt;
    return s;
}

std::string to_string(const RunShard& s) { return fmt::format("{}/{}", s.index, s.count); }

KeepPolicy::KeepPolicy(const Scenario& s, int planned_trials, const KeepRule& rule)
    : m_rule(rule),
      m_keep_all(planned_trials <= rule.keep_all_trials &&
                 static_cast<size_t>(std::max(planned_trials, 0)) * std::max<size_t>(s.flow_if() ? s.flow_if()->events.size() : 0, 1) <=
                     rule.keep_all_events) {}

bool KeepPolicy::keeps(int trial, bool wrong, size_t records) {
    if (records > m_rule.max_records) return false;  // a load trial: tens of MB, unreadable as text
    const bool keep = m_keep_all || trial <= m_rule.keep_first || (wrong && m_wrong_kept < m_rule.kept_wrong);
    if (keep && wrong) ++m_wrong_kept;
    return keep;
}

}  // namespace relab
