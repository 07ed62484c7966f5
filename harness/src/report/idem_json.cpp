#include "report/idem_json.h"

namespace relab {

namespace {

using nlohmann::json;

json counts_json(const IdemCounts& c) {
    return {{"sends", c.sends},         {"orders", c.orders},     {"duplicates", c.duplicates},
            {"created", c.created},     {"replays", c.replays},   {"conflicts_409", c.conflicts},
            {"mismatches_422", c.mismatches}, {"layer4_caught", c.layer4}, {"errors_5xx", c.errors},
            {"leaks", c.leaks},         {"unanswered", c.unanswered}};
}

IdemCounts counts_from_json(const json& j) {
    IdemCounts c;
    c.sends = j.value("sends", 0);
    c.orders = j.value("orders", 0);
    c.duplicates = j.value("duplicates", 0);
    c.created = j.value("created", 0);
    c.replays = j.value("replays", 0);
    c.conflicts = j.value("conflicts_409", 0);
    c.mismatches = j.value("mismatches_422", 0);
    c.layer4 = j.value("layer4_caught", 0);
    c.errors = j.value("errors_5xx", 0);
    c.leaks = j.value("leaks", 0);
    c.unanswered = j.value("unanswered", 0);
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

void read_idem_json(const json& lab_json, LabResult& lab) {
    if (lab_json.contains("cases") && lab_json["cases"].is_array())
        for (size_t i = 0; i < lab.cases.size() && i < lab_json["cases"].size(); ++i) {
            const json& steps = lab_json["cases"][i].value("steps", json::array());
            for (size_t k = 0; k < lab.cases[i].steps.size() && k < steps.size(); ++k)
                lab.cases[i].steps[k].redis = steps[k].value("redis", false);
        }
    if (lab_json.contains("trials") && lab_json["trials"].is_array())
        for (size_t i = 0; i < lab.trials.size() && i < lab_json["trials"].size(); ++i) {
            const json& t = lab_json["trials"][i];
            if (!t.contains("idem") || !t["idem"].is_object()) continue;
            IdemTrial& out = lab.trials[i].idem;
            out.counts = counts_from_json(t["idem"].value("counts", json::object()));
            for (const auto& o : t["idem"].value("orders", json::array()))
                out.orders.push_back(PlacedOrder{o.value("id", int64_t{0}), o.value("user_id", int64_t{0}),
                                                 o.value("idem_key", ""), o.value("payload", "")});
            out.leak_examples = t["idem"].value("leak_examples", std::vector<std::string>{});
        }
    if (lab_json.contains("summary") && lab_json["summary"].is_object())
        for (const auto& m : lab_json["summary"].value("measurements", json::array()))
            lab.measurements.push_back({m.value("label", ""), m.value("measured", ""), m.value("documented", ""),
                                        m.value("reason", ""), m.value("reason_vi", ""), m.value("label_vi", "")});
}

}  // namespace relab
