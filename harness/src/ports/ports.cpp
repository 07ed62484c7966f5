#include "ports/ports.h"

#include "util/json_number.h"

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

std::vector<WriteResult> OrderStore::write_states(const std::vector<OrderWrite>&) {
    not_supported("OrderStore::write_states");
}
int64_t OrderStore::send_side_effect(int64_t, const std::string&, int64_t) {
    not_supported("OrderStore::send_side_effect");
}
std::vector<SideEffectRow> OrderStore::side_effects() { not_supported("OrderStore::side_effects"); }
std::optional<int64_t> OrderStore::begin_job(WriteIsolation, int64_t) { not_supported("OrderStore::begin_job"); }
void OrderStore::commit_job() { not_supported("OrderStore::commit_job"); }
void OrderStore::rollback_job() { not_supported("OrderStore::rollback_job"); }

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
    if (r.names && !r.names->entry.empty()) j["entry"] = r.names->entry;
    if (r.names && r.names->event) j["event"] = event_json(*r.names->event);
    j["t_ns"] = r.t_ns;
    return j;
}

nlohmann::json event_json(const Event& e) {
    nlohmann::json::object_t o;
    o.emplace("order", e.order);
    o.emplace("type", e.type);
    o.emplace("v", e.v);
    if (e.delta) o.emplace("delta", *e.delta);
    if (e.amount) o.emplace("amount", *e.amount);
    return nlohmann::json(std::move(o));
}

namespace {

const nlohmann::json* data_member(const HistoryRecord& r, std::string_view key) {
    if (!r.data.is_object()) return nullptr;
    const auto it = r.data.find(key);
    return it == r.data.end() ? nullptr : &*it;
}

int64_t int_member(const nlohmann::json& o, std::string_view key) {
    const auto it = o.find(key);
    return it == o.end() ? 0 : json_number_as<int64_t>(*it).value_or(0);
}

// `pattern` holds in `value`: objects key by key (recursively), anything else equal.
bool holds(const nlohmann::json& pattern, const nlohmann::json& value) {
    if (!pattern.is_object() || !value.is_object()) return pattern == value;
    for (const auto& [k, v] : pattern.items()) {
        const auto it = value.find(k);
        if (it == value.end() || !holds(v, *it)) return false;
    }
    return true;
}

// holds(pattern, json(text)) without building the JSON string when the pattern is text.
bool holds_text(const nlohmann::json& pattern, const std::string& text) {
    if (pattern.is_string()) return pattern.get_ref<const std::string&>() == text;
    return holds(pattern, nlohmann::json(text));
}

// holds(pattern, event_json(e)) without building the event's object: the expectations and fault
// triggers of a lab test every record they might match this way.
bool holds_event(const nlohmann::json& pattern, const Event& e) {
    if (!pattern.is_object()) return holds(pattern, event_json(e));
    for (const auto& [k, v] : pattern.items()) {
        if (k == "order") {
            if (!holds(v, nlohmann::json(e.order))) return false;
        } else if (k == "type") {
            if (!holds_text(v, e.type)) return false;
        } else if (k == "v") {
            if (!holds(v, nlohmann::json(e.v))) return false;
        } else if (k == "delta" || k == "amount") {
            const std::optional<int64_t>& own = k == "delta" ? e.delta : e.amount;
            if (!own || !holds(v, nlohmann::json(*own))) return false;
        } else {
            return false;  // an event has no other member
        }
    }
    return true;
}

}  // namespace

std::string_view record_entry(const HistoryRecord& r) {
    if (r.names && !r.names->entry.empty()) return r.names->entry;
    const nlohmann::json* e = data_member(r, "entry");
    return e && e->is_string() ? std::string_view(e->get_ref<const std::string&>()) : std::string_view();
}

bool has_entry(const HistoryRecord& r) { return (r.names && !r.names->entry.empty()) || data_member(r, "entry"); }

std::optional<EventView> record_event(const HistoryRecord& r) {
    if (r.names && r.names->event) {
        const Event& e = *r.names->event;
        return EventView{e.order, e.type, e.v};
    }
    const nlohmann::json* e = data_member(r, "event");
    if (!e || !e->is_object()) return std::nullopt;
    EventView out{int_member(*e, "order"), {}, int_member(*e, "v")};
    if (const auto t = e->find("type"); t != e->end() && t->is_string()) out.type = t->get_ref<const std::string&>();
    return out;
}

nlohmann::json record_field(const HistoryRecord& r, std::string_view key) {
    if (r.names && key == "entry" && !r.names->entry.empty()) return r.names->entry;
    if (r.names && key == "event" && r.names->event) return event_json(*r.names->event);
    const nlohmann::json* v = data_member(r, key);
    return v ? *v : nlohmann::json();
}

bool record_has_fields(const HistoryRecord& r, const nlohmann::json& pattern) {
    if (!pattern.is_object()) {
        HistoryRecord whole = r;
        fold_record_fields(whole);
        return holds(pattern, whole.data);
    }
    if (!r.data.is_object()) return false;
    for (const auto& [k, v] : pattern.items()) {
        if (r.names && k == "entry" && !r.names->entry.empty()) {
            if (!holds_text(v, r.names->entry)) return false;
        } else if (r.names && k == "event" && r.names->event) {
            if (!holds_event(v, *r.names->event)) return false;
        } else {
            const nlohmann::json* got = data_member(r, k);
            if (!got || !holds(v, *got)) return false;
        }
    }
    return true;
}

void fold_record_fields(HistoryRecord& r) {
    if (!r.names) return;
    if (!r.data.is_object()) r.data = nlohmann::json::object();
    if (!r.names->entry.empty()) r.data["entry"] = r.names->entry;
    if (r.names->event) r.data["event"] = event_json(*r.names->event);
    r.names.reset();
}

void fold_record_fields(std::vector<HistoryRecord>& history) {
    for (auto& r : history) fold_record_fields(r);
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
