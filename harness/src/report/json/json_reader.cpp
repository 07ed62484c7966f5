// Reading a JSON report back into a RunReport (the inverse of run_to_json), so that every other
// format can be rendered from saved results. Absent fields take their defaults, so a report
// written by an older relab still reads; a field of the wrong type is an error naming its path.
#include <cstdio>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "ports/seed_text.h"
#include "report/json/idem_json.h"
#include "report/json/json_fields.h"
#include "report/reporter.h"
#include "scenario/loader/loader.h"
#include "util/json_shape.h"

namespace relab {

namespace {

using nlohmann::json;

// The field readers every part of the report shares (json_fields.h); their names are this file's,
// unique in the report layer's unity batches as its own would have to be.
using report_json::array_at;
using report_json::described_field;
using report_json::get;
using report_json::index_path;
using report_json::number_at;
using report_json::object_at;
using report_json::object_field;
using report_json::read_described;
using report_json::strings_at;
using report_json::wrong_type;

uint64_t seed_from_text(const std::string& text, const std::string& path) {
    try {
        return parse_seed(text);
    } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("JSON report: at {}: {}", path, e.what()));
    }
}

// A trial's "accounting" object (json_reporter's accounting_json). A figure a report lacks (one
// written before the figure existed, or a lab's without side effects) is 0, with no examples.
Accounting accounting_from_json(const json& j, const std::string& path) {
    Accounting a;
    const std::string ex_path = path + "/examples";
    const json& ex = object_field(j, path, "examples");
    for (const AccountingFigure& f : accounting_figures()) {
        const std::string name(f.name);
        a.*f.count = get<int>(j, path, name.c_str(), 0);
        if (f.examples) a.*f.examples = strings_at(ex, ex_path, name.c_str());
    }
    return a;
}

// "publish_delay_us": {"<order id>": µs}.
std::map<int64_t, int64_t> publish_delays_from_json(const json& j, const std::string& path) {
    std::map<int64_t, int64_t> out;
    for (const auto& [order, us] : object_field(j, path, "publish_delay_us").items()) {
        const std::string p = path + "/publish_delay_us/" + order;
        const int64_t delay = number_at<int64_t>(us, p);
        try {
            out[std::stoll(order)] = delay;
        } catch (const std::logic_error&) {
            throw std::runtime_error(fmt::format("JSON report: at {}: expected an order id as key", p));
        }
    }
    return out;
}

std::vector<StreamEntry> stream_from_json(const json& j, const std::string& path) {
    std::vector<StreamEntry> out;
    const json& stream = array_at(j, path, "stream");
    for (size_t i = 0; i < stream.size(); ++i) {
        const std::string p = index_path(path, "stream", i);
        StreamEntry e;
        e.id = get<std::string>(stream[i], p, "id", "");
        for (const auto& [k, v] : object_field(stream[i], p, "fields").items()) {
            if (!v.is_string()) wrong_type(p + "/fields/" + k, "a string", v);
            e.fields.emplace_back(k, v.get<std::string>());
        }
        out.push_back(std::move(e));
    }
    return out;
}

// One history record, its fields' types and its time's range checked first: the conversion
// itself is lenient.
HistoryRecord record_from_json(const json& r, const std::string& p) {
    object_at(r, p);
    get<int>(r, p, "trial", 0);
    // A record's time is ns from its trial's start (t_us * 1000 in a report without t_ns). The
    // checker subtracts times: within ±2^62 ns (146 years) no difference overflows.
    constexpr int64_t k_max_ns = int64_t{1} << 62;
    const bool has_ns = r.contains("t_ns") && !r.at("t_ns").is_null();
    const int64_t t_ns = get<int64_t>(r, p, "t_ns", 0);
    const int64_t t_us = get<int64_t>(r, p, "t_us", 0);
    if (has_ns ? (t_ns > k_max_ns || t_ns < -k_max_ns) : (t_us > k_max_ns / 1000 || t_us < -k_max_ns / 1000))
        throw std::runtime_error(fmt::format("JSON report: at {}/{}: expected a time within ±{} ns of the trial's "
                                             "start, got {}", p, has_ns ? "t_ns" : "t_us", k_max_ns,
                                             has_ns ? t_ns : t_us));
    get<std::string>(r, p, "actor", "");
    const std::string op = get<std::string>(r, p, "op", "");
    if (!op_named(op))
        throw std::runtime_error(fmt::format("JSON report: at {}/op: expected a history op (one of {}), got \"{}\"", p,
                                             fmt::join(op_names(), ", "), op));
    return history_record_from_json(r);
}

TrialOutcome trial_from_json(const json& j, const std::string& path) {
    TrialOutcome t;
    t.trial = get<int>(j, path, "trial", 0);
    t.seed = get<uint64_t>(j, path, "seed", 0);
    t.wrong = get<bool>(j, path, "wrong", false);
    t.wrong_orders = strings_at(j, path, "wrong_orders");
    t.unmet = strings_at(j, path, "unmet");
    t.publish_delay_us = publish_delays_from_json(j, path);
    const json& rows = array_at(j, path, "final_rows");
    for (size_t i = 0; i < rows.size(); ++i) {
        const std::string p = index_path(path, "final_rows", i);
        t.final_rows.push_back(OrderRow{get<int64_t>(rows[i], p, "id", 0), get<std::string>(rows[i], p, "status", ""),
                                        get<int64_t>(rows[i], p, "version", 0), get<int64_t>(rows[i], p, "amount", 0)});
    }
    t.stream = stream_from_json(j, path);
    const json& history = array_at(j, path, "history");
    for (size_t i = 0; i < history.size(); ++i)
        t.history.push_back(record_from_json(history[i], index_path(path, "history", i)));
    if (j.contains("accounting") && !j.at("accounting").is_null())
        t.accounting = accounting_from_json(object_field(j, path, "accounting"), path + "/accounting");
    else
        t.accounting = account(t.history);  // a report written before relab kept an accounting
    // A load lab's figures ("load"; absent: none measured) and a soak lab's ("soak": its presence is
    // what says they were measured).
    if (j.contains("load") && j.at("load").is_object())
        t.load = read_described<LoadStats>(j.at("load"), path + "/load");
    if (j.contains("soak") && j.at("soak").is_object()) {
        t.soak = read_described<SoakStats>(j.at("soak"), path + "/soak");
        t.soak.measured = true;
    }
    if (j.contains("role_peak_rss_kb") && j.at("role_peak_rss_kb").is_object())
        for (const auto& [actor, kb] : j.at("role_peak_rss_kb").items())
            if (const auto x = kb.is_number_integer() ? json_number_as<int64_t>(kb) : std::nullopt)
                t.role_peak_rss_kb[actor] = *x;
    return t;
}

// The count part of Expectation::describe() ("wrong = all", "wrong >= 1", ...), for a scenario
// whose source could not be re-read. The rest of the description cannot be rebuilt.
Expectation expectation_from_text(const std::string& text) {
    Expectation e;
    const std::string head = text.substr(0, text.find(';'));
    int n = 0;
    char op[3] = {};
    int lo = 0, hi = 0, of = 0;
    if (std::sscanf(head.c_str(), "wrong in %d..%d of %d", &lo, &hi, &of) >= 2) {
        e.wrong = Expectation::Count::between;
        e.n = lo;
        e.n_max = hi;
        e.of_runs = of;
        return e;
    }
    if (head == "wrong = all")
        e.wrong = Expectation::Count::all;
    else if (head == "wrong = none")
        e.wrong = Expectation::Count::none;
    else if (std::sscanf(head.c_str(), "wrong %2s %d", op, &n) == 2) {
        const std::string o = op;
        e.wrong = o == ">=" ? Expectation::Count::at_least
                  : o == "<=" ? Expectation::Count::at_most
                              : Expectation::Count::exactly;
        e.n = n;
    }
    return e;
}

// The kind of a lab in a report written before relab stored it ("lab_kind"), from what the report
// carries: cases are sessions; idempotency counts ("summary": {"idem"}) an idempotency lab, one
// with clients when a request was sent or an order placed, otherwise one without (the benchmark
// and the cluster lab read the same in every report); anything else a stream lab.
LabKind inferred_lab_kind(const json& lab, const std::string& path, const json& summary, const std::string& summary_path) {
    if (!array_at(lab, path, "cases").empty()) return first_kind_where([](const KindRow& k) { return k.spec == SpecType::sessions; });
    if (!summary.contains("idem")) return first_kind_where([](const KindRow& k) { return k.spec == SpecType::stream; });
    const json& idem = object_field(summary, summary_path, "idem");
    const std::string idem_path = summary_path + "/idem";
    const bool clients = get<int64_t>(idem, idem_path, "sends", 0) > 0 || get<int64_t>(idem, idem_path, "orders", 0) > 0;
    return first_kind_where(
        [clients](const KindRow& k) { return k.spec == SpecType::idem && k.sends_requests == clients; });
}

// What the JSON itself says about a lab's scenario, when its source is not a scenario this
// relab can read: enough for every reporter (orders come from the final rows).
Scenario scenario_from_lab_json(const json& lab, const std::string& path, const json& summary,
                                const std::string& summary_path) {
    Scenario s;
    s.source = lab.contains("scenario") ? lab.at("scenario") : json(nullptr);
    s.set_kind(inferred_lab_kind(lab, path, summary, summary_path));
    s.expect = expectation_from_text(get<std::string>(summary, summary_path, "expectation", ""));
    const json& trials = array_at(lab, path, "trials");
    if (StreamLab* flow = s.flow_if(); flow && !trials.empty()) {
        flow->orders.clear();
        const std::string p = index_path(path, "trials", 0);
        const json& rows = array_at(trials[0], p, "final_rows");
        for (size_t i = 0; i < rows.size(); ++i) {
            OrderSpec o;
            o.id = get<int64_t>(rows[i], index_path(p, "final_rows", i), "id", 0);
            flow->orders.push_back(o);
        }
    }
    return s;
}

ArticlePassage passage_from_json(const json& j, const std::string& path) {
    object_at(j, path);
    return ArticlePassage{get<std::string>(j, path, "quote_vi", ""), get<std::string>(j, path, "section", ""),
                          get<std::string>(j, path, "text", ""), get<std::string>(j, path, "text_vi", "")};
}

// The article's words of "documented" (what documented_json writes); absent in a report written
// before they were, where the embedded scenario, when it parses, has them already.
void read_documented_quotes(const json& doc, const std::string& path, Documented& d) {
    if (doc.contains("article") && !doc.at("article").is_null()) {
        const std::string name = get<std::string>(doc, path, "article", "");
        d.article = article_named(name).value_or(Article::none);
    }
    d.section = get<std::string>(doc, path, "section", d.section);
    d.quote_vi = get<std::string>(doc, path, "quote_vi", d.quote_vi);
    if (doc.contains("throughput") && !doc.at("throughput").is_null()) {
        const std::string tp_path = path + "/throughput";
        d.throughput = DocumentedThroughput{get<double>(doc.at("throughput"), tp_path, "per_s", 0.0),
                                            passage_from_json(doc.at("throughput"), tp_path)};
    }
    if (doc.contains("also")) {
        const json& also = array_at(doc, path, "also");
        d.also.clear();
        for (size_t i = 0; i < also.size(); ++i) d.also.push_back(passage_from_json(also[i], index_path(path, "also", i)));
    }
}

// "summary"/"documented": what the article says, and relab's choice beside it.
void read_summary_documented(const json& summary, const std::string& summary_path, Documented& d) {
    const std::string doc_path = summary_path + "/documented";
    const json& doc = object_field(summary, summary_path, "documented");
    d.text = get<std::string>(doc, doc_path, "text", "");
    d.text_vi = get<std::string>(doc, doc_path, "text_vi", "");
    d.relab_choice = get<std::string>(doc, doc_path, "relab_choice", "");
    d.relab_choice_vi = get<std::string>(doc, doc_path, "relab_choice_vi", d.relab_choice);
    read_documented_quotes(doc, doc_path, d);
    d.wrong = doc.contains("wrong") && !doc.at("wrong").is_null() ? std::optional<int>(get<int>(doc, doc_path, "wrong", 0))
                                                                  : std::nullopt;
    d.of = doc.contains("of") && !doc.at("of").is_null() ? std::optional<int>(get<int>(doc, doc_path, "of", 0))
                                                         : std::nullopt;
}

// The lab's scenario: its embedded source when this relab can parse it, else what the report
// carries; the report's own values (kind, id, titles, seed, documented) win, being what ran.
Scenario lab_scenario(const json& j, const std::string& path, const json& summary, const std::string& summary_path) {
    const std::string id = get<std::string>(j, path, "id", "");
    Scenario s;
    bool parsed = false;
    if (j.contains("scenario") && j.at("scenario").is_object() && !j.at("scenario").empty()) {
        try {
            s = parse_scenario(j.at("scenario").dump(), fmt::format("scenario of lab {} in a JSON report", id));
            parsed = true;
        } catch (const ScenarioError&) {
            // Hand-made or older JSON: fall back on what the report itself carries.
        }
    }
    if (!parsed) s = scenario_from_lab_json(j, path, summary, summary_path);

    if (j.contains("lab_kind") && !j.at("lab_kind").is_null()) {
        const std::string kind = get<std::string>(j, path, "lab_kind", "");
        const auto named = lab_kind_named(kind);
        if (!named)
            throw std::runtime_error(fmt::format("JSON report: at {}/lab_kind: expected one of {}, got \"{}\"", path,
                                                 fmt::join(lab_kind_names(), ", "), kind));
        s.set_kind(*named);
    }
    s.id = id;
    s.title = get<std::string>(j, path, "title", s.title);
    s.title_vi = get<std::string>(j, path, "title_vi", s.title_vi);
    s.output = get<std::string>(j, path, "output", s.output);
    s.seed = get<uint64_t>(j, path, "seed", s.seed);
    read_summary_documented(summary, summary_path, s.documented);
    return s;
}

// The lab's "summary" figures: counts, the delivery latency, throughput, the wrong rate and seeds.
void read_lab_summary(const json& summary, const std::string& summary_path, LabResult& lab) {
    lab.total = get<int>(summary, summary_path, "trials", 0);
    lab.planned_trials = get<int>(summary, summary_path, "planned_trials", 0);
    lab.wrong = get<int>(summary, summary_path, "wrong", 0);
    // A skipped lab never held (older reports wrote held: true for it).
    lab.held = get<bool>(summary, summary_path, "held", false) && !lab.skipped;
    lab.failures = strings_at(summary, summary_path, "failures");
    lab.delivery = described_field<LatencyStats>(summary, summary_path, "delivery_latency_us");
    lab.throughput = described_field<ThroughputStats>(summary, summary_path, "throughput");
    if (summary.contains("beside")) {
        lab.beside_throughput = described_field<ThroughputStats>(summary, summary_path, "beside");
        const json& beside = object_field(summary, summary_path, "beside");
        lab.beside_name = get<std::string>(beside, summary_path + "/beside", "name", "");
    }
    lab.lock_release_method = get<std::string>(summary, summary_path, "lock_release_method", "");
    lab.elapsed_s = get<double>(summary, summary_path, "elapsed_s", 0.0);
    lab.wrong_rate = get<double>(summary, summary_path, "wrong_rate", 0.0);
    const json& ci = array_at(summary, summary_path, "ci95");
    if (ci.size() == 2) {
        const std::string p = summary_path + "/ci95";
        if (!ci[0].is_number()) wrong_type(p + "/0", "a number", ci[0]);
        if (!ci[1].is_number()) wrong_type(p + "/1", "a number", ci[1]);
        lab.wrong_rate_low = ci[0].get<double>();
        lab.wrong_rate_high = ci[1].get<double>();
    }
    for (const auto& text : strings_at(summary, summary_path, "failing_seeds"))
        lab.failing_seeds.push_back(seed_from_text(text, summary_path + "/failing_seeds"));
    const std::string replay = get<std::string>(summary, summary_path, "replay_seed", "");
    if (!replay.empty()) lab.replay_seed = seed_from_text(replay, summary_path + "/replay_seed");
}

LabResult lab_from_json(const json& j, const std::string& path) {
    object_at(j, path);
    const std::string summary_path = path + "/summary";
    const json& summary = object_field(j, path, "summary");

    LabResult lab;
    lab.scenario = lab_scenario(j, path, summary, summary_path);
    lab.backend = get<std::string>(j, path, "backend", "real");
    lab.finished_at_us = get<int64_t>(j, path, "finished_at_us", 0);
    lab.sequence = get<int>(j, path, "sequence", 0);
    lab.skipped = get<bool>(j, path, "skipped", false);
    lab.skip_reason = get<std::string>(j, path, "skip_reason", "");
    const json& trials = array_at(j, path, "trials");
    for (size_t i = 0; i < trials.size(); ++i) lab.trials.push_back(trial_from_json(trials[i], index_path(path, "trials", i)));
    const json& cases = array_at(j, path, "cases");
    for (size_t i = 0; i < cases.size(); ++i) {
        lab.cases.push_back(read_described<CaseOutcome>(cases[i], index_path(path, "cases", i)));
        if (!cases[i].contains("trial")) lab.cases.back().trial = static_cast<int>(i) + 1;  // reports before numbers
    }
    read_lab_summary(summary, summary_path, lab);
    read_idem_json(j, path, lab);
    return lab;
}

}  // namespace

RunReport run_from_json(const json& j) {
    object_at(j, "");
    // relab's reports nest about a dozen levels (a lab's scenario inside the run). Deeper is refused
    // before a scenario or a record is copied or printed: both recurse once a level.
    constexpr size_t k_max_nesting = 100;
    if (const auto at = json_nested_too_deep(j, k_max_nesting))
        throw std::runtime_error(
            fmt::format("JSON report: at {}: nested more than {} arrays and objects deep", *at, k_max_nesting));
    RunReport run;
    run.relab_commit = get<std::string>(j, "", "relab_commit", "");
    run.seed = get<uint64_t>(j, "", "seed", 0);
    run.started_at = get<std::string>(j, "", "started_at", "");
    run.started_at_us = get<int64_t>(j, "", "started_at_us", 0);
    run.servers = described_field<ServerInfo>(j, "", "servers");
    run.wall_s = get<double>(j, "", "wall_s", 0.0);
    run.inherent_s = get<double>(j, "", "inherent_s", 0.0);
    run.jobs = get<int>(j, "", "jobs", 0);
    if (j.contains("shard")) {
        const json& sh = object_field(j, "", "shard");
        const auto shard = parse_run_shard(fmt::format("{}/{}", get<int>(sh, "/shard", "index", 0),
                                                       get<int>(sh, "/shard", "count", 0)));
        if (!shard) throw std::runtime_error("JSON report: at /shard: expected index K and count N with 1 <= K <= N");
        run.shard = *shard;
    }
    const json& labs = array_at(j, "", "labs");
    for (size_t i = 0; i < labs.size(); ++i) run.labs.push_back(lab_from_json(labs[i], index_path("", "labs", i)));
    return run;
}

}  // namespace relab
