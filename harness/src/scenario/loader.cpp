// Scenario files -> Scenario. Every check names the JSON Pointer of the offending value and says
// what was expected and what was found; unknown fields are rejected so a typo never silently
// falls back to a default.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "scenario/scenario.h"

namespace relab {

namespace {

using nlohmann::json;

constexpr int64_t k_int64_min = std::numeric_limits<int64_t>::min();
constexpr int64_t k_int64_max = std::numeric_limits<int64_t>::max();
constexpr int64_t k_int_max = std::numeric_limits<int>::max();

const std::vector<std::string> k_common_fields = {"id",   "part", "output", "title",  "title_vi",
                                                  "kind", "runs", "seed",   "expect", "documented"};
const std::vector<std::string> k_workload_fields = {"stream", "orders", "events", "job_cost_ms",
                                                    "consumers", "write", "lock"};
const std::vector<std::string> k_sessions_fields = {"cases"};

// RFC 6901 escaping, so a key holding '/' or '~' still names exactly one place.
std::string pointer_token(const std::string& key) {
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

std::string child(const std::string& path, const std::string& key) { return path + "/" + pointer_token(key); }
std::string child(const std::string& path, size_t index) { return path + "/" + std::to_string(index); }

// A value as shown after "got": its JSON text, cut short (on a UTF-8 boundary) when long.
std::string shown(const json& v) {
    std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
    constexpr size_t k_limit = 60;
    if (text.size() > k_limit) {
        size_t cut = k_limit;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
        text = text.substr(0, cut) + "...";
    }
    return text;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

std::string quoted_list(const std::vector<std::string>& items) {
    std::vector<std::string> q;
    for (const auto& s : items) q.push_back("\"" + s + "\"");
    return joined(q);
}

// What an integer in [lo, hi] is called. An upper bound that only guards the storage type
// (int or int64_t) is left out of the wording.
std::string integer_range_text(int64_t lo, int64_t hi) {
    if (hi == k_int_max) hi = k_int64_max;
    if (lo == k_int64_min && hi == k_int64_max) return "an integer";
    if (lo == 0 && hi == k_int64_max) return "a non-negative integer";
    if (lo == 1 && hi == k_int64_max) return "a positive integer";
    if (hi == k_int64_max) return fmt::format("an integer >= {}", lo);
    return fmt::format("an integer in {}..{}", lo, hi);
}

bool is_slug(const std::string& s) {
    auto ok = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (s.empty() || !ok(s[0])) return false;
    return std::all_of(s.begin(), s.end(), [&](char c) { return ok(c) || c == '-'; });
}

// Reads values of one file; every failure throws ScenarioError naming that file.
class Reader {
public:
    explicit Reader(std::string file) : m_file(std::move(file)) {}

    [[noreturn]] void fail(const std::string& path, const std::string& reason) const {
        throw ScenarioError(m_file, path, reason);
    }
    [[noreturn]] void expected(const std::string& path, const std::string& what, const json& got) const {
        fail(path, fmt::format("expected {}, got {}", what, shown(got)));
    }

    std::string string(const json& v, const std::string& path, bool non_empty = true) const {
        if (!v.is_string()) expected(path, non_empty ? "a non-empty string" : "a string", v);
        std::string s = v.get<std::string>();
        if (non_empty && s.empty()) expected(path, "a non-empty string", v);
        return s;
    }

    int64_t integer(const json& v, const std::string& path, int64_t lo, int64_t hi) const {
        const std::string what = integer_range_text(lo, hi);
        if (!v.is_number_integer()) expected(path, what, v);
        if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(k_int64_max)) expected(path, what, v);
        const int64_t x = v.get<int64_t>();
        if (x < lo) expected(path, what, v);
        if (x > hi) expected(path, hi == k_int_max ? fmt::format("{} no larger than {}", what, hi) : what, v);
        return x;
    }

    uint64_t unsigned_integer(const json& v, const std::string& path) const {
        if (v.is_number_unsigned()) return v.get<uint64_t>();
        if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
        expected(path, "a non-negative integer", v);
    }

    const json& array(const json& v, const std::string& path, bool non_empty) const {
        if (!v.is_array() || (non_empty && v.empty()))
            expected(path, non_empty ? "a non-empty array" : "an array", v);
        return v;
    }

    std::vector<std::string> strings(const json& v, const std::string& path) const {
        std::vector<std::string> out;
        array(v, path, false);
        for (size_t i = 0; i < v.size(); ++i) out.push_back(string(v[i], child(path, i), false));
        return out;
    }

    const std::string& file() const { return m_file; }

private:
    std::string m_file;
};

// One JSON object of the file, with the fields it may hold. Construction rejects a non-object and
// any field not in `known`.
class Object {
public:
    Object(const Reader& r, const json& v, std::string path, const std::vector<std::string>& known)
        : m_r(r), m_v(v), m_path(std::move(path)) {
        if (!v.is_object()) m_r.expected(m_path, "an object", v);
        for (const auto& [key, value] : v.items()) {
            if (std::find(known.begin(), known.end(), key) == known.end())
                m_r.fail(child(m_path, key), "unknown field; known fields are: " + joined(known));
        }
    }

    const Reader& reader() const { return m_r; }
    const std::string& path() const { return m_path; }
    std::string path(const std::string& key) const { return child(m_path, key); }
    bool has(const std::string& key) const { return m_v.contains(key); }

    const json& at(const std::string& key) const {
        if (!has(key)) m_r.fail(path(key), "required field is missing");
        return m_v.at(key);
    }

    std::string req_string(const std::string& key, bool non_empty = true) const {
        return m_r.string(at(key), path(key), non_empty);
    }
    std::string opt_string(const std::string& key, std::string fallback, bool non_empty = true) const {
        return has(key) ? req_string(key, non_empty) : std::move(fallback);
    }
    std::optional<std::string> maybe_string(const std::string& key, bool non_empty = true) const {
        if (!has(key)) return std::nullopt;
        return req_string(key, non_empty);
    }

    int64_t req_int(const std::string& key, int64_t lo, int64_t hi = k_int64_max) const {
        return m_r.integer(at(key), path(key), lo, hi);
    }
    int64_t opt_int(const std::string& key, int64_t fallback, int64_t lo, int64_t hi = k_int64_max) const {
        return has(key) ? req_int(key, lo, hi) : fallback;
    }
    std::optional<int64_t> maybe_int(const std::string& key, int64_t lo, int64_t hi = k_int64_max) const {
        if (!has(key)) return std::nullopt;
        return req_int(key, lo, hi);
    }

    // One of `choices`, as a string.
    std::string opt_choice(const std::string& key, const std::string& fallback,
                           const std::vector<std::string>& choices) const {
        if (!has(key)) return fallback;
        const json& v = at(key);
        if (v.is_string() && std::find(choices.begin(), choices.end(), v.get<std::string>()) != choices.end())
            return v.get<std::string>();
        m_r.expected(path(key), "one of " + quoted_list(choices), v);
    }

private:
    const Reader& m_r;
    const json& m_v;
    std::string m_path;
};

StreamSpec read_stream(const Object& o) {
    StreamSpec s;
    s.key = o.opt_string("key", s.key);
    s.group = o.opt_string("group", s.group);
    s.read_count = static_cast<int>(o.opt_int("read_count", s.read_count, 1, k_int_max));
    s.block_ms = o.opt_int("block_ms", s.block_ms, 1);
    return s;
}

std::vector<OrderSpec> read_orders(const Reader& r, const json& v, const std::string& path) {
    r.array(v, path, true);
    std::vector<OrderSpec> orders;
    std::map<int64_t, std::string> seen;  // id -> path of its first occurrence
    for (size_t i = 0; i < v.size(); ++i) {
        Object o(r, v[i], child(path, i), {"id", "initial_status", "initial_version", "expected_final"});
        OrderSpec spec;
        spec.id = o.req_int("id", 0);
        spec.initial_status = o.opt_string("initial_status", spec.initial_status);
        spec.initial_version = o.opt_int("initial_version", spec.initial_version, 0);
        spec.expected_final = o.opt_string("expected_final", spec.expected_final);
        auto [it, inserted] = seen.emplace(spec.id, o.path("id"));
        if (!inserted) r.fail(o.path("id"), fmt::format("duplicate order id {} (first at {})", spec.id, it->second));
        orders.push_back(spec);
    }
    return orders;
}

std::vector<EventSpec> read_events(const Reader& r, const json& v, const std::string& path,
                                   const std::vector<OrderSpec>& orders) {
    r.array(v, path, true);
    std::vector<std::string> order_ids;
    for (const auto& order : orders) order_ids.push_back(std::to_string(order.id));
    std::vector<EventSpec> events;
    for (size_t i = 0; i < v.size(); ++i) {
        Object o(r, v[i], child(path, i), {"order", "type", "version", "at_ms"});
        EventSpec e;
        e.order = o.req_int("order", k_int64_min);
        const bool known_order =
            std::any_of(orders.begin(), orders.end(), [&](const OrderSpec& s) { return s.id == e.order; });
        if (!known_order)
            r.fail(o.path("order"),
                   fmt::format("expected one of the orders' ids ({}), got {}", joined(order_ids), e.order));
        e.type = o.req_string("type");
        e.version = o.req_int("version", 0);
        e.at_ms = o.opt_int("at_ms", 0, 0);
        events.push_back(e);
    }
    return events;
}

std::map<std::string, int64_t> read_job_cost(const Reader& r, const json& v, const std::string& path,
                                             const std::vector<EventSpec>& events) {
    if (!v.is_object()) r.expected(path, "an object mapping event type to milliseconds", v);
    std::vector<std::string> types;
    for (const auto& e : events)
        if (std::find(types.begin(), types.end(), e.type) == types.end()) types.push_back(e.type);
    std::map<std::string, int64_t> costs;
    for (const auto& [type, cost] : v.items()) {
        // A cost for a type no event has would silently cost nothing: most likely a typo.
        if (std::find(types.begin(), types.end(), type) == types.end())
            r.fail(child(path, type), "no event has this type; event types are: " + quoted_list(types));
        costs[type] = r.integer(cost, child(path, type), 0, k_int64_max);
    }
    return costs;
}

WriteSpec read_write(const Object& o) {
    WriteSpec w;
    w.mode = o.opt_choice("mode", "plain", {"plain", "cas"}) == "cas" ? WriteMode::cas : WriteMode::plain;
    w.version_source = o.opt_choice("version_source", "event", {"event", "entry_id"}) == "entry_id"
                           ? VersionSource::entry_id
                           : VersionSource::event;
    if (w.version_source == VersionSource::entry_id && w.mode != WriteMode::cas)
        o.reader().fail(o.path("version_source"),
                        "\"entry_id\" is a CAS version and requires \"mode\": \"cas\", got mode \"" +
                            to_string(w.mode) + "\"");
    return w;
}

LockSpec read_lock(const Object& o) {
    const Reader& r = o.reader();
    LockSpec lock;
    lock.enabled = true;
    lock.key = o.opt_string("key", lock.key);
    lock.ttl_ms = o.opt_int("ttl_ms", lock.ttl_ms, 1);
    lock.retry_ms = o.opt_int("retry_ms", lock.retry_ms, 1);
    if (o.has("skew_ms")) {
        const json& skew = o.at("skew_ms");
        const std::string path = o.path("skew_ms");
        if (!skew.is_array() || skew.size() != 2) r.expected(path, "[min, max] in milliseconds", skew);
        lock.skew_min_ms = r.integer(skew[0], child(path, 0), 0, k_int64_max);
        lock.skew_max_ms = r.integer(skew[1], child(path, 1), 0, k_int64_max);
        if (lock.skew_min_ms > lock.skew_max_ms) r.expected(path, "[min, max] with min <= max", skew);
    }
    return lock;
}

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
        Object so(r, sessions[i], child(o.path("sessions"), i), {"name", "steps"});
        SessionSpec spec;
        spec.name = so.req_string("name");
        auto [it, inserted] = names.emplace(spec.name, so.path("name"));
        if (!inserted)
            r.fail(so.path("name"), fmt::format("duplicate session name \"{}\" (first at {})", spec.name, it->second));
        const json& steps = r.array(so.at("steps"), so.path("steps"), true);
        for (size_t j = 0; j < steps.size(); ++j)
            spec.steps.push_back(read_step(Object(
                r, steps[j], child(so.path("steps"), j),
                {"at_ms", "sql", "expect", "expect_sqlstate", "expect_wait_ms"})));
        c.sessions.push_back(std::move(spec));
    }
    c.final_sql = o.opt_string("final_sql", c.final_sql);
    if (o.has("expect_rows")) c.expect_rows = read_rows(r, o.at("expect_rows"), o.path("expect_rows"));
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

RecordMatch read_match(const Object& o) {
    RecordMatch m;
    m.op = o.req_string("op");
    if (o.has("fields")) {
        const json& fields = o.at("fields");
        if (!fields.is_object()) o.reader().expected(o.path("fields"), "an object", fields);
        m.fields = fields;
    }
    return m;
}

// `trials` is how many trials (workload) or cases (sessions) the count is over.
Expectation read_expect(const Object& o, ScenarioKind kind, int trials, const std::string& trials_name) {
    const Reader& r = o.reader();
    Expectation e;
    const json& wrong = o.at("wrong");
    const std::string wrong_path = o.path("wrong");
    if (wrong.is_string() && wrong.get<std::string>() == "all") {
        e.wrong = Expectation::Count::all;
    } else if (wrong.is_string() && wrong.get<std::string>() == "none") {
        e.wrong = Expectation::Count::none;
    } else if (wrong.is_object()) {
        Object count(r, wrong, wrong_path, {"at_least", "at_most", "exactly"});
        if (wrong.size() != 1)
            r.expected(wrong_path, "exactly one of \"at_least\", \"at_most\", \"exactly\"", wrong);
        const std::string key = wrong.begin().key();
        e.wrong = key == "at_least" ? Expectation::Count::at_least
                  : key == "at_most" ? Expectation::Count::at_most
                                     : Expectation::Count::exactly;
        e.n = static_cast<int>(count.req_int(key, 0, k_int_max));
        // A count above the number of trials can never be met: the file is wrong, not the lab.
        if ((e.wrong == Expectation::Count::at_least || e.wrong == Expectation::Count::exactly) && e.n > trials)
            r.fail(count.path(key), fmt::format("expected at most {} (the lab has {} {}), got {}", trials, trials,
                                                trials_name, e.n));
    } else {
        r.expected(wrong_path, "\"all\", \"none\" or {\"at_least\"|\"at_most\"|\"exactly\": N}", wrong);
    }
    if (o.has("every_trial_has")) {
        if (kind != ScenarioKind::workload)
            r.fail(o.path("every_trial_has"), "applies only to kind \"workload\" (sessions have no trial history)");
        const json& list = r.array(o.at("every_trial_has"), o.path("every_trial_has"), false);
        for (size_t i = 0; i < list.size(); ++i)
            e.every_trial_has.push_back(read_match(Object(r, list[i], child(o.path("every_trial_has"), i),
                                                          {"op", "fields"})));
    }
    return e;
}

Documented read_documented(const Object& o) {
    Documented d;
    d.text = o.opt_string("text", "", false);
    d.text_vi = o.opt_string("text_vi", "", false);
    if (auto wrong = o.maybe_int("wrong", 0, k_int_max)) d.wrong = static_cast<int>(*wrong);
    if (auto of = o.maybe_int("of", 1, k_int_max)) d.of = static_cast<int>(*of);
    if (d.wrong && d.of && *d.wrong > *d.of)
        o.reader().fail(o.path("wrong"), fmt::format("expected at most \"of\" ({}), got {}", *d.of, *d.wrong));
    return d;
}

std::string slug_field(const Object& o, const std::string& key, const std::string& fallback) {
    if (!o.has(key)) return fallback;
    std::string s = o.req_string(key);
    if (!is_slug(s)) o.reader().expected(o.path(key), "lower-case letters, digits and '-' ([a-z0-9][a-z0-9-]*)", o.at(key));
    return s;
}

Scenario read_scenario(const Reader& r, const json& doc) {
    if (!doc.is_object()) r.expected("", "a JSON object at the top level", doc);
    std::vector<std::string> all_fields = k_common_fields;
    all_fields.insert(all_fields.end(), k_workload_fields.begin(), k_workload_fields.end());
    all_fields.insert(all_fields.end(), k_sessions_fields.begin(), k_sessions_fields.end());
    Object top(r, doc, "", all_fields);

    Scenario s;
    if (!top.has("id")) r.fail("/id", "required field is missing");
    s.id = slug_field(top, "id", "");
    s.part = slug_field(top, "part", s.id);
    s.output = slug_field(top, "output", s.id);
    s.title = top.req_string("title");
    s.title_vi = top.opt_string("title_vi", s.title);
    const json& kind = top.at("kind");
    if (kind == "workload")
        s.kind = ScenarioKind::workload;
    else if (kind == "sessions")
        s.kind = ScenarioKind::sessions;
    else
        r.expected(top.path("kind"), "\"workload\" or \"sessions\"", kind);
    s.runs = static_cast<int>(top.opt_int("runs", s.runs, 1, 100000));
    if (top.has("seed")) s.seed = r.unsigned_integer(top.at("seed"), top.path("seed"));

    // A field of the other kind would be ignored; say so instead.
    const auto& foreign = s.kind == ScenarioKind::workload ? k_sessions_fields : k_workload_fields;
    const char* own_kind = s.kind == ScenarioKind::workload ? "workload" : "sessions";
    const char* other_kind = s.kind == ScenarioKind::workload ? "sessions" : "workload";
    for (const auto& key : foreign)
        if (top.has(key))
            r.fail(top.path(key), fmt::format("field applies only to kind \"{}\"; this scenario is kind \"{}\"",
                                              other_kind, own_kind));

    int total = 0;
    std::string total_name;
    if (s.kind == ScenarioKind::workload) {
        if (top.has("stream"))
            s.stream = read_stream(Object(r, top.at("stream"), top.path("stream"),
                                          {"key", "group", "read_count", "block_ms"}));
        s.orders = read_orders(r, top.at("orders"), top.path("orders"));
        s.events = read_events(r, top.at("events"), top.path("events"), s.orders);
        if (top.has("job_cost_ms")) s.job_cost_ms = read_job_cost(r, top.at("job_cost_ms"), top.path("job_cost_ms"), s.events);
        s.consumers = static_cast<int>(top.opt_int("consumers", s.consumers, 1, 64));
        if (top.has("write"))
            s.write = read_write(Object(r, top.at("write"), top.path("write"), {"mode", "version_source"}));
        if (top.has("lock") && !top.at("lock").is_null())
            s.lock = read_lock(Object(r, top.at("lock"), top.path("lock"), {"key", "ttl_ms", "retry_ms", "skew_ms"}));
        total = s.runs;
        total_name = "runs";
    } else {
        const json& cases = r.array(top.at("cases"), top.path("cases"), true);
        for (size_t i = 0; i < cases.size(); ++i)
            s.cases.push_back(read_case(Object(r, cases[i], child(top.path("cases"), i),
                                               {"title", "title_vi", "setup_sql", "sessions", "final_sql",
                                                "expect_rows", "transcript_sessions"})));
        total = static_cast<int>(s.cases.size());
        total_name = "cases";
    }

    s.expect = read_expect(Object(r, top.at("expect"), top.path("expect"), {"wrong", "every_trial_has"}), s.kind,
                           total, total_name);
    if (top.has("documented"))
        s.documented = read_documented(
            Object(r, top.at("documented"), top.path("documented"), {"text", "text_vi", "wrong", "of"}));
    return s;
}

// "line L, column C" of the 1-based byte offset the parser reports (1-based line and column).
std::string text_position(const std::string& text, size_t byte) {
    const size_t offset = std::min(byte == 0 ? 0 : byte - 1, text.size());
    const auto end = text.begin() + static_cast<std::ptrdiff_t>(offset);
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), end, '\n'));
    const size_t newline = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
    const size_t line_start = newline == std::string::npos ? 0 : newline + 1;
    return fmt::format("line {}, column {}", line, offset - line_start + 1);
}

// The parser's own reason, without its exception id and its (newline-blind) position prefix.
std::string parser_reason(const json::parse_error& e) {
    std::string what = e.what();
    const size_t at = what.find("parse error");
    if (at != std::string::npos) {
        const size_t colon = what.find(": ", at);
        if (colon != std::string::npos) return what.substr(colon + 2);
    }
    const size_t bracket = what.find("] ");
    return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

}  // namespace

Scenario parse_scenario(const std::string& text, const std::string& file_for_errors) {
    json doc;
    try {
        doc = json::parse(text, nullptr, true, /*ignore_comments=*/true);
    } catch (const json::parse_error& e) {
        throw ScenarioError(file_for_errors, text_position(text, e.byte), parser_reason(e));
    }
    Scenario s = read_scenario(Reader(file_for_errors), doc);
    s.file = file_for_errors;
    s.source = std::move(doc);
    return s;
}

Scenario load_scenario(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ScenarioError(path, "", fmt::format("cannot open file: {}", std::strerror(errno)));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw ScenarioError(path, "", "cannot read file");
    return parse_scenario(text.str(), path);
}

std::vector<Scenario> load_scenario_dir(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw ScenarioError(dir, "", "not a directory");
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    std::vector<Scenario> scenarios;
    std::map<std::string, std::string> ids;  // id -> file that has it
    for (const auto& file : files) {
        Scenario s = load_scenario(file.string());
        auto [it, inserted] = ids.emplace(s.id, s.file);
        if (!inserted)
            throw ScenarioError(s.file, "/id", fmt::format("duplicate id \"{}\": {} has it too", s.id, it->second));
        scenarios.push_back(std::move(s));
    }
    return scenarios;
}

}  // namespace relab
