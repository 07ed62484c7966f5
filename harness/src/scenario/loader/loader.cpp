// Scenario files -> Scenario. Every check names the JSON Pointer of the offending value and says
// what was expected and what was found; unknown fields are rejected so a typo never silently
// falls back to a default.
#include "scenario/loader/loader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ports/seeded_rng.h"
#include "scenario/loader/documented_loader.h"
#include "scenario/loader/exec_loader.h"
#include "scenario/loader/fault_loader.h"
#include "scenario/generate.h"
#include "scenario/loader/idem_loader.h"
#include "scenario/loader/servers_loader.h"
#include "describe/json_reader.h"
#include "scenario/scenario.h"
#include "util/check.h"
#include "util/json_shape.h"

namespace relab {

namespace {

using nlohmann::json;
using namespace scenario_json;

const std::vector<std::string> k_common_fields = {"id",   "part", "output", "title",  "title_vi",
                                                  "kind", "runs", "seed",   "expect", "documented", "group", "mutants",
                                                  "requires", "only_on", "compare"};
const std::vector<std::string> k_workload_fields = {"stream", "orders", "events", "job_cost_ms",
                                                    "consumers", "write", "lock", "buffer", "fanout", "producer",
                                                    "dispatcher", "stream_line", "sim", "idem", "recovery", "faults",
                                                    "servers", "generate", "shard", "show_throughput", "soak",
                                                    "beside"};
const std::vector<std::string> k_sessions_fields = {"cases"};

// The orders as described (stream_spec.h), each id once.
std::vector<OrderSpec> read_orders(const Reader& r, const json& v, const std::string& path) {
    std::vector<OrderSpec> orders = desc::read_value<std::vector<OrderSpec>>(r, v, path, {.min_items = 1});
    std::map<int64_t, size_t> seen;  // id -> index of its first occurrence
    for (size_t i = 0; i < orders.size(); ++i) {
        auto [it, inserted] = seen.emplace(orders[i].id, i);
        if (!inserted)
            r.fail(child(child(path, i), "id"), fmt::format("duplicate order id {} (first at {})", orders[i].id,
                                                            child(child(path, it->second), "id")));
    }
    return orders;
}

// P4: the amount each event carries, its order's changes added in version order from 0, as the
// source applies them. Every event of such a lab has a delta, an order's versions are distinct, and
// the source's own history never takes an amount below 0 (only a late change may be refused).
void carry_amounts(const Reader& r, const std::string& path, std::vector<EventSpec>& events) {
    const auto with_delta = std::count_if(events.begin(), events.end(), [](const EventSpec& e) { return e.delta.has_value(); });
    if (with_delta == 0) return;
    std::map<int64_t, std::map<int64_t, size_t>> by_order;  // order -> version -> index
    for (size_t i = 0; i < events.size(); ++i) {
        if (!events[i].delta)
            r.fail(child(child(path, i), "delta"), "some events carry a \"delta\": give every event one (0 for none)");
        if (!by_order[events[i].order].emplace(events[i].version, i).second)
            r.fail(child(child(path, i), "version"),
                   fmt::format("events with a \"delta\" carry their order's amount by version: order {} has version {} twice",
                               events[i].order, events[i].version));
    }
    for (auto& [order, versions] : by_order) {
        int64_t amount = 0;
        for (const auto& [version, i] : versions) {
            amount += *events[i].delta;
            if (amount < 0)
                r.fail(child(child(path, i), "delta"),
                       fmt::format("order {}'s amount would be {} after version {}: the source's own history may not "
                                   "take it below 0", order, amount, version));
            events[i].amount = amount;
        }
    }
}

// The events as described, each of one of the lab's orders, with the amounts P4's deltas carry.
std::vector<EventSpec> read_events(const Reader& r, const json& v, const std::string& path,
                                   const std::vector<OrderSpec>& orders) {
    std::vector<EventSpec> events = desc::read_value<std::vector<EventSpec>>(r, v, path, {.min_items = 1});
    std::vector<std::string> order_ids;
    for (const auto& order : orders) order_ids.push_back(std::to_string(order.id));
    for (size_t i = 0; i < events.size(); ++i) {
        const int64_t order = events[i].order;
        if (std::none_of(orders.begin(), orders.end(), [&](const OrderSpec& s) { return s.id == order; }))
            r.fail(child(child(path, i), "order"),
                   fmt::format("expected one of the orders' ids ({}), got {}", joined(order_ids), order));
    }
    carry_amounts(r, path, events);
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

// {"at_least": N, "at_most": M, "exactly": K}: a bound or two, or exactly. `what` names the count
// in the refusal of a band that always holds; `ceiling` (>= 0) is the most the count can be.
Band read_band(const Reader& r, const json& v, const std::string& path, const std::string& what, int64_t ceiling = -1,
               const std::string& ceiling_why = "") {
    Object o(r, v, path, {"at_least", "at_most", "exactly"});
    Band b;
    if (o.has("exactly")) {
        if (o.has("at_least") || o.has("at_most"))
            r.expected(path, "\"exactly\" alone, or \"at_least\" and/or \"at_most\"", v);
        b.at_least = b.at_most = o.req_int("exactly", 0);
    } else {
        b.at_least = o.maybe_int("at_least", 0);
        b.at_most = o.maybe_int("at_most", 0);
        if (!b.at_least && !b.at_most) r.expected(path, "\"at_least\", \"at_most\" or \"exactly\"", v);
        if (b.at_least && b.at_most && *b.at_least > *b.at_most)
            r.fail(o.path("at_most"), fmt::format("expected at least at_least ({}), got {}", *b.at_least, *b.at_most));
    }
    // A band every value lies in checks nothing: it would hold whatever the lab did.
    const bool no_floor = !b.at_least || *b.at_least <= 0;
    const bool no_ceiling = !b.at_most || (ceiling >= 0 && *b.at_most >= ceiling);
    if (no_floor && no_ceiling)
        r.fail(path, fmt::format("this band of {} always holds ({}); give a bound that some outcome breaks", what,
                                 b.describe()));
    if (ceiling >= 0 && b.at_least && *b.at_least > ceiling)
        r.fail(o.path(o.has("exactly") ? "exactly" : "at_least"),
               fmt::format("expected at most {} ({}), got {}", ceiling, ceiling_why, *b.at_least));
    return b;
}

// {"op", "actor", "fields", "bands"} of a record to match; `o` is built by the caller with the
// fields its place allows (a sequence step adds gap_ms and from_step).
RecordMatch read_match(const Object& o) {
    const Reader& r = o.reader();
    RecordMatch m;
    m.op = read_op(o, "op");
    m.actor = o.opt_string("actor", "");
    if (o.has("fields")) {
        const json& fields = o.at("fields");
        if (!fields.is_object()) r.expected(o.path("fields"), "an object", fields);
        check_op_fields(r, m.op, fields, o.path("fields"));
        m.fields = fields;
    }
    if (o.has("bands")) {
        const json& bands = o.at("bands");
        if (!bands.is_object() || bands.empty()) r.expected(o.path("bands"), "an object of field: band", bands);
        check_op_fields(r, m.op, bands, o.path("bands"));
        for (const auto& [field, band] : bands.items())
            m.bands[field] = read_band(r, band, child(o.path("bands"), field), "field " + field);
    }
    return m;
}

// "stream": ["42:paid", "42:created"], the stream as XRANGE returns it.
void read_stream_order(const Object& o, const std::string& key, std::vector<std::string>& out) {
    const Reader& r = o.reader();
    const json& list = r.array(o.at(key), o.path(key), false);
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string item = r.string(list[i], child(o.path(key), i), true);
        const auto colon = item.find(':');
        if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
            r.expected(child(o.path(key), i), "\"order:type\", e.g. \"42:paid\"", list[i]);
        out.push_back(item);
    }
}

// "publish_delay_ms": [{"order", "min", "max"}, ...].
void read_publish_delays(const Object& o, const std::string& key, std::vector<DelayBound>& out) {
    const Reader& r = o.reader();
    const json& list = r.array(o.at(key), o.path(key), false);
    for (size_t i = 0; i < list.size(); ++i) {
        Object d(r, list[i], child(o.path(key), i), {"order", "min", "max"});
        // In µs the checker compares them with, they must fit.
        DelayBound b{d.req_int("order", k_int64_min), d.req_int("min", 0, k_int64_max / 1000),
                     d.req_int("max", 0, k_int64_max / 1000)};
        if (b.min_ms > b.max_ms) r.fail(d.path("max"), fmt::format("expected at least min ({}), got {}", b.min_ms, b.max_ms));
        out.push_back(b);
    }
}

void read_matches(const Object& o, const std::string& key, std::vector<RecordMatch>& out) {
    const Reader& r = o.reader();
    const json& list = r.array(o.at(key), o.path(key), true);
    for (size_t i = 0; i < list.size(); ++i)
        out.push_back(read_match(Object(r, list[i], child(o.path(key), i), {"op", "actor", "fields", "bands"})));
}

// A step of "sequence" after `index` others: its record, and its gap_ms / from_step / same_as.
SequenceStep read_sequence_step(const Object& step, size_t index) {
    const Reader& r = step.reader();
    SequenceStep s;
    s.match = read_match(step);
    if (step.has("gap_ms")) {
        if (index == 0) r.fail(step.path("gap_ms"), "the first step has no previous step to be later than");
        s.gap_ms = read_band(r, step.at("gap_ms"), step.path("gap_ms"), "gap_ms");
        s.from_step = static_cast<int>(step.opt_int("from_step", 0, 1, static_cast<int64_t>(index)));
    } else if (step.has("from_step")) {
        r.fail(step.path("from_step"), "from_step needs gap_ms: it names the step the gap counts from");
    }
    if (step.has("same_as")) {
        if (index == 0) r.fail(step.path("same_as"), "the first step has no earlier step to be the same as");
        const Object same(r, step.at("same_as"), step.path("same_as"), {"step", "fields"});
        s.same_as_step = static_cast<int>(same.req_int("step", 1, static_cast<int64_t>(index)));
        s.same_fields = r.strings(same.at("fields"), same.path("fields"));
        if (s.same_fields.empty()) r.fail(same.path("fields"), "name at least one field, e.g. [\"entry\"]");
    }
    return s;
}

void read_sequence(const Object& o, const std::string& key, std::vector<SequenceStep>& out) {
    const Reader& r = o.reader();
    const json& list = r.array(o.at(key), o.path(key), true);
    for (size_t i = 0; i < list.size(); ++i)
        out.push_back(read_sequence_step(Object(r, list[i], child(o.path(key), i),
                                                {"op", "actor", "fields", "bands", "gap_ms", "from_step", "same_as"}),
                                         i));
}

// "final": {"42": "created"}, or {"42": {"status": "created", "amount": 30}}.
void read_final(const Object& o, const std::string& key, std::map<int64_t, FinalState>& out) {
    const Reader& r = o.reader();
    const json& v = o.at(key);
    if (!v.is_object() || v.empty()) r.expected(o.path(key), "an object of order id: status, e.g. {\"42\": \"created\"}", v);
    for (const auto& [order, status] : v.items()) {
        int64_t id = 0;
        try {
            size_t used = 0;
            id = std::stoll(order, &used);
            if (used != order.size()) throw std::invalid_argument(order);
        } catch (const std::exception&) {
            r.expected(child(o.path(key), order), "an order id as the key, e.g. \"42\"", json(order));
        }
        out[id] = desc::read_value<FinalState>(r, status, child(o.path(key), order));
    }
}

// "stale_overwrite": {"order", "by", "over"}, or a list of them.
void read_stale_overwrites(const Object& o, const std::string& key, std::vector<StaleOverwrite>& out) {
    const json& v = o.at(key);
    const json list = v.is_array() ? v : json::array({v});
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string path = v.is_array() ? child(o.path(key), i) : o.path(key);
        Object so(o.reader(), list[i], path, {"order", "by", "over"});
        out.push_back({so.req_int("order", k_int64_min), so.req_string("by"), so.req_string("over")});
    }
}

// A band on a figure of the trial, or a bare count meaning exactly that ("lost": 0).
Band read_count_band(const Object& o, const std::string& key, std::string_view counts) {
    const Reader& r = o.reader();
    const json& v = o.at(key);
    if (v.is_number_integer()) {
        const int64_t n = r.integer(v, o.path(key), 0, k_int64_max);
        return Band{n, n};
    }
    if (!v.is_object())
        r.expected(o.path(key), "a count such as 0, or {\"at_least\": N, \"at_most\": M} or {\"exactly\": N}", v);
    return read_band(r, v, o.path(key), std::string(counts));
}

// {"figure": band, ...} over one of the trial's figure tables.
void read_figure_bands(const Object& o, const std::string& key, const std::vector<std::string>& figures,
                       TrialTerms::FigureBands& out) {
    const Object bands(o.reader(), o.at(key), o.path(key), figures);
    for (const auto& name : figures)
        if (bands.has(name)) out[name] = read_band(o.reader(), bands.at(name), bands.path(name), name);
}

void read_term(const TermRow& row, const Object& o, const std::string& key, TrialTerms& t) {
    switch (row.shape) {
        case TermShape::final_status: return read_final(o, key, t.final_status);
        case TermShape::stale_overwrites: return read_stale_overwrites(o, key, t.stale_overwrites);
        case TermShape::figure: t.bands[std::string(row.name)] = read_count_band(o, key, row.counts); return;
        case TermShape::figures: return read_figure_bands(o, key, figure_names(row.table), t.figure_bands(row));
        case TermShape::has: return read_matches(o, key, t.has);
        case TermShape::never: return read_matches(o, key, t.never);
        case TermShape::sequence: return read_sequence(o, key, t.sequence);
        case TermShape::stream: return read_stream_order(o, key, t.stream);
        case TermShape::publish_delay: return read_publish_delays(o, key, t.publish_delay_ms);
    }
}

// A term's key in `expect` itself (`top`: the older every_trial_has, every_trial_stream) or in
// every_wrong_trial.
std::string term_key(const TermRow& row, bool top) {
    return std::string(top && !row.top_name.empty() ? row.top_name : row.name);
}

// The terms the object states that hold in one trial.
void read_terms(const Object& o, LabKind kind, bool top, TrialTerms& t) {
    for (const TermRow& row : term_rows()) {
        const std::string key = term_key(row, top);
        if (!o.has(key)) continue;
        if (kind == LabKind::sessions)
            o.reader().fail(o.path(key), "applies only to kind \"workload\" (sessions have no trial history)");
        read_term(row, o, key, t);
    }
}

// The fields of `expect` (top) or of every_wrong_trial: `others`, then every term's key there.
std::vector<std::string> expect_fields(std::vector<std::string> others, bool top) {
    for (const TermRow& row : term_rows()) others.push_back(term_key(row, top));
    return others;
}

// A term is refused where the lab does not measure its figure: there it could never hold. (The soak
// figures are read from the group relab observes at a soak trial's end; side effects are counted
// only where consumers send them; serialization failures only where jobs run in a transaction.)
void check_term_needs(const Reader& r, const Scenario& s, const std::string& expect_path) {
    auto met = [&](TermNeeds needs) {
        switch (needs) {
            case TermNeeds::nothing: return true;
            case TermNeeds::side_effects: return s.write.side_effect;
            case TermNeeds::soak: return s.soak.enabled;
            case TermNeeds::isolation: return s.write.isolation != WriteIsolation::none;
        }
        return true;
    };
    for (const TermRow& row : term_rows()) {
        if (met(row.needs)) continue;
        if (s.expect.every_trial.states(row))
            r.fail(child(expect_path, term_key(row, true)), std::string(needs_text(row.needs)));
        if (s.expect.every_wrong_trial.states(row))
            r.fail(child(child(expect_path, "every_wrong_trial"), term_key(row, false)), std::string(needs_text(row.needs)));
    }
}

// "may_appear": {"class": "why", ...}: anomalies the mechanism may show in any number. A class the
// expectation bounds in every trial is judged by its band already, so naming it twice is refused.
void read_may_appear(const Object& o, Expectation& e) {
    const Reader& r = o.reader();
    const json& v = o.at("may_appear");
    if (!v.is_object() || v.empty())
        r.expected(o.path("may_appear"), "an object naming accounting classes with the reason each may appear", v);
    const auto classes = anomaly_classes();
    for (const auto& [name, why] : v.items()) {
        const std::string path = child(o.path("may_appear"), name);
        if (std::find(classes.begin(), classes.end(), name) == classes.end())
            r.fail(path, fmt::format("not an accounting anomaly; name one of {}", fmt::join(classes, ", ")));
        if (!why.is_string() || why.get<std::string>().empty())
            r.expected(path, "the reason the lab's mechanism may show it, in a sentence", why);
        if (e.every_trial.band(name))
            r.fail(path, "the expectation already bounds it in every trial; drop one of the two");
        e.may_appear.emplace(name, why.get<std::string>());
    }
}

// `trials` is how many trials (workload) or cases (sessions) the count is over.
Expectation read_expect(const Reader& r, const json& v, const std::string& path, LabKind kind, int trials,
                        const std::string& trials_name) {
    const Object o(r, v, path,
                   expect_fields({"wrong", "every_wrong_trial", "until_wrong", "throughput_ratio", "may_appear"}, true));
    Expectation e;
    const json& wrong = o.at("wrong");
    const std::string wrong_path = o.path("wrong");
    if (wrong.is_string() && wrong.get<std::string>() == "all") {
        e.wrong = Expectation::Count::all;
    } else if (wrong.is_string() && wrong.get<std::string>() == "none") {
        e.wrong = Expectation::Count::none;
    } else if (wrong.is_object()) {
        const Band b = read_band(r, wrong, wrong_path, "wrong " + trials_name, trials,
                                 fmt::format("the lab has {} {}", trials, trials_name));
        if (b.at_least && b.at_most && *b.at_least == *b.at_most && wrong.contains("exactly")) {
            e.wrong = Expectation::Count::exactly;
            e.n = static_cast<int>(*b.at_least);
        } else if (b.at_least && b.at_most) {
            e.of_runs = trials;
            e.wrong = Expectation::Count::between;
            e.n = static_cast<int>(*b.at_least);
            e.n_max = static_cast<int>(*b.at_most);
        } else if (b.at_least) {
            e.wrong = Expectation::Count::at_least;
            e.n = static_cast<int>(*b.at_least);
        } else {
            e.of_runs = trials;
            e.wrong = Expectation::Count::at_most;
            e.n = static_cast<int>(*b.at_most);
        }
    } else {
        r.expected(wrong_path, "\"all\", \"none\" or {\"at_least\": N, \"at_most\": M} or {\"exactly\": N}", wrong);
    }
    read_terms(o, kind, true, e.every_trial);
    if (o.has("may_appear")) read_may_appear(o, e);
    if (o.has("every_wrong_trial")) {
        if (e.wrong == Expectation::Count::none)
            r.fail(o.path("every_wrong_trial"), "\"wrong\": \"none\" leaves no wrong trial to explain");
        read_terms(Object(r, o.at("every_wrong_trial"), o.path("every_wrong_trial"), expect_fields({}, false)), kind,
                   false, e.every_wrong_trial);
    }
    if (o.has("throughput_ratio")) {
        if (kind != LabKind::stream)
            r.fail(o.path("throughput_ratio"), "applies only to stream labs (\"kind\": \"workload\"), whose writes give a pace");
        Object t(r, o.at("throughput_ratio"), o.path("throughput_ratio"), {"at_least"});
        const json& floor = t.at("at_least");
        if (!floor.is_number() || floor.get<double>() <= 0)
            r.expected(t.path("at_least"), "a number above 0 (the lab's jobs/s over the arrangement's beside)", floor);
        e.throughput_ratio_at_least = floor.get<double>();
    }
    if (o.has("until_wrong")) {
        // A session lab's cases and the benchmark's one measurement are not trials that may go either way.
        if (kind == LabKind::sessions || kind == LabKind::idem_benchmark)
            r.fail(o.path("until_wrong"), "applies only to labs whose trials repeat (workloads, idempotency clients, "
                                          "the cluster lab); a session lab's cases and a benchmark run once");
        Object u(r, o.at("until_wrong"), o.path("until_wrong"), {"max_runs"});
        e.until_wrong_max_runs = static_cast<int>(u.req_int("max_runs", trials + 1, k_int_max));
        if (e.wrong != Expectation::Count::at_least && e.wrong != Expectation::Count::between)
            r.fail(o.path("until_wrong"), "needs \"wrong\" with \"at_least\": more trials are run until that many went wrong");
    }
    return e;
}

std::vector<Mutant> read_mutants(const Reader& r, const json& v, const std::string& path) {
    std::vector<Mutant> out;
    const json& list = r.array(v, path, true);
    for (size_t i = 0; i < list.size(); ++i) {
        Object m(r, list[i], child(path, i), {"name", "change", "patch", "why_several"});
        Mutant mutant;
        mutant.name = m.req_string("name");
        if (!is_slug(mutant.name))
            r.expected(m.path("name"), "lower-case letters, digits and '-' ([a-z0-9][a-z0-9-]*)", m.at("name"));
        for (const auto& earlier : out)
            if (earlier.name == mutant.name) r.fail(m.path("name"), "duplicate mutant name " + mutant.name);
        mutant.change = m.req_string("change");
        mutant.patch = r.array(m.at("patch"), m.path("patch"), true);
        if (m.has("why_several")) {
            mutant.why_several = m.req_string("why_several");
            if (mutant_paths(mutant).size() < 2)
                r.fail(m.path("why_several"), "the patch touches one path: a one-knob mutant needs no why_several; drop it");
        }
        out.push_back(std::move(mutant));
    }
    return out;
}

std::string slug_field(const Object& o, const std::string& key, const std::string& fallback) {
    if (!o.has(key)) return fallback;
    std::string s = o.req_string(key);
    if (!is_slug(s)) o.reader().expected(o.path(key), "lower-case letters, digits and '-' ([a-z0-9][a-z0-9-]*)", o.at(key));
    return s;
}

// id, part, output, group, the Redis features it needs, the backend it is only for, and its titles.
void read_identity(const Reader& r, const Object& top, Scenario& s) {
    if (!top.has("id")) r.fail("/id", "required field is missing");
    s.id = slug_field(top, "id", "");
    s.part = slug_field(top, "part", s.id);
    s.output = slug_field(top, "output", s.id);
    s.group = slug_field(top, "group", "");
    if (top.has("requires")) {
        const json& list = r.array(top.at("requires"), top.path("requires"), false);
        for (size_t i = 0; i < list.size(); ++i) {
            const std::vector<std::string> known = {"DELEX", "XADD IDMP"};
            if (!list[i].is_string() ||
                std::find(known.begin(), known.end(), list[i].get<std::string>()) == known.end())
                r.expected(child(top.path("requires"), i), "a Redis feature: " + quoted_list(known), list[i]);
            s.needs_features.push_back(list[i].get<std::string>());
        }
    }
    if (top.has("only_on")) {
        Object only(r, top.at("only_on"), top.path("only_on"), {"backend", "why"});
        s.only_backend = only.opt_choice("backend", "", {"sim", "real"});
        if (s.only_backend.empty()) r.fail(only.path("backend"), "required: \"sim\" or \"real\"");
        s.only_backend_why = only.req_string("why");
    }
    s.title = top.req_string("title");
    s.title_vi = top.opt_string("title_vi", s.title);
}

// A field of the other kind would be ignored; say so instead.
void refuse_other_kind_fields(const Reader& r, const Object& top, bool sessions) {
    const auto& foreign = sessions ? k_workload_fields : k_sessions_fields;
    const char* own_kind = sessions ? "sessions" : "workload";
    const char* other_kind = sessions ? "workload" : "sessions";
    for (const auto& key : foreign)
        if (top.has(key))
            r.fail(top.path(key), fmt::format("field applies only to kind \"{}\"; this scenario is kind \"{}\"",
                                              other_kind, own_kind));
}

void read_sessions_lab(const Reader& r, const Object& top, Scenario& s) {
    s.kind = LabKind::sessions;
    const json& cases = r.array(top.at("cases"), top.path("cases"), true);
    for (size_t i = 0; i < cases.size(); ++i)
        s.cases.push_back(read_case(Object(r, cases[i], child(top.path("cases"), i),
                                           {"title", "title_vi", "setup_sql", "sessions", "final_sql",
                                            "expect_rows", "transcript_sessions", "exact_keys"})));
}

// The described section `key` of the top level into `out`, when the file gives it.
template <class S>
void read_section(const Object& top, const std::string& key, S& out, const std::vector<std::string>& also = {}) {
    if (top.has(key)) out = desc::read_file<S>(top.reader(), top.at(key), top.path(key), also);
}

// The stream, the orders and events (given or generated), the job costs and the consumers.
void read_stream_workload(const Reader& r, const Object& top, Scenario& s) {
    read_section(top, "stream", s.stream);
    if (top.has("generate")) {
        for (const char* key : {"orders", "events"})
            if (top.has(key))
                r.fail(top.path(key), std::string("\"generate\" makes the lab's orders and events; drop \"") + key +
                                          "\" or \"generate\"");
        s.generate = desc::read_file<GenerateSpec>(r, top.at("generate"), top.path("generate"));
        GeneratedWorkload w = expand_generate(*s.generate, s.seed);
        s.orders = std::move(w.orders);
        s.events = std::move(w.events);
        s.load = std::move(w.load);
    } else {
        s.orders = read_orders(r, top.at("orders"), top.path("orders"));
        s.events = read_events(r, top.at("events"), top.path("events"), s.orders);
    }
    if (top.has("job_cost_ms")) s.job_cost_ms = read_job_cost(r, top.at("job_cost_ms"), top.path("job_cost_ms"), s.events);
    read_consumers(top, s);  // a count, or a program (exec_loader.h)
}

// Only a statement that inserts creates the row of an absent order; the inbox's transaction and a
// batch hold UPDATEs.
bool writes_update_only(const Scenario& s) { return write_mode_info(s.write.mode).statement == WriteStatement::update; }

// write.isolation's transaction holds the job and one UPDATE: what runs a transaction of its own
// (the inbox, a batch) or a statement after the COMMIT (a side effect) has no place in it.
void refuse_isolation_conflicts(const Reader& r, const Object& top, const Scenario& s) {
    if (s.write.isolation == WriteIsolation::none) return;
    const std::string at = child(top.path("write"), "isolation");
    auto refuse = [&](const std::string& what) {
        r.fail(at, "\"" + to_string(s.write.isolation) + "\" runs each job in one transaction around its UPDATE; " +
                       what + " (leave \"isolation\" out)");
    };
    if (!writes_update_only(s))
        refuse("it takes mode \"plain\", \"cas\", \"delta\" or \"cas_state\", got mode \"" + to_string(s.write.mode) + "\"");
    else if (s.write.dedupe != WriteDedupe::none)
        refuse("the inbox dedupe runs a transaction of its own");
    else if (s.write.commit == WriteSpec::Commit::batch)
        refuse("\"commit\": \"batch\" runs one transaction per read");
    else if (s.write.side_effect)
        refuse("a side effect is sent after the write, outside it");
}

// "write", and the orders and dedupe its mode cannot serve.
void read_stream_write(const Reader& r, const Object& top, Scenario& s) {
    read_section(top, "write", s.write);
    const bool update_only = writes_update_only(s);
    for (size_t i = 0; i < s.orders.size(); ++i)
        if (s.orders[i].absent && update_only)
            r.fail(child(child(top.path("orders"), i), "absent"),
                   "an absent order is created by its first write: it needs \"write\": {\"mode\": \"upsert\"} "
                   "or \"insert_then_update\", got mode \"" + to_string(s.write.mode) + "\"");
    if (write_mode_info(s.write.mode).amount != AmountWrite::none && !carries_amounts(s))
        r.fail(child(top.path("write"), "mode"), "mode \"" + to_string(s.write.mode) +
                                                     "\" applies the amount events carry: give every event a \"delta\"");
    if (s.write.dedupe != WriteDedupe::none && !update_only)
        r.fail(child(top.path("write"), "dedupe"), "the inbox dedupe wraps a plain or CAS write in its transaction, got mode \"" +
                                                       to_string(s.write.mode) + "\"");
    refuse_isolation_conflicts(r, top, s);
}

// The lock around a job, the reorder buffer and the fanout to workers, and what of them excludes the other.
void read_job_wrappers(const Reader& r, const Object& top, Scenario& s) {
    read_section(top, "lock", s.lock);
    read_section(top, "buffer", s.buffer);
    if (s.buffer.enabled) {
        if (s.consumers != 1)
            r.fail(top.path("buffer"), fmt::format("a reorder buffer orders one consumer's events; with {} consumers "
                                                   "an order's events land in different buffers (use \"consumers\": 1)",
                                                   s.consumers));
    }
    read_section(top, "fanout", s.fanout);
    if (s.fanout.enabled) {
        if (s.buffer.enabled)
            r.fail(top.path("fanout"), "the reorder buffer runs in a consumer's own read loop; with \"fanout\" its "
                                       "workers apply the events (use one or the other)");
        if (s.stream.ack == StreamSpec::Ack::batch)
            r.fail(top.path("fanout"), "with \"fanout\" each worker acknowledges its own job; \"stream\": "
                                       "{\"ack\": \"batch\"} acknowledges a consumer's whole read (use one or the other)");
    }
}

// One multi-statement query of UPDATEs per read: what else a job does per event (a lock around its
// write, an inbox transaction, a side effect after it) or a worker that applies events one by one
// has no place in it.
void refuse_batch_commit_conflicts(const Reader& r, const Object& top, const Scenario& s) {
    if (s.write.commit != WriteSpec::Commit::batch) return;
    const std::string at = child(top.path("write"), "commit");
    auto refuse = [&](const std::string& what) {
        r.fail(at, "\"batch\" sends the UPDATEs of one read as one transaction; " + what + " (use \"commit\": \"each\")");
    };
    if (!writes_update_only(s))
        refuse("it takes mode \"plain\" or \"cas\", got mode \"" + to_string(s.write.mode) + "\"");
    else if (s.write.dedupe != WriteDedupe::none)
        refuse("the inbox dedupe runs a transaction of its own per event");
    else if (s.write.side_effect)
        refuse("a side effect is sent after each event's own write");
    else if (s.lock.enabled)
        refuse("a lock is held around each event's own write");
    else if (s.buffer.enabled)
        refuse("the reorder buffer applies held events one by one");
    else if (s.fanout.enabled)
        refuse("with \"fanout\" the workers apply the events one by one");
}

// Every producer failure names an event of the lab, and every outbox failure one of its rows.
void refuse_unknown_failures(const Reader& r, const Object& top, const Scenario& s) {
    for (size_t i = 0; i < s.producer.failures.size(); ++i) {
        const PublishFailure& f = s.producer.failures[i];
        const bool known = std::any_of(s.events.begin(), s.events.end(),
                                       [&](const EventSpec& e) { return e.order == f.order && e.type == f.type; });
        if (!known)
            r.fail(child(child(top.path("producer"), "failures"), i),
                   fmt::format("no event of order {} with type \"{}\"", f.order, f.type));
    }
    // Outbox ids are 1..N in the order of the events, one row per event.
    const auto rows = static_cast<int64_t>(s.events.size());
    for (size_t i = 0; i < s.dispatcher.failures.size(); ++i)
        if (s.dispatcher.failures[i].outbox_id > rows)
            r.expected(child(child(child(top.path("dispatcher"), "failures"), i), "outbox_id"),
                       integer_range_text(1, rows), s.dispatcher.failures[i].outbox_id);
}

// The dispatcher replaces the producer: what only the producer has does not apply beside it.
void refuse_dispatcher_conflicts(const Reader& r, const Object& top, const Scenario& s) {
    if (carries_amounts(s))
        r.fail(top.path("dispatcher"), "the outbox's rows carry no amount: events with a \"delta\" need the producer");
    for (size_t i = 0; i < s.orders.size(); ++i)
        if (s.orders[i].absent)
            r.fail(child(child(top.path("orders"), i), "absent"),
                   "the dispatcher's source app updates the order's source row, which an absent order "
                   "does not have");
    if (!s.producer.failures.empty())
        r.fail(top.path("producer"),
               "producer failures do not apply with a dispatcher (it replaces the producer); "
               "schedule failures under /dispatcher/failures");
}

// A publishing role's section (its settings, or the user's program in its place).
template <class S>
void read_publisher(const Object& top, const std::string& role, S& spec, ExecRoles& exec) {
    if (!top.has(role)) return;
    read_section(top, role, spec, exec_field_names());
    if (top.at(role).is_null()) return;
    if (auto program = read_exec(Object(top.reader(), top.at(role), top.path(role), with_exec_fields(desc::keys<S>()))))
        exec.by_role[role] = std::move(*program);
}

// Who publishes: the producer (its retries, its IDMP) or an outbox dispatcher in its place.
void read_publishers(const Reader& r, const Object& top, Scenario& s) {
    read_publisher(top, "producer", s.producer, s.exec);
    read_publisher(top, "dispatcher", s.dispatcher, s.exec);
    if (s.producer.idmp &&
        std::find(s.needs_features.begin(), s.needs_features.end(), "XADD IDMP") == s.needs_features.end())
        r.fail(child(top.path("producer"), "idmp"),
               "XADD ... IDMP needs Redis 8.6: add \"requires\": [\"XADD IDMP\"] so older servers skip the lab");
    refuse_unknown_failures(r, top, s);
    if (s.dispatcher.enabled) refuse_dispatcher_conflicts(r, top, s);
}

// "shard": one consumer per shard on a Redis Cluster of the lab's own, and what it cannot run with.
void read_stream_shard(const Reader& r, const Object& top, Scenario& s) {
    read_section(top, "shard", s.shard);
    if (!s.shard.enabled) return;
    const auto events = static_cast<int64_t>(s.events.size());
    if (s.shard.reshard && events < 2)
        r.fail(child(child(top.path("shard"), "reshard"), "after_events"),
               "a reshard needs events on both sides of the switch: the lab has fewer than 2");
    if (s.shard.reshard && s.shard.reshard->after_events > events - 1)
        r.expected(child(child(top.path("shard"), "reshard"), "after_events"), integer_range_text(1, events - 1),
                   s.shard.reshard->after_events);
    // One consumer per shard: the router decides the stream, the shard's consumer its order.
    if (top.has("consumers") && s.consumers != s.shard.shard_count())
        r.fail(top.path("consumers"),
               fmt::format("a sharded lab has one consumer per shard ({}); drop \"consumers\"", s.shard.shard_count()));
    s.consumers = s.shard.shard_count();
    const char* unsupported = s.dispatcher.enabled ? "dispatcher"
                              : s.lock.enabled     ? "lock"
                              : s.buffer.enabled   ? "buffer"
                              : s.fanout.enabled   ? "fanout"
                              // A reaper reads no shard; a consumer claims within its own.
                              : top.has("recovery") && top.at("recovery").contains("autoclaim") &&
                                        !(top.at("recovery").at("autoclaim").is_object() &&
                                          top.at("recovery").at("autoclaim").value("in", "") == "consumers")
                                  ? "recovery"
                              : top.has("soak")     ? "soak"
                              // A PostgreSQL of the lab's own is fine (the load labs'); a Redis is the cluster's.
                              : s.servers.own || s.servers.replica || s.servers.cache ? "servers"
                              : !s.producer.failures.empty() ? "producer"
                                                             : nullptr;
    if (unsupported)
        r.fail(top.path(unsupported), std::string("a sharded lab (\"shard\") runs a router and one consumer per "
                                                  "shard on its own Redis Cluster; \"") +
                                          unsupported + "\" is not supported with it");
    if (top.has("stream") && top.at("stream").contains("key"))
        r.fail(child(top.path("stream"), "key"), "a sharded lab's streams are named by /shard/key_format");
}

// How the report shows the lab (its stream line, its throughput) and how a soak drains.
void read_stream_display(const Reader& r, const Object& top, Scenario& s) {
    refuse_exec_conflicts(top, s);
    s.stream_line = top.opt_choice("stream_line", s.stream_line, {"list", "xrange"});
    s.show_throughput = s.fanout.enabled || s.shard.enabled;
    if (top.has("show_throughput")) {
        if (!top.at("show_throughput").is_boolean())
            r.expected(top.path("show_throughput"), "true or false", top.at("show_throughput"));
        s.show_throughput = top.at("show_throughput").get<bool>();
    }
    read_section(top, "soak", s.soak);
}

// The lab's roles, as trial_roles starts them, and its own servers: the targets a fault may name.
std::vector<std::string> stream_fault_targets(const Scenario& s) {
    std::vector<std::string> actors;
    for (int i = 1; i <= s.consumers; ++i) actors.push_back(fmt::format("C{}", i));
    if (s.recovery.autoclaim.enabled && s.recovery.autoclaim.in_reaper()) actors.push_back("reaper");
    if (s.dispatcher.enabled) {
        actors.push_back("app");
        for (const auto& d : dispatcher_actors(s.dispatcher)) actors.push_back(d);
    } else {
        actors.push_back("producer");
    }
    if (s.servers.own) actors.push_back("redis");
    if (s.servers.replica) actors.push_back("redis-replica");
    if (s.servers.postgres) actors.push_back("postgres");
    if (s.shard.enabled && s.shard.cluster.replicas > 0) {
        actors.push_back("redis-cluster-master");
        actors.push_back("redis-cluster-replica");
    }
    return actors;
}

// A claim waits min_idle_ms with nothing moving: a shorter quiet period would end the trial first.
void refuse_quiet_before_claim(const Reader& r, const Object& top, const Scenario& s) {
    const auto& ac = s.recovery.autoclaim;
    if (!ac.enabled || s.stream.quiet_ms > ac.min_idle_ms + ac.every_ms) return;
    r.fail(child(top.path("stream"), "quiet_ms"),
           fmt::format("{} ms would end the trial before the claim ({} ms idle, every {} ms) could come; make it more "
                       "than {} ms",
                       s.stream.quiet_ms, ac.min_idle_ms, ac.every_ms, ac.min_idle_ms + ac.every_ms));
}

void read_stream_lab(const Reader& r, const Object& top, Scenario& s) {
    s.kind = LabKind::stream;
    read_stream_workload(r, top, s);
    read_stream_write(r, top, s);
    read_job_wrappers(r, top, s);
    refuse_batch_commit_conflicts(r, top, s);
    read_publishers(r, top, s);
    read_stream_shard(r, top, s);
    read_stream_display(r, top, s);
    read_section(top, "sim", s.sim);
    read_section(top, "recovery", s.recovery);
    refuse_quiet_before_claim(r, top, s);
    if (top.has("servers"))
        s.servers = read_servers(Object(r, top.at("servers"), top.path("servers"), {"redis", "replica", "postgres"}));
    if (s.producer.wait && !s.servers.replica)
        r.fail(child(child(top.path("producer"), "wait"), "replicas"),
               "WAIT counts replicas and this lab has none: add \"servers\": {\"replica\": true}");
    if (top.has("faults")) s.faults = read_faults(r, top.at("faults"), top.path("faults"), stream_fault_targets(s));
    for (FaultSpec& f : s.faults) {
        f.stream = s.stream.key;
        f.group = s.stream.group;
        const bool on_stream = f.action == FaultAction::delete_consumer || f.action == FaultAction::trim;
        if (on_stream && s.shard.enabled)
            r.fail(top.path("faults"), to_string(f.action) + " acts on the lab's one stream: a sharded lab has one per shard");
    }
    for (size_t i = 0; i < s.faults.size(); ++i)
        if (s.faults[i].target.shard >= s.shard.streams)
            r.fail(child(child(top.path("faults"), i), "shard"),
                   fmt::format("the lab has shards 0..{}", s.shard.streams - 1));
}

Scenario read_scenario(const Reader& r, const json& doc) {
    if (!doc.is_object()) r.expected("", "a JSON object at the top level", doc);
    std::vector<std::string> all_fields = k_common_fields;
    all_fields.insert(all_fields.end(), k_workload_fields.begin(), k_workload_fields.end());
    all_fields.insert(all_fields.end(), k_sessions_fields.begin(), k_sessions_fields.end());
    // "$schema" names the JSON Schema (scenarios/schema.json) for editors; the loader only checks
    // it is a string.
    Object top(r, doc, "", all_fields, {"$schema"});
    if (top.has("$schema")) (void)top.req_string("$schema");

    Scenario s;
    read_identity(r, top, s);
    const json& kind = top.at("kind");
    if (kind != "workload" && kind != "sessions") r.expected(top.path("kind"), "\"workload\" or \"sessions\"", kind);
    const bool sessions = kind == "sessions";
    s.runs = static_cast<int>(top.opt_int("runs", s.runs, 1, 100000));
    if (top.has("seed")) s.seed = r.unsigned_integer(top.at("seed"), top.path("seed"));
    refuse_other_kind_fields(r, top, sessions);

    // The lab's kind, decided here once for every layer: a workload with "idem" is one of the
    // idempotency kinds (idem_kind tells which from what "idem" holds).
    if (sessions)
        read_sessions_lab(r, top, s);
    else if (top.has("idem"))
        read_idem_lab(r, top, s);
    else
        read_stream_lab(r, top, s);

    // A sessions lab's expectation counts its cases; the others count their runs.
    const int total = sessions ? static_cast<int>(s.cases.size()) : s.runs;
    s.expect = read_expect(r, top.at("expect"), top.path("expect"), s.kind, total, sessions ? "cases" : "runs");
    check_term_needs(r, s, top.path("expect"));
    if (top.has("documented")) s.documented = read_documented(r, top.at("documented"), top.path("documented"));
    if (top.has("compare")) s.compare = read_comparison(r, top.at("compare"), top.path("compare"));
    if (top.has("mutants")) s.mutants = read_mutants(r, top.at("mutants"), top.path("mutants"));
    if (top.has("beside")) {
        Object b(r, top.at("beside"), top.path("beside"), {"name", "change", "patch"});
        BesideSpec spec;
        spec.name = b.req_string("name");
        if (!is_slug(spec.name))
            r.expected(b.path("name"), "lower-case letters, digits and '-' ([a-z0-9][a-z0-9-]*)", b.at("name"));
        spec.change = b.req_string("change");
        spec.patch = r.array(b.at("patch"), b.path("patch"), true);
        s.beside = std::move(spec);
    }
    if (s.expect.throughput_ratio_at_least && !s.beside)
        r.fail(top.path("expect") + "/throughput_ratio",
               "needs \"beside\": the arrangement whose throughput the lab's is compared with");
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

// Arrays and objects within each other: the scenarios nest 9 levels at most. Deeper is refused
// before anything copies or prints the value (both recurse once a level).
constexpr size_t k_max_nesting = 64;
// What a mutant's patch may add to its lab, in JSON values: room for any change a lab needs, none
// for a patch whose "copy" ops double the document forty times over.
constexpr size_t k_max_patch_growth = 10000;

void check_nesting(const json& doc, const std::string& file) {
    if (const auto at = json_nested_too_deep(doc, k_max_nesting))
        throw ScenarioError(file, *at, fmt::format("nested more than {} arrays and objects deep", k_max_nesting));
}

// The byte where parsing `text` stops, found by a second pass that builds nothing: json::parse's
// out_of_range (a number too large for a double, 1e400) carries no position of its own.
size_t parse_error_byte(const std::string& text) {
    struct Where : nlohmann::json_sax<json> {
        size_t byte = 0;
        bool null() override { return true; }
        bool boolean(bool) override { return true; }
        bool number_integer(number_integer_t) override { return true; }
        bool number_unsigned(number_unsigned_t) override { return true; }
        bool number_float(number_float_t, const string_t&) override { return true; }
        bool string(string_t&) override { return true; }
        bool binary(binary_t&) override { return true; }
        bool start_object(std::size_t) override { return true; }
        bool key(string_t&) override { return true; }
        bool end_object() override { return true; }
        bool start_array(std::size_t) override { return true; }
        bool end_array() override { return true; }
        bool parse_error(std::size_t at, const std::string&, const nlohmann::detail::exception&) override {
            byte = at;
            return false;
        }
    } where;
    json::sax_parse(text, &where, json::input_format_t::json, true, /*ignore_comments=*/true);
    return where.byte;
}

// The library's message without its exception id: "number overflow parsing '1e400'".
std::string without_exception_id(const json::exception& e) {
    const std::string what = e.what();
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
    } catch (const json::exception& e) {
        // A number out of a double's range (out_of_range 406): a refusal like a syntax error.
        throw ScenarioError(file_for_errors, text_position(text, parse_error_byte(text)), without_exception_id(e));
    }
    check_nesting(doc, file_for_errors);
    Scenario s = read_scenario(Reader(file_for_errors), doc);
    s.file = file_for_errors;
    s.source = std::move(doc);
    // Every mutant must itself be a valid lab, so a broken patch is found when the file loads.
    for (const auto& m : s.mutants) (void)apply_mutant(s, m);
    if (s.beside) (void)beside_scenario(s);
    return s;
}

std::vector<std::string> mutant_paths(const Mutant& m) {
    std::set<std::string> paths;
    for (const json& op : m.patch) {
        if (!op.is_object()) continue;
        for (const char* key : {"path", "from"})
            if (op.contains(key) && op.at(key).is_string()) paths.insert(op.at(key).get<std::string>());
    }
    return {paths.begin(), paths.end()};
}

Scenario apply_mutant(const Scenario& s, const Mutant& mutant) {
    const std::string file = fmt::format("{} (mutant {})", s.file, mutant.name);
    auto refuse = [&](const std::string& why) {
        throw ScenarioError(s.file, "/mutants", fmt::format("mutant {}: the patch does not apply: {}", mutant.name, why));
    };
    // One op at a time, each result measured: an op can at most double the document (a "copy" of
    // its root), so neither the values nor the nesting run away before the check.
    json doc = s.source;
    const size_t max_values = json_value_count(doc, std::numeric_limits<size_t>::max()) + k_max_patch_growth;
    for (size_t i = 0; i < mutant.patch.size(); ++i) {
        try {
            doc.patch_inplace(json::array({mutant.patch[i]}));
        } catch (const json::exception& e) {
            refuse(e.what());
        }
        if (const auto at = json_nested_too_deep(doc, k_max_nesting))
            refuse(fmt::format("op {} nests {} more than {} arrays and objects deep", i + 1, *at, k_max_nesting));
        if (json_value_count(doc, max_values) > max_values)
            refuse(fmt::format("op {} grows the lab by more than {} JSON values", i + 1, k_max_patch_growth));
    }
    // A patch may replace the whole document: read_scenario says what a non-object is.
    if (doc.is_object()) doc.erase("mutants");
    Scenario m = read_scenario(Reader(file), doc);
    m.file = s.file;
    m.source = std::move(doc);
    m.mutant = mutant.name;
    m.title = fmt::format("[mutant {}: {}] {}", mutant.name, mutant.change, m.title);
    m.title_vi = fmt::format("[mutant {}: {}] {}", mutant.name, mutant.change, m.title_vi);
    return m;
}

Scenario beside_scenario(const Scenario& s) {
    RELAB_CHECK(s.beside.has_value(), "beside_scenario needs a lab with \"beside\"");
    // The patch applied as a mutant's would be, then the copy's own beside and ratio dropped: it
    // is measured, not judged, and has nothing beside it.
    Scenario m = apply_mutant(s, Mutant{s.beside->name, s.beside->change, s.beside->patch, ""});
    json doc = m.source;
    if (doc.is_object()) {
        doc.erase("beside");
        if (doc.contains("expect") && doc.at("expect").is_object()) doc["expect"].erase("throughput_ratio");
    }
    Scenario b = read_scenario(Reader(fmt::format("{} (beside {})", s.file, s.beside->name)), doc);
    b.file = s.file;
    b.source = std::move(doc);
    b.mutant = s.mutant;
    b.title = fmt::format("[beside {}: {}] {}", s.beside->name, s.beside->change, s.title);
    b.title_vi = fmt::format("[beside {}: {}] {}", s.beside->name, s.beside->change, s.title_vi);
    return b;
}

Scenario with_generated_orders(const Scenario& s, int orders) {
    json doc = s.source;
    if (!doc.contains("generate") || !doc.at("generate").is_object())
        throw ScenarioError(s.file, "/generate", "no generated workload to resize");
    doc["generate"]["orders"] = orders;
    Scenario m = read_scenario(Reader(fmt::format("{} (--orders {})", s.file, orders)), doc);
    m.file = s.file;
    m.source = std::move(doc);
    m.mutant = s.mutant;
    m.title = fmt::format("{} [--orders {}]", s.title, orders);
    m.title_vi = fmt::format("{} [--orders {}]", s.title_vi, orders);
    return m;
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
        // scenarios/schema.json is the JSON Schema of these files, not a lab.
        if (entry.is_regular_file() && entry.path().extension() == ".json" && entry.path().filename() != k_schema_file)
            files.push_back(entry.path());
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
