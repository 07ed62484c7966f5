#include "scenario/loader/exec_loader.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace relab::scenario_json {

std::vector<std::string> with_exec_fields(std::vector<std::string> known) {
    for (const auto& f : exec_field_names()) known.push_back(f);
    return known;
}

std::optional<ExecSpec> read_exec(const Object& o) {
    const Reader& r = o.reader();
    if (!o.has("exec")) {
        for (const auto& f : exec_field_names())
            if (o.has(f))
                r.fail(o.path(f), "applies to a program: add \"exec\": [\"program\", \"argument\", ...] beside it");
        return std::nullopt;
    }
    // The program's keys of the role object, read by ExecSpec's description where they stand.
    json program = json::object();
    for (const auto& f : exec_field_names())
        if (o.has(f)) program[f] = o.at(f);
    return desc::read_file<ExecSpec>(r, program, o.path());
}

ExecSpec read_program(const Object& o) {
    if (!o.has("exec")) o.reader().fail(o.path("exec"), "required field is missing: the program and its arguments");
    return *read_exec(o);
}

void read_consumers(const Object& top, Scenario& s) {
    StreamLab& flow = s.flow();
    if (!top.has("consumers")) return;
    const json& v = top.at("consumers");
    if (!v.is_object()) {
        flow.consumers = static_cast<int>(top.opt_int("consumers", flow.consumers, 1, 64));
        return;
    }
    const Object o(top.reader(), v, top.path("consumers"), with_exec_fields({"count"}));
    flow.consumers = static_cast<int>(o.opt_int("count", flow.consumers, 1, 64));
    if (!o.has("exec"))
        top.reader().fail(o.path("exec"), "required field is missing (an object gives the consumers as a program; "
                                          "relab's own consumers are a count: \"consumers\": N)");
    s.exec.by_role["consumer"] = read_program(o);
}

void refuse_exec_conflicts(const Object& top, const Scenario& s) {
    if (!s.exec.of("consumer")) return;
    for (const char* own : {"buffer", "fanout", "shard"})
        if (top.has(own) && !top.at(own).is_null())
            top.reader().fail(top.path(own), fmt::format("\"{}\" is a strategy of relab's own consumer; a program given "
                                                         "by \"consumers\": {{\"exec\"}} does its own (drop one of them)",
                                                         own));
    if (top.has("write") && top.at("write").is_object() && top.at("write").contains("isolation"))
        top.reader().fail(child(top.path("write"), "isolation"),
                          "\"isolation\" is how relab's own consumer runs its job; a program given by \"consumers\": "
                          "{\"exec\"} runs its own transactions (drop one of them)");
}

}  // namespace relab::scenario_json
