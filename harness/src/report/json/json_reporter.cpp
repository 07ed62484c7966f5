// The machine-readable report: everything the text report shows plus the full history, the
// scenario as loaded and the seeds, so a run can be inspected or replayed without rerunning it.
#include "report/reporter.h"

#include "ports/seed_text.h"
#include "report/json/idem_json.h"
#include "report/lab_summary.h"
#include "report/shard_facts.h"

namespace relab {

namespace {

template <class T>
nlohmann::json optional_json(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json rows_json(const std::vector<OrderRow>& rows) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows)
        out.push_back({{"id", r.id}, {"status", r.status}, {"version", r.version}, {"amount", r.amount}});
    return out;
}

nlohmann::json stream_json(const std::vector<StreamEntry>& stream) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : stream) {
        nlohmann::json fields = nlohmann::json::object();
        for (const auto& [k, v] : e.fields) fields[k] = v;
        out.push_back({{"id", e.id}, {"fields", std::move(fields)}});
    }
    return out;
}

// Every figure the accounting reports (a lab without side effects carries none of theirs).
nlohmann::json accounting_counts_json(const Accounting& a) {
    nlohmann::json j = nlohmann::json::object();
    for (const AccountingFigure& f : accounting_figures())
        if (reported(f, a)) j[std::string(f.name)] = a.*f.count;
    return j;
}

nlohmann::json accounting_json(const Accounting& a) {
    nlohmann::json j = accounting_counts_json(a);
    nlohmann::json examples = nlohmann::json::object();
    for (const AccountingFigure& f : accounting_figures())
        if (f.examples && reported(f, a)) examples[std::string(f.name)] = a.*f.examples;
    j["examples"] = std::move(examples);
    return j;
}

nlohmann::json trial_json(const TrialOutcome& t, bool stream_lab) {
    nlohmann::json history = nlohmann::json::array();
    for (const auto& r : t.history) history.push_back(to_json(r));
    nlohmann::json delays = nlohmann::json::object();  // keyed by order id as text
    for (const auto& [order, us] : t.publish_delay_us) delays[std::to_string(order)] = us;
    nlohmann::json j = {{"trial", t.trial},
                        {"seed", t.seed},
                        {"wrong", t.wrong},
                        {"wrong_orders", t.wrong_orders},
                        {"unmet", t.unmet},
                        {"publish_delay_us", std::move(delays)},
                        {"final_rows", rows_json(t.final_rows)},
                        {"stream", stream_json(t.stream)},
                        {"history", std::move(history)}};
    if (stream_lab) {
        j["accounting"] = accounting_json(t.accounting);
        j["load"] = desc::write_complete(t.load);
        if (t.soak.measured) j["soak"] = desc::write_complete(t.soak);
        if (!t.role_peak_rss_kb.empty()) j["role_peak_rss_kb"] = t.role_peak_rss_kb;
    }
    return j;
}

// As the text report prints them and --replay reads them: "0x..." (JSON numbers lose 64-bit seeds).
nlohmann::json seeds_json(const std::vector<uint64_t>& seeds) {
    nlohmann::json out = nlohmann::json::array();
    for (uint64_t seed : seeds) out.push_back(seed_text(seed));
    return out;
}

nlohmann::json passage_json(const ArticlePassage& p) {
    return {{"quote_vi", p.quote_vi}, {"section", p.section}, {"text", p.text}, {"text_vi", p.text_vi}};
}

// The article's words (quote_vi and the passages) apart from relab's (text, relab_choice), as the
// scenario has them, so that a report rendered from this JSON can still tell them apart.
nlohmann::json documented_json(const Documented& d) {
    nlohmann::json also = nlohmann::json::array();
    for (const auto& p : d.also) also.push_back(passage_json(p));
    nlohmann::json throughput = nullptr;
    if (d.throughput) {
        throughput = passage_json(d.throughput->passage);
        throughput["per_s"] = d.throughput->per_s;
    }
    return {{"wrong", optional_json(d.wrong)},
            {"of", optional_json(d.of)},
            {"text", d.text},
            {"text_vi", d.text_vi},
            {"article", to_string(d.article)},
            {"article_title", article_title(d.article)},
            {"section", d.section},
            {"quote_vi", d.quote_vi},
            {"relab_choice", d.relab_choice},
            {"relab_choice_vi", d.relab_choice_vi},
            {"throughput", std::move(throughput)},
            {"also", std::move(also)}};
}

nlohmann::json lab_json(const LabResult& lab) {
    const Scenario& s = lab.scenario;
    nlohmann::json trials = nlohmann::json::array();
    for (const auto& t : lab.trials) trials.push_back(trial_json(t, is_stream_lab(lab)));
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : lab.cases) cases.push_back(desc::write_complete(c));
    nlohmann::json summary = {
        {"id", s.id},
        {"trials", lab.total},
        {"planned_trials", lab.planned_trials},
        {"wrong", lab.wrong},
        {"documented", documented_json(s.documented)},
        {"expectation", s.expect.describe()},
        {"held", lab.held},
        {"skipped", lab.skipped},
        {"verdict", verdict_text(verdict_of(lab))},
        {"failures", lab.failures},
        {"delivery_latency_us", desc::write_complete(lab.delivery)},
        {"throughput", desc::write_complete(lab.throughput)},
        {"lock_release_method", lab.lock_release_method},
        {"elapsed_s", lab.elapsed_s},
        {"backend", lab.backend},
        {"wrong_rate", lab.wrong_rate},
        {"ci95", {lab.wrong_rate_low, lab.wrong_rate_high}},
        {"failing_seeds", seeds_json(lab.failing_seeds)},
        {"replay_seed", lab.replay_seed ? nlohmann::json(seed_text(*lab.replay_seed)) : nlohmann::json(nullptr)}};
    if (lab.beside_throughput) {
        summary["beside"] = desc::write_complete(*lab.beside_throughput);
        summary["beside"]["name"] = lab.beside_name;
    }
    if (is_stream_lab(lab) && !lab.trials.empty()) {
        summary["accounting"] = accounting_counts_json(accounting_total(lab));
    }
    // S2 (and S1 as one shard): orders that ended wrong, per trial (the pace is the "throughput"
    // every stream lab has).
    if (const StreamLab* flow = s.flow_if(); flow && flow->shard.enabled) {
        nlohmann::json per_trial = nlohmann::json::array();
        for (const auto& t : lab.trials) per_trial.push_back(t.wrong_orders.size());
        summary["wrong_orders"] = per_trial;
    }
    return {{"id", s.id},
            {"title", s.title},
            {"title_vi", s.title_vi},
            {"output", s.output},
            {"mutant", s.mutant.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.mutant)},
            {"lab_kind", to_string(s.kind)},
            {"backend", lab.backend},
            {"finished_at_us", lab.finished_at_us},
            {"sequence", lab.sequence},
            {"skipped", lab.skipped},
            {"skip_reason", lab.skip_reason},
            {"scenario", s.source},
            {"seed", s.seed},
            {"trials", std::move(trials)},
            {"cases", std::move(cases)},
            {"summary", summary}};
}

class JsonReporter : public Reporter {
public:
    void report(const RunReport& run, std::ostream& out) override {
        // Server messages may carry bytes that are not UTF-8; replace them rather than lose the report.
        out << run_to_json(run).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
};

}  // namespace

nlohmann::json run_to_json(const RunReport& run) {
    nlohmann::json labs = nlohmann::json::array();
    for (const auto& lab : run.labs) {
        nlohmann::json j = lab_json(lab);
        add_idem_json(lab, j);
        labs.push_back(std::move(j));
    }
    const LabCounts n = count_labs(run);
    nlohmann::json out = {{"relab_commit", run.relab_commit},
            {"seed", run.seed},
            {"started_at", run.started_at},
            {"started_at_us", run.started_at_us},
            {"servers", desc::write_complete(run.servers)},
            {"wall_s", run.wall_s},
            {"inherent_s", run.inherent_s},
            {"jobs", run.jobs},
            {"labs", std::move(labs)},
            {"summary",
             {{"labs", n.labs}, {"held", n.held}, {"broken", n.broken}, {"skipped", n.skipped}}}};
    // A shard's report holds its share of each lab's trials; `relab merge` needs every shard.
    if (!run.shard.whole()) out["shard"] = {{"index", run.shard.index}, {"count", run.shard.count}};
    return out;
}

std::unique_ptr<Reporter> make_json_reporter() { return std::make_unique<JsonReporter>(); }

}  // namespace relab
