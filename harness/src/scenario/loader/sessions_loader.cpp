// A sessions lab's cases: their sessions, each SQL step (a Redis step is idem_loader.h's), and the
// rows expected.
#include "scenario/loader/sessions_loader.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scenario/loader/idem_loader.h"

namespace relab::scenario_json {

namespace {

bool is_sqlstate(const std::string& s) {
    return s.size() == 5 &&
           std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z'); });
}

SessionStep read_step(const Object& o) {
    const Reader& r = o.reader();
    SessionStep step;
    step.at_ms = o.opt_int("at_ms", -1, 0);
    step.sql = o.req_string("sql");
    step.expect = o.maybe_string("expect");
    if (o.has("expect_sqlstate")) {
        const json& v = o.at("expect_sqlstate");
        if (!v.is_string() || !is_sqlstate(v.get<std::string>()))
            r.expected(o.path("expect_sqlstate"), "a 5-character SQLSTATE such as \"40001\"", v);
        step.expect_sqlstate = v.get<std::string>();
    }
    if (step.expect && step.expect_sqlstate)
        r.fail(o.path("expect_sqlstate"),
               "a step cannot both succeed with a command tag (\"expect\") and fail with a SQLSTATE");
    if (o.has("expect_wait_ms")) {
        Object wait(r, o.at("expect_wait_ms"), o.path("expect_wait_ms"), {"min", "max"});
        if (!wait.has("min") && !wait.has("max"))
            r.expected(wait.path(), "an object with \"min\" and/or \"max\"", o.at("expect_wait_ms"));
        step.expect_wait_min_ms = wait.maybe_int("min", 0);
        step.expect_wait_max_ms = wait.maybe_int("max", 0);
        if (step.expect_wait_min_ms && step.expect_wait_max_ms && *step.expect_wait_min_ms > *step.expect_wait_max_ms)
            r.fail(wait.path("max"), fmt::format("expected max >= min ({}), got {}", *step.expect_wait_min_ms,
                                                 *step.expect_wait_max_ms));
    }
    return step;
}

std::vector<std::vector<std::string>> read_rows(const Reader& r, const json& v, const std::string& path) {
    r.array(v, path, false);
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < v.size(); ++i) {
        const std::string row_path = child(path, i);
        r.array(v[i], row_path, false);
        std::vector<std::string> row;
        for (size_t j = 0; j < v[i].size(); ++j) {
            const json& cell = v[i][j];
            // psql prints numbers as their text, so 42 and "42" mean the same cell.
            if (cell.is_string())
                row.push_back(cell.get<std::string>());
            else if (cell.is_number())
                row.push_back(cell.dump());
            else
                r.expected(child(row_path, j), "a string or a number", cell);
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

SessionCase read_case(const Object& o) {
    const Reader& r = o.reader();
    SessionCase c;
    c.title = o.req_string("title");
    c.title_vi = o.opt_string("title_vi", c.title);
    if (o.has("setup_sql")) {
        c.setup_sql = r.strings(o.at("setup_sql"), o.path("setup_sql"));
        for (size_t i = 0; i < c.setup_sql.size(); ++i)
            if (c.setup_sql[i].empty())
                r.expected(child(o.path("setup_sql"), i), "a non-empty string", o.at("setup_sql")[i]);
    }
    const json& sessions = r.array(o.at("sessions"), o.path("sessions"), true);
    std::map<std::string, std::string> names;  // name -> path of its first occurrence
    for (size_t i = 0; i < sessions.size(); ++i) {
        Object so(r, sessions[i], child(o.path("sessions"), i), {"name", "client", "steps"});
        SessionSpec spec;
        spec.name = so.req_string("name");
        spec.client = so.opt_choice("client", spec.client, {"sql", "redis"});
        auto [it, inserted] = names.emplace(spec.name, so.path("name"));
        if (!inserted)
            r.fail(so.path("name"), fmt::format("duplicate session name \"{}\" (first at {})", spec.name, it->second));
        const json& steps = r.array(so.at("steps"), so.path("steps"), true);
        for (size_t j = 0; j < steps.size(); ++j)
            spec.steps.push_back(spec.client == "redis" ? read_redis_step(r, steps[j], child(so.path("steps"), j)) : read_step(Object(
                r, steps[j], child(so.path("steps"), j),
                {"at_ms", "sql", "expect", "expect_sqlstate", "expect_wait_ms"})));
        c.sessions.push_back(std::move(spec));
    }
    // A case of Redis sessions only has no table to show unless it names a query.
    const bool redis_only = std::all_of(c.sessions.begin(), c.sessions.end(),
                                        [](const SessionSpec& ss) { return ss.client == "redis"; });
    c.final_sql = o.opt_string("final_sql", redis_only && c.setup_sql.empty() ? "" : c.final_sql, !redis_only);
    if (o.has("expect_rows")) c.expect_rows = read_rows(r, o.at("expect_rows"), o.path("expect_rows"));
    if (o.has("exact_keys")) {
        const json& v = o.at("exact_keys");
        if (!v.is_boolean()) r.expected(o.path("exact_keys"), "true or false", v);
        c.exact_keys = v.get<bool>();
    }
    if (o.has("transcript_sessions")) {
        c.transcript_sessions = r.strings(o.at("transcript_sessions"), o.path("transcript_sessions"));
        std::vector<std::string> known;
        for (const auto& s : c.sessions) known.push_back(s.name);
        for (size_t i = 0; i < c.transcript_sessions.size(); ++i)
            if (!names.count(c.transcript_sessions[i]))
                r.expected(child(o.path("transcript_sessions"), i), "one of the sessions (" + quoted_list(known) + ")",
                           o.at("transcript_sessions")[i]);
    }
    return c;
}

}  // namespace

void read_sessions_lab(const Reader& r, const Object& top, Scenario& s) {
    SessionsLab& lab = s.sessions();  // checks the lab's kind is a sessions lab's
    const json& cases = r.array(top.at("cases"), top.path("cases"), true);
    for (size_t i = 0; i < cases.size(); ++i)
        lab.cases.push_back(read_case(Object(r, cases[i], child(top.path("cases"), i),
                                           {"title", "title_vi", "setup_sql", "sessions", "final_sql",
                                            "expect_rows", "transcript_sessions", "exact_keys"})));
}

}  // namespace relab::scenario_json
