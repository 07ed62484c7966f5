// An enum's names as one table: rows of {value, name} (a richer row may carry more), from which the
// scenario loader, the reports and the role settings all take the spelling, so that a value and its
// name are written down once.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace relab {

template <class E>
struct EnumName {
    E value;
    std::string_view name;
};

// The name of `v` in `table`; a value without a row is a table left incomplete, a bug.
template <class Table, class E>
std::string_view name_in(const Table& table, E v) {
    for (const auto& row : table)
        if (row.value == v) return row.name;
    throw std::logic_error("an enum value without a row in its name table");
}

template <class Table>
auto value_named(const Table& table, std::string_view name) -> std::optional<decltype(std::begin(table)->value)> {
    for (const auto& row : table)
        if (row.name == name) return row.value;
    return std::nullopt;
}

template <class Table>
std::vector<std::string> names_in(const Table& table) {
    std::vector<std::string> out;
    for (const auto& row : table) out.emplace_back(row.name);
    return out;
}

}  // namespace relab
