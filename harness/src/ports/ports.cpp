#include "ports/ports.h"

namespace relab {

namespace {
[[noreturn]] void not_supported(const char* what) {
    throw std::logic_error(std::string(what) + " is not supported by this backend");
}

std::string known_ops_text() {
    std::string out;
    for (const auto& name : op_names()) out += (out.empty() ? "" : ", ") + name;
    return out;
}
}  // namespace

KvSetResult Kv::set(const std::string&, const std::string&, const KvSetOptions&) { not_supported("Kv::set"); }
std::optional<std::string> Kv::get(const std::string&) { not_supported("Kv::get"); }
int64_t Kv::del(const std::string&) { not_supported("Kv::del"); }
int64_t Kv::wait_replicas(int64_t, Millis) { not_supported("Kv::wait_replicas"); }

std::string Stream::xadd_idmp(const std::string&, const Fields&, const std::string&, const std::string&) {
    not_supported("Stream::xadd_idmp");
}
std::vector<StreamEntry> Stream::xreadgroup_pending(const std::string&, const std::string&, const std::string&, int,
                                                    const std::string&) {
    not_supported("Stream::xreadgroup_pending");
}
Stream::AutoClaimed Stream::xautoclaim(const std::string&, const std::string&, const std::string&, Millis,
                                       const std::string&, int) {
    not_supported("Stream::xautoclaim");
}

bool Stream::create_group(const std::string&, const std::string&, const std::string&) {
    not_supported("Stream::create_group");
}

void Stream::xack_all(const std::string& stream, const std::string& group, const std::vector<std::string>& ids) {
    for (const auto& id : ids) xack(stream, group, id);
}

bool Stream::group_drained(const std::string&, const std::string&) { not_supported("Stream::group_drained"); }

int64_t OrderStore::send_side_effect(int64_t, const std::string&, int64_t) {
    not_supported("OrderStore::send_side_effect");
}
std::vector<SideEffectRow> OrderStore::side_effects() { not_supported("OrderStore::side_effects"); }

void Outbox::begin_round() { not_supported("Outbox::begin_round"); }
void Outbox::commit_round() { not_supported("Outbox::commit_round"); }
std::optional<OutboxRow> Outbox::claim_next(ClaimScope, const std::vector<int64_t>&) {
    not_supported("Outbox::claim_next");
}

std::string to_string(KvError::Kind k) {
    switch (k) {
        case KvError::Kind::reply: return "reply";
        case KvError::Kind::unavailable: return "unavailable";
        case KvError::Kind::unexpected: return "unexpected";
    }
    return "?";
}

std::string StreamEntry::field(const std::string& name) const {
    for (const auto& [k, v] : fields)
        if (k == name) return v;
    return {};
}

nlohmann::json to_json(const HistoryRecord& r) {
    nlohmann::json j = {{"trial", r.trial}, {"t_us", r.t_ns / 1000}, {"actor", r.actor}, {"op", to_string(r.op)}};
    for (const auto& [k, v] : r.data.items()) j[k] = v;
    j["t_ns"] = r.t_ns;
    return j;
}

HistoryRecord history_record_from_json(const nlohmann::json& j) {
    // An absent or null field takes its default, as in the JSON report whose reader (json_reader.cpp)
    // has checked the fields' types and ranges before it calls this.
    auto field = [&](const char* key) -> const nlohmann::json* {
        const auto it = j.find(key);
        return it == j.end() || it->is_null() ? nullptr : &*it;
    };
    HistoryRecord r;
    if (const auto* v = field("trial")) r.trial = v->get<int>();
    if (const auto* v = field("t_ns"))
        r.t_ns = v->get<int64_t>();
    else if (const auto* us = field("t_us"))
        r.t_ns = us->get<int64_t>() * 1000;
    if (const auto* v = field("actor")) r.actor = v->get<std::string>();
    const auto* op_field = field("op");
    const std::string op = op_field ? op_field->get<std::string>() : std::string();
    const auto named = op_named(op);
    if (!named)
        throw std::invalid_argument("unknown history op \"" + op + "\" (known ops: " + known_ops_text() + ")");
    r.op = *named;
    for (const auto& [k, v] : j.items())
        if (k != "trial" && k != "t_us" && k != "t_ns" && k != "actor" && k != "op") r.data[k] = v;
    return r;
}

}  // namespace relab
