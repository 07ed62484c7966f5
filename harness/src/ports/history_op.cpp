#include "ports/history_op.h"

#include <algorithm>

namespace relab {

std::string to_string(Op op) { return std::string(op_info(op).name); }

std::optional<Op> op_named(std::string_view name) {
    for (const auto& row : k_ops)
        if (row.name == name) return row.op;
    return std::nullopt;
}

std::vector<std::string> op_names() {
    std::vector<std::string> out;
    for (const auto& row : k_ops) out.emplace_back(row.name);
    return out;
}

std::vector<std::string> op_fields(Op op) {
    std::vector<std::string> out;
    const std::string_view fields = op_info(op).fields;
    size_t at = 0;
    while (at < fields.size()) {
        const size_t end = std::min(fields.find(' ', at), fields.size());
        if (end > at) out.emplace_back(fields.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

bool op_carries(Op op, std::string_view field) {
    for (const auto& f : op_fields(op))
        if (f == field) return true;
    return false;
}

}  // namespace relab
