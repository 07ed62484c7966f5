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
#include <vector>

#include "util/enum_names.h"

namespace relab {

enum class WriteMode { plain, cas, upsert, insert_then_update };

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

struct WriteModeInfo {
    WriteMode value;
    std::string_view name;  // as scenario files, role settings and write records spell it
    WriteStatement statement;
    bool sets_version;  // it writes the row's version, and its write record carries it
    VersionGuard guard;
};

inline constexpr std::array k_write_modes = {
    WriteModeInfo{WriteMode::plain, "plain", WriteStatement::update, false, VersionGuard::none},
    WriteModeInfo{WriteMode::cas, "cas", WriteStatement::update, true, VersionGuard::below},
    WriteModeInfo{WriteMode::upsert, "upsert", WriteStatement::upsert, true, VersionGuard::below},
    WriteModeInfo{WriteMode::insert_then_update, "insert_then_update", WriteStatement::insert_then_update, true,
                  VersionGuard::none},
};

// A row for every mode, in the enum's order: write_mode_info() indexes the table by the value.
inline constexpr bool write_modes_in_order() {
    for (size_t i = 0; i < k_write_modes.size(); ++i)
        if (static_cast<size_t>(k_write_modes[i].value) != i) return false;
    return true;
}
static_assert(write_modes_in_order(), "k_write_modes: one row per WriteMode, in the enum's order");

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

// One UPDATE of tmp_orders, as both stores take it (the real one renders it as SQL, the simulated
// table applies it): SET status = <status>[, version = <new_version>] WHERE id = <id>[ AND version
// <guard> <guard_version>].
struct OrderUpdate {
    int64_t id = 0;
    std::string status;
    std::optional<int64_t> new_version;
    VersionGuard guard = VersionGuard::none;
    int64_t guard_version = 0;
};

}  // namespace relab
