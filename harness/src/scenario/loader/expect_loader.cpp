// The expectation's parts: a band, a record to match, each term by its shape (read_term), may_appear.
#include "scenario/loader/expect_loader.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace relab::scenario_json {

namespace {

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
        if (counts_cases(kind))
            o.reader().fail(o.path(key), "applies only to kind \"workload\" (sessions have no trial history)");
        read_term(row, o, key, t);
    }
}

// The fields of `expect` (top) or of every_wrong_trial: `others`, then every term's key there.
std::vector<std::string> expect_fields(std::vector<std::string> others, bool top) {
    for (const TermRow& row : term_rows()) others.push_back(term_key(row, top));
    return others;
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

}  // namespace

void check_term_needs(const Reader& r, const Scenario& s, const std::string& expect_path) {
    const StreamLab* flow = s.flow_if();  // what a term needs is a part of a stream lab
    auto met = [&](TermNeeds needs) {
        switch (needs) {
            case TermNeeds::nothing: return true;
            case TermNeeds::side_effects: return flow && flow->write.side_effect;
            case TermNeeds::soak: return flow && flow->soak.enabled;
            case TermNeeds::isolation: return flow && flow->write.isolation != WriteIsolation::none;
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
        if (!has_stream(kind))
            r.fail(o.path("throughput_ratio"), "applies only to stream labs (\"kind\": \"workload\"), whose writes give a pace");
        Object t(r, o.at("throughput_ratio"), o.path("throughput_ratio"), {"at_least"});
        const json& floor = t.at("at_least");
        if (!floor.is_number() || floor.get<double>() <= 0)
            r.expected(t.path("at_least"), "a number above 0 (the lab's jobs/s over the arrangement's beside)", floor);
        e.throughput_ratio_at_least = floor.get<double>();
    }
    if (o.has("until_wrong")) {
        // A session lab's cases and the benchmark's one measurement are not trials that may go either way.
        if (!kind_row(kind).repeats)
            r.fail(o.path("until_wrong"), "applies only to labs whose trials repeat (workloads, idempotency clients, "
                                          "the cluster lab); a session lab's cases and a benchmark run once");
        Object u(r, o.at("until_wrong"), o.path("until_wrong"), {"max_runs"});
        e.until_wrong_max_runs = static_cast<int>(u.req_int("max_runs", trials + 1, k_int_max));
        if (e.wrong != Expectation::Count::at_least && e.wrong != Expectation::Count::between)
            r.fail(o.path("until_wrong"), "needs \"wrong\" with \"at_least\": more trials are run until that many went wrong");
    }
    return e;
}

}  // namespace relab::scenario_json
