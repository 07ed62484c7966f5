#include "report/json/idem_json.h"

#include "report/json/json_fields.h"

namespace relab {

namespace {

using nlohmann::json;

json counts_json(const IdemCounts& c) {
    return {{"sends", c.sends},         {"orders", c.orders},     {"duplicates", c.duplicates},
            {"created", c.created},     {"replays", c.replays},   {"conflicts_409", c.conflicts},
            {"mismatches_422", c.mismatches}, {"layer4_caught", c.layer4}, {"errors_5xx", c.errors},
            {"leaks", c.leaks},         {"unanswered", c.unanswered}, {"vanished", c.vanished}};
}

// The counts as counts_json wrote them, at `path`.
IdemCounts counts_from_json(const json& j, const std::string& path) {
    using report_json::get;
    IdemCounts c;
    c.sends = get<int>(j, path, "sends", 0);
    c.orders = get<int>(j, path, "orders", 0);
    c.duplicates = get<int>(j, path, "duplicates", 0);
    c.created = get<int>(j, path, "created", 0);
    c.replays = get<int>(j, path, "replays", 0);
    c.conflicts = get<int>(j, path, "conflicts_409", 0);
    c.mismatches = get<int>(j, path, "mismatches_422", 0);
    c.layer4 = get<int>(j, path, "layer4_caught", 0);
    c.errors = get<int>(j, path, "errors_5xx", 0);
    c.leaks = get<int>(j, path, "leaks", 0);
    c.unanswered = get<int>(j, path, "unanswered", 0);
    c.vanished = get<int>(j, path, "vanished", 0);
    return c;
}

}  // namespace

void add_idem_json(const LabResult& lab, json& lab_json) {
    for (size_t i = 0; i < lab.cases.size() && lab_json.contains("cases"); ++i)
        for (size_t k = 0; k < lab.cases[i].steps.size(); ++k)
            if (lab.cases[i].steps[k].redis) lab_json["cases"][i]["steps"][k]["redis"] = true;
    if (!is_idem(lab.scenario.kind)) return;
    IdemCounts total;
    for (size_t i = 0; i < lab.trials.size(); ++i) {
        const IdemTrial& t = lab.trials[i].idem;
        total.add(t.counts);
        json orders = json::array();
        for (const auto& o : t.orders)
            orders.push_back({{"id", o.id}, {"user_id", o.user_id}, {"idem_key", o.idem_key}, {"payload", o.payload}});
        lab_json["trials"][i]["idem"] = {{"counts", counts_json(t.counts)},
                                         {"orders", std::move(orders)},
                                         {"leak_examples", t.leak_examples}};
    }
    json measurements = json::array();
    for (const auto& m : lab.measurements)
        measurements.push_back({{"label", m.label},
                                {"label_vi", m.label_vi},
                                {"measured", m.measured},
                                {"documented", m.documented},
                                {"reason", m.reason},
                                {"reason_vi", m.reason_vi}});
    lab_json["summary"]["idem"] = counts_json(total);
    lab_json["summary"]["measurements"] = std::move(measurements);
}

void read_idem_json(const json& lab_json, const std::string& path, LabResult& lab) {
    using report_json::array_at;
    using report_json::get;
    using report_json::index_path;
    using report_json::object_field;
    // run_from_json has read the cases and trials, checked as arrays of objects; what is added
    // here is checked the same way, each refusal naming its JSON Pointer.
    const json& cases = array_at(lab_json, path, "cases");
    for (size_t i = 0; i < lab.cases.size() && i < cases.size(); ++i) {
        const std::string case_path = index_path(path, "cases", i);
        const json& steps = array_at(cases[i], case_path, "steps");
        for (size_t k = 0; k < lab.cases[i].steps.size() && k < steps.size(); ++k)
            lab.cases[i].steps[k].redis = get<bool>(steps[k], index_path(case_path, "steps", k), "redis", false);
    }
    const json& trials = array_at(lab_json, path, "trials");
    for (size_t i = 0; i < lab.trials.size() && i < trials.size(); ++i) {
        const std::string trial_path = index_path(path, "trials", i);
        const auto it = trials[i].find("idem");
        if (it == trials[i].end() || !it->is_object()) continue;
        const json& idem = *it;
        const std::string idem_path = trial_path + "/idem";
        IdemTrial& out = lab.trials[i].idem;
        out.counts = counts_from_json(object_field(idem, idem_path, "counts"), idem_path + "/counts");
        const json& orders = array_at(idem, idem_path, "orders");
        for (size_t k = 0; k < orders.size(); ++k) {
            const std::string p = index_path(idem_path, "orders", k);
            out.orders.push_back(PlacedOrder{get<int64_t>(orders[k], p, "id", 0), get<int64_t>(orders[k], p, "user_id", 0),
                                             get<std::string>(orders[k], p, "idem_key", ""),
                                             get<std::string>(orders[k], p, "payload", "")});
        }
        out.leak_examples = report_json::strings_at(idem, idem_path, "leak_examples");
    }
    const auto summary = lab_json.find("summary");
    if (summary != lab_json.end() && summary->is_object()) {
        const std::string summary_path = path + "/summary";
        const json& measurements = array_at(*summary, summary_path, "measurements");
        for (size_t k = 0; k < measurements.size(); ++k) {
            const json& m = measurements[k];
            const std::string p = index_path(summary_path, "measurements", k);
            lab.measurements.push_back({get<std::string>(m, p, "label", ""), get<std::string>(m, p, "measured", ""),
                                        get<std::string>(m, p, "documented", ""), get<std::string>(m, p, "reason", ""),
                                        get<std::string>(m, p, "reason_vi", ""), get<std::string>(m, p, "label_vi", "")});
        }
    }
}

}  // namespace relab
