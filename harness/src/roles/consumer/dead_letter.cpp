#include "roles/consumer/dead_letter.h"

#include "util/check.h"
#include "util/json_object.h"

namespace relab {

bool DeadLetter::job_failed(const StreamEntry& entry, const Event& ev) {
    m_c.record(Op::job_fail,
               json_object("deliveries", entry.deliveries, "error", "the job failed (a poison entry: \"fails\": true)"),
               entry.id, &ev);
    const RoleSettings& s = m_c.settings();
    const int64_t cap = s.recovery.max_deliveries;
    if (cap <= 0 || entry.deliveries < cap) return false;
    const std::string dead_stream = s.stream.key + ":dead";
    Fields fields = entry.fields;
    fields.emplace_back("dead_from", entry.id);
    fields.emplace_back("deliveries", std::to_string(entry.deliveries));
    const std::vector<std::string> ids = m_c.ports().stream.xadd(dead_stream, {fields});
    RELAB_CHECK(ids.size() == 1, "one XADD to the dead-letter stream answers one entry ID");
    m_c.record(Op::dead_letter,
               json_object("deliveries", entry.deliveries, "dead_stream", dead_stream, "dead_entry", ids.front()),
               entry.id, &ev);
    m_acks.acknowledge(entry.id);
    return true;
}

}  // namespace relab
