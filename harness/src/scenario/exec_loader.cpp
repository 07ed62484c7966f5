#include "scenario/exec_loader.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace relab::scenario_json {

namespace {

// An environment variable's name as a shell takes it: what a program can read back.
bool env_name_ok(const std::string& name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::vector<std::string> read_argv(const Object& o, const std::string& key) {
    const Reader& r = o.reader();
    const json& v = o.at(key);
    if (!v.is_array() || v.empty()) r.expected(o.path(key), "a non-empty array of strings: the program and its arguments", v);
    return r.strings(v, o.path(key));
}

}  // namespace

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
    ExecSpec e;
    e.argv = read_argv(o, "exec");
    if (e.argv[0].empty()) r.expected(child(o.path("exec"), 0), "the program's name or path", o.at("exec")[0]);
    if (o.has("env")) {
        const json& env = o.at("env");
        if (!env.is_object()) r.expected(o.path("env"), "an object of environment variables (name: text)", env);
        for (const auto& [name, value] : env.items()) {
            if (!env_name_ok(name))
                r.fail(child(o.path("env"), name), "expected a variable name of letters, digits and _");
            if (name.rfind("RELAB_", 0) == 0)
                r.fail(child(o.path("env"), name), "RELAB_* variables are relab's own (docs/your-code.md): rename it");
            e.env[name] = r.string(value, child(o.path("env"), name), false);
        }
    }
    if (o.has("trace")) {
        if (!o.at("trace").is_boolean()) r.expected(o.path("trace"), "true or false", o.at("trace"));
        e.trace = o.at("trace").get<bool>();
    }
    e.dir = o.opt_string("dir", "");
    if (o.has("check")) e.check = read_argv(o, "check");
    e.install = o.opt_string("install", "");
    return e;
}

ExecSpec read_program(const Object& o) {
    if (!o.has("exec")) o.reader().fail(o.path("exec"), "required field is missing: the program and its arguments");
    return *read_exec(o);
}

void read_consumers(const Object& top, Scenario& s) {
    if (!top.has("consumers")) return;
    const json& v = top.at("consumers");
    if (!v.is_object()) {
        s.consumers = static_cast<int>(top.opt_int("consumers", s.consumers, 1, 64));
        return;
    }
    const Object o(top.reader(), v, top.path("consumers"), with_exec_fields({"count"}));
    s.consumers = static_cast<int>(o.opt_int("count", s.consumers, 1, 64));
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
