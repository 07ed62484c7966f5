#include "roles/order_sql.h"

#include <stdexcept>

#include <fmt/format.h>

namespace relab {

namespace {
// Statuses and event types come from scenario files; quote them as SQL literals.
std::string quoted(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'') out += '\'';
        out += c;
    }
    out += "'";
    return out;
}

// " AND version < 2", or nothing without a guard.
std::string guard_sql(const OrderUpdate& u, const std::string& version) {
    if (u.guard == VersionGuard::none) return {};
    return fmt::format(" AND version {} {}", guard_operator(u.guard), version);
}

// " AND amount >= 30" for a change that removes 30, or nothing.
std::string floor_sql(const OrderUpdate& u, const std::string& removed) {
    if (u.amount_write != AmountWrite::add || u.amount >= 0) return {};
    return " AND amount >= " + removed;
}

// ", amount = amount + 30", ", amount = amount - 30", ", amount = 30", or nothing; `value` is the
// change's size (add) or the amount (set) as the statement spells it.
std::string amount_sql(const OrderUpdate& u, const std::string& value) {
    switch (u.amount_write) {
        case AmountWrite::none: return {};
        case AmountWrite::add: return fmt::format(", amount = amount {} {}", u.amount < 0 ? '-' : '+', value);
        case AmountWrite::set: return ", amount = " + value;
    }
    return {};
}

// The number an amount write puts in its statement: the change's size, or the amount.
int64_t amount_value(const OrderUpdate& u) { return u.amount_write == AmountWrite::add && u.amount < 0 ? -u.amount : u.amount; }
}  // namespace

OrderUpdate order_update(const OrderWrite& w) {
    const WriteModeInfo& m = write_mode_info(w.mode);
    OrderUpdate u{w.order, w.status, std::nullopt, m.guard, w.version};
    if (m.sets_version) u.new_version = w.version;
    u.amount_write = m.amount;
    if (m.amount == AmountWrite::add) u.amount = w.delta;
    if (m.amount == AmountWrite::set) u.amount = w.amount;
    return u;
}

OrderUpdate order_fallback_update(const OrderWrite& w) { return {w.order, w.status, w.version, VersionGuard::none, 0}; }

std::string order_update_sql(const OrderUpdate& u) {
    const std::string version = u.new_version ? fmt::format(", version = {}", *u.new_version) : std::string{};
    const std::string amount = std::to_string(amount_value(u));
    return fmt::format("UPDATE tmp_orders SET status = {}{}{} WHERE id = {}{}{}", quoted(u.status), amount_sql(u, amount),
                       version, u.id, floor_sql(u, amount), guard_sql(u, std::to_string(u.guard_version)));
}

PreparedSql order_update_prepared(const OrderUpdate& u) {
    PreparedSql p{"", "", {u.status}};
    auto param = [&](int64_t value) {
        p.params.push_back(std::to_string(value));
        return fmt::format("${}", p.params.size());
    };
    const std::string amount = u.amount_write != AmountWrite::none ? param(amount_value(u)) : std::string{};
    const std::string version = u.new_version ? param(*u.new_version) : std::string{};
    const std::string id = param(u.id);
    // The guard compares with the version the write sets (cas): one parameter for both.
    std::string guard;
    if (u.guard != VersionGuard::none)
        guard = u.new_version && *u.new_version == u.guard_version ? version : param(u.guard_version);
    // One prepared statement per shape: the values are its parameters.
    // An added change's sign is in the statement's text (+ or -, and the floor only for a removal).
    const std::string amount_shape =
        u.amount_write == AmountWrite::none ? ""
        : u.amount_write == AmountWrite::set ? "_amount"
                                              : (u.amount < 0 ? "_removed" : "_added");
    p.name = fmt::format("relab_update{}{}{}", amount_shape, version.empty() ? "" : "_version",
                         guard.empty() ? "" : fmt::format("_guard{}{}", static_cast<int>(u.guard), guard == version ? "" : "_own"));
    p.definition = fmt::format("UPDATE tmp_orders SET status = $1{}{} WHERE id = {}{}{}", amount_sql(u, amount),
                               version.empty() ? "" : ", version = " + version, id, floor_sql(u, amount),
                               guard_sql(u, guard));
    return p;
}

std::string order_insert_sql(const OrderRow& row) {
    return fmt::format("INSERT INTO tmp_orders (id, status, version) VALUES ({}, {}, {})", row.id, quoted(row.status),
                       row.version);
}

std::string order_upsert_sql(const OrderRow& row, VersionGuard g) {
    return order_insert_sql(row) +
           fmt::format(" ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, version = EXCLUDED.version WHERE "
                       "tmp_orders.version {} EXCLUDED.version",
                       guard_operator(g));
}

std::string order_write_sql(const OrderWrite& w) {
    const WriteModeInfo& m = write_mode_info(w.mode);
    switch (m.statement) {
        case WriteStatement::update: return order_update_sql(order_update(w));
        case WriteStatement::upsert: return order_upsert_sql(OrderRow{w.order, w.status, w.version}, m.guard);
        case WriteStatement::insert_then_update: return order_insert_sql(OrderRow{w.order, w.status, w.version});
    }
    return {};
}

std::string batched_write_sql(const OrderWrite& w) {
    if (w.dedupe || write_mode_info(w.mode).statement != WriteStatement::update)
        throw std::logic_error("write_states: only UPDATEs without the inbox go in one batch");
    return order_write_sql(w);
}

std::string inbox_insert_sql(const OrderWrite& w) {
    return fmt::format("INSERT INTO tmp_inbox (aggregate_id, version) VALUES ({}, {}) ON CONFLICT DO NOTHING", w.order,
                       w.event_version);
}

std::string side_effect_sql(int64_t order, const std::string& event_type, int64_t version) {
    return fmt::format("INSERT INTO tmp_side_effects (order_id, event_type, version) VALUES ({}, {}, {}) RETURNING seq",
                       order, quoted(event_type), version);
}

std::string job_begin_sql(WriteIsolation level) {
    if (level == WriteIsolation::none) throw std::logic_error("job_begin_sql: no transaction without write.isolation");
    return fmt::format("BEGIN ISOLATION LEVEL {}", isolation_sql(level));
}

std::string snapshot_select_sql(int64_t order) { return fmt::format("SELECT version FROM tmp_orders WHERE id = {}", order); }

std::string job_transaction_sql(WriteIsolation level, int64_t order, const std::string& write) {
    return fmt::format("{}; {}; -- the job; {}; COMMIT", job_begin_sql(level), snapshot_select_sql(order), write);
}

}  // namespace relab
