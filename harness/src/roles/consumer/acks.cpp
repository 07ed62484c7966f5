#include "roles/consumer/acks.h"

#include "util/json_object.h"

namespace relab {

void StreamAcks::acknowledge(const std::string& id) {
    const RoleSettings& s = m_c.settings();
    if (s.stream.ack == StreamSpec::Ack::batch) {
        m_unacked.push_back(id);
        return;
    }
    m_c.ports().stream.xack(m_c.key(), s.stream.group, id);
    m_c.record(Op::ack, nlohmann::json::object(), id);
    if (m_in_claim_round) m_acked_this_round.insert(id);
}

void StreamAcks::flush_unacked() {
    const std::vector<std::string> ids = std::move(m_unacked);
    m_unacked.clear();
    m_c.ports().stream.xack_all(m_c.key(), m_c.settings().stream.group, ids);
    for (const auto& id : ids) m_c.record(Op::ack, json_object("batch", ids.size()), id);
}

void StreamAcks::begin_round() {
    m_acked_this_round.clear();  // a round a Redis error cut short left its own
    m_in_claim_round = true;
}

void StreamAcks::end_round() {
    m_in_claim_round = false;
    m_acked_this_round.clear();
}

}  // namespace relab
