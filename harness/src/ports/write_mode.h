// Every write strategy of a consumer (write.mode), defined once: its name in scenario files, role
// settings and the history's write records, the statement it runs and the version guard on it.
// The statement's text (roles/order_sql.h), the path a write takes through its statements
// (roles/order_write.h, which the PostgreSQL client and the simulator's table both follow), the
// loader's rules and what the accounting and the timeline make of a write all read the mode's row:
// a mode made of a known statement and guard is one enumerator and one row here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/enum_names.h"

namespace relab {

enum class WriteMode { plain, cas, upsert, insert_then_update, delta, cas_state };

// The statement a write runs.
enum class WriteStatement {
    // UPDATE tmp_orders SET status = s[, version = v] WHERE id = n[ AND version <guard> v]: affected
    // is the rows it changed. Only this one goes in the inbox's transaction or in a batch.
    update,
    // INSERT INTO tmp_orders ... ON CONFLICT (id) DO UPDATE SET status, version WHERE
    // tmp_orders.version <guard> EXCLUDED.version: the row is inserted, updated, or neither.
    upsert,
    // INSERT; on a unique violation (23505) an UPDATE of status and version without a guard (the
    // naive "create or update").
    insert_then_update,
};

// How the row's version must compare with the write's for the write to apply: the CAS.
enum class VersionGuard { none, below };

// What an UPDATE does to the row's amount (P4's labs: events that carry a change or a state).
enum class AmountWrite {
    none,  // the amount is not touched
    // SET amount = amount + delta: the event's change, applied as a change. A change that would take
    // the amount below 0 is refused (WHERE amount >= -delta): a removal of what is not there yet.
    add,
    set,  // SET amount = <the event's amount>: the state the event carries, applied whole
};

struct WriteModeInfo {
    WriteMode value;
    std::string_view name;  // as scenario files, role settings and write records spell it
    WriteStatement statement;
    bool sets_version;  // it writes the row's version, and its write record carries it
    VersionGuard guard;
    AmountWrite amount = AmountWrite::none;  // only an UPDATE statement touches the amount
};

inline constexpr std::array k_write_modes = {
    WriteModeInfo{WriteMode::plain, "plain", WriteStatement::update, false, VersionGuard::none, AmountWrite::none},
    WriteModeInfo{WriteMode::cas, "cas", WriteStatement::update, true, VersionGuard::below, AmountWrite::none},
    WriteModeInfo{WriteMode::upsert, "upsert", WriteStatement::upsert, true, VersionGuard::below, AmountWrite::none},
    WriteModeInfo{WriteMode::insert_then_update, "insert_then_update", WriteStatement::insert_then_update, true,
                  VersionGuard::none, AmountWrite::none},
    // P4's contrast: the event's change applied as a change (no version), and the state the event
    // carries applied by version, S5's CAS with the amount beside the status.
    WriteModeInfo{WriteMode::delta, "delta", WriteStatement::update, false, VersionGuard::none, AmountWrite::add},
    WriteModeInfo{WriteMode::cas_state, "cas_state", WriteStatement::update, true, VersionGuard::below,
                  AmountWrite::set},
};
constexpr const auto& enum_names(WriteMode) { return k_write_modes; }

// A row for every mode, in the enum's order: write_mode_info() indexes the table by the value.
inline constexpr bool write_modes_in_order() {
    for (size_t i = 0; i < k_write_modes.size(); ++i)
        if (static_cast<size_t>(k_write_modes[i].value) != i) return false;
    return true;
}
static_assert(write_modes_in_order(), "k_write_modes: one row per WriteMode, in the enum's order");

// Only an UPDATE's text and both stores' UPDATE carry the amount: an INSERT or upsert that wrote it
// would need statements of its own.
inline constexpr bool amount_only_on_updates() {
    for (const auto& m : k_write_modes)
        if (m.amount != AmountWrite::none && m.statement != WriteStatement::update) return false;
    return true;
}
static_assert(amount_only_on_updates(), "k_write_modes: an amount write needs the UPDATE statement");

constexpr const WriteModeInfo& write_mode_info(WriteMode m) { return k_write_modes[static_cast<size_t>(m)]; }
inline std::string to_string(WriteMode m) { return std::string(write_mode_info(m).name); }
inline std::optional<WriteMode> write_mode_named(std::string_view name) { return value_named(k_write_modes, name); }
inline std::vector<std::string> write_mode_names() { return names_in(k_write_modes); }

// A version-guarded UPDATE (cas): applied, it wrote over an older version only.
constexpr bool is_guarded_update(WriteMode m) {
    return write_mode_info(m).statement == WriteStatement::update && write_mode_info(m).guard != VersionGuard::none;
}

// Whether a row at `row_version` lets a write guarded by `g` on `version` through.
constexpr bool guard_holds(VersionGuard g, int64_t row_version, int64_t version) {
    switch (g) {
        case VersionGuard::none: return true;
        case VersionGuard::below: return row_version < version;
    }
    return false;
}

// The guard's comparison in SQL: the row's version on its left, the write's on its right.
constexpr std::string_view guard_operator(VersionGuard g) {
    switch (g) {
        case VersionGuard::none: return "";
        case VersionGuard::below: return "<";
    }
    return "";
}

// write.isolation: the transaction a consumer's job runs in. none: each statement its own
// autocommit transaction (the articles' consumers). The others: BEGIN ISOLATION LEVEL <level>, the
// row's version read (the snapshot), the job, the UPDATE, COMMIT, as application code that reads
// then writes does; under repeatable_read and serializable PostgreSQL refuses an UPDATE of a row
// another transaction changed after the snapshot (SQLSTATE 40001), which read_committed re-checks instead.
enum class WriteIsolation { none, read_committed, repeatable_read, serializable };

struct WriteIsolationInfo {
    WriteIsolation value;
    std::string_view name;  // as scenario files, role settings and records spell it
    std::string_view sql;   // after BEGIN ISOLATION LEVEL; empty for none
};

inline constexpr WriteIsolationInfo k_write_isolations[] = {
    {WriteIsolation::none, "none", ""},
    {WriteIsolation::read_committed, "read_committed", "READ COMMITTED"},
    {WriteIsolation::repeatable_read, "repeatable_read", "REPEATABLE READ"},
    {WriteIsolation::serializable, "serializable", "SERIALIZABLE"},
};

constexpr const auto& enum_names(WriteIsolation) { return k_write_isolations; }
inline std::string to_string(WriteIsolation i) { return std::string(name_in(k_write_isolations, i)); }
// The level as BEGIN ISOLATION LEVEL names it ("REPEATABLE READ"); empty for none.
inline std::string_view isolation_sql(WriteIsolation i) {
    for (const auto& row : k_write_isolations)
        if (row.value == i) return row.sql;
    return "";
}

// One UPDATE of tmp_orders, as both stores take it (the real one renders it as SQL, the simulated
// table applies it): SET status = <status>[, amount = amount + <amount> | <amount>][, version =
// <new_version>] WHERE id = <id>[ AND amount >= -<amount>][ AND version <guard> <guard_version>].
struct OrderUpdate {
    // A constructor, not an aggregate: an update that leaves the amount alone names only the first five.
    OrderUpdate() = default;
    OrderUpdate(int64_t id_, std::string status_, std::optional<int64_t> new_version_, VersionGuard guard_,
                int64_t guard_version_, AmountWrite amount_write_ = AmountWrite::none, int64_t amount_ = 0)
        : id(id_), status(std::move(status_)), new_version(new_version_), guard(guard_), guard_version(guard_version_),
          amount_write(amount_write_), amount(amount_) {}
    int64_t id = 0;
    std::string status;
    std::optional<int64_t> new_version;
    VersionGuard guard = VersionGuard::none;
    int64_t guard_version = 0;
    AmountWrite amount_write = AmountWrite::none;
    int64_t amount = 0;  // add: the change (negative: a removal); set: the new amount
};

// Whether a row holding `row_amount` lets the update's amount write through: an added change may not
// take the amount below 0.
constexpr bool amount_floor_holds(const OrderUpdate& u, int64_t row_amount) {
    return u.amount_write != AmountWrite::add || u.amount >= 0 || row_amount >= -u.amount;
}

// The row's amount after the update (which the floor let through).
constexpr int64_t amount_after(const OrderUpdate& u, int64_t row_amount) {
    switch (u.amount_write) {
        case AmountWrite::none: return row_amount;
        case AmountWrite::add: return row_amount + u.amount;
        case AmountWrite::set: return u.amount;
    }
    return row_amount;
}

}  // namespace relab
