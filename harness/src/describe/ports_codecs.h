// The ports' vocabularies as described fields take them: a history op by the name ports/history_op.h
// gives it, so a misspelt op in a scenario file fails where it stands instead of never matching.
#pragma once

#include "describe/describe.h"
#include "ports/history_op.h"

namespace relab::desc {

template <>
struct Codec<Op> {
    static Op read(const Reader& r, const json& v, const std::string& path, const Limits&, Read) {
        const std::optional<Op> op = v.is_string() ? op_named(v.get<std::string>()) : std::nullopt;
        if (!op) r.expected(path, "a history op, one of " + scenario_json::quoted_list(op_names()), v);
        return *op;
    }
    static json write(Op op, Write) { return to_string(op); }
    static void schema(ordered_json& p, const Limits&) { p["$ref"] = "#/$defs/historyOp"; }
    static constexpr bool has_default = false;
};

}  // namespace relab::desc
