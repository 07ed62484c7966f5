#include "report/compare/lab_digest.h"

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "report/lab_summary.h"
#include "util/json_number.h"

namespace relab {

namespace {

using nlohmann::json;

// The figures a JSON report carries, by the same names.
std::map<std::string, int> accounting_counts(const Accounting& a) {
    std::map<std::string, int> m;
    for (const AccountingFigure& f : accounting_figures())
        if (reported(f, a)) m[std::string(f.name)] = a.*f.count;
    return m;
}

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    throw std::runtime_error(fmt::format("lab digest: at {}: {}", where, what));
}

std::string str_field(const json& o, const std::string& where, const char* key, bool required,
                      const std::string& fallback = {}) {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
        if (required) bad(where, fmt::format("\"{}\" is missing", key));
        return fallback;
    }
    if (!it->is_string()) bad(where + "/" + key, "expected a string");
    return it->get<std::string>();
}

template <class T>
T num_field(const json& o, const std::string& where, const char* key, bool required, T fallback = {}) {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
        if (required) bad(where, fmt::format("\"{}\" is missing", key));
        return fallback;
    }
    if (!it->is_number()) bad(where + "/" + key, "expected a number");
    const std::optional<T> x = json_number_as<T>(*it);
    if (!x)
        bad(where + "/" + key, fmt::format("expected a number from {} to {}, got {}", std::numeric_limits<T>::lowest(),
                                           std::numeric_limits<T>::max(), it->dump()));
    return *x;
}

// An optional array of accounting class names ("bounded", "may_appear").
std::vector<std::string> class_list(const json& o, const std::string& where, const char* key) {
    std::vector<std::string> out;
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) return out;
    if (!it->is_array()) bad(where + "/" + key, "expected an array of accounting classes");
    for (const auto& v : *it) {
        if (!v.is_string()) bad(where + "/" + key, "expected an array of accounting classes");
        out.push_back(v.get<std::string>());
    }
    return out;
}

}  // namespace

std::string LabDigest::name() const {
    return mutant.empty() ? fmt::format("{} ({})", id, backend) : fmt::format("{} [{}] ({})", id, mutant, backend);
}

std::string LabDigest::key() const { return id + "\x1f" + mutant + "\x1f" + backend; }

LabDigest digest_lab(const LabResult& lab) {
    const Scenario& s = lab.scenario;
    LabDigest d;
    d.id = s.id;
    d.mutant = s.mutant;
    d.backend = backend_of(lab);
    d.output = s.output;
    d.kind = to_string(s.kind);
    d.verdict = verdict_text(verdict_of(lab));
    d.expectation = s.expect.describe();
    using C = Expectation::Count;
    d.deterministic = s.expect.wrong == C::all || s.expect.wrong == C::none || s.expect.wrong == C::exactly;
    d.trials = lab.total;
    d.wrong = lab.wrong;
    d.wrong_rate = lab.wrong_rate;
    d.ci_low = lab.wrong_rate_low;
    d.ci_high = lab.wrong_rate_high;
    if (is_stream_lab(lab) && !lab.trials.empty()) d.accounting = accounting_counts(accounting_total(lab));
    for (const AccountingFigure& f : accounting_figures())
        if (f.flag == AccountingFlag::anomaly && s.expect.every_trial.band(f.name)) d.bounded.emplace_back(f.name);
    for (const auto& [name, why] : s.expect.may_appear) d.may_appear.push_back(name);
    if (!lab.failures.empty() && verdict_of(lab) == Verdict::broken) d.failure = lab.failures.front();
    d.skip_reason = lab.skip_reason;
    return d;
}

RunDigest digest_run(const RunReport& run) {
    RunDigest d;
    d.relab_commit = run.relab_commit;
    d.seed = run.seed;
    d.started_at = run.started_at;
    d.redis_version = run.servers.redis_version;
    d.pg_version = run.servers.pg_version;
    for (const auto& lab : run.labs) d.labs.push_back(digest_lab(lab));
    return d;
}

bool is_digest_json(const json& j) { return j.is_object() && j.value("format", "") == k_digest_format; }

namespace {

json lab_json(const LabDigest& l) {
    // Rounded so the file does not carry 17 digits of a rate nobody reads that precisely.
    auto round6 = [](double x) { return std::round(x * 1e6) / 1e6; };
    json j = {{"id", l.id},
              {"mutant", l.mutant.empty() ? json(nullptr) : json(l.mutant)},
              {"backend", l.backend},
              {"output", l.output},
              {"kind", l.kind},
              {"verdict", l.verdict},
              {"trials", l.trials},
              {"wrong", l.wrong},
              {"wrong_rate", round6(l.wrong_rate)},
              {"ci95", {round6(l.ci_low), round6(l.ci_high)}},
              {"deterministic", l.deterministic},
              {"expectation", l.expectation}};
    if (!l.accounting.empty()) j["accounting"] = l.accounting;
    if (!l.bounded.empty()) j["bounded"] = l.bounded;
    if (!l.may_appear.empty()) j["may_appear"] = l.may_appear;
    if (!l.failure.empty()) j["failure"] = l.failure;
    if (!l.skip_reason.empty()) j["skip_reason"] = l.skip_reason;
    return j;
}

json header_json(const RunDigest& d) {
    return {{"format", k_digest_format},
            {"relab_commit", d.relab_commit},
            {"seed", d.seed},
            {"started_at", d.started_at},
            {"servers", {{"redis_version", d.redis_version}, {"pg_version", d.pg_version}}}};
}

}  // namespace

json digest_to_json(const RunDigest& d) {
    json j = header_json(d);
    json labs = json::array();
    for (const auto& l : d.labs) labs.push_back(lab_json(l));
    j["lab_digests"] = std::move(labs);
    return j;
}

std::string digest_text(const RunDigest& d) {
    const auto replace = json::error_handler_t::replace;
    std::string text = header_json(d).dump(1, ' ', false, replace);
    // Without the header's closing "\n}": the labs go inside it, one a line.
    text.resize(text.size() - 2);
    text += ",\n \"lab_digests\": [";
    for (size_t i = 0; i < d.labs.size(); ++i)
        text += (i ? ",\n  " : "\n  ") + lab_json(d.labs[i]).dump(-1, ' ', false, replace);
    text += d.labs.empty() ? "]\n}\n" : "\n ]\n}\n";
    return text;
}

RunDigest digest_from_json(const json& j) {
    if (!is_digest_json(j)) bad("/format", fmt::format("expected \"{}\"", k_digest_format));
    RunDigest d;
    d.relab_commit = str_field(j, "", "relab_commit", false);
    d.seed = num_field<uint64_t>(j, "", "seed", false);
    d.started_at = str_field(j, "", "started_at", false);
    if (j.contains("servers") && j.at("servers").is_object()) {
        d.redis_version = str_field(j.at("servers"), "/servers", "redis_version", false);
        d.pg_version = str_field(j.at("servers"), "/servers", "pg_version", false);
    }
    const auto it = j.find("lab_digests");
    if (it == j.end() || !it->is_array()) bad("/lab_digests", "expected an array of labs");
    for (size_t i = 0; i < it->size(); ++i) {
        const std::string where = fmt::format("/lab_digests/{}", i);
        const json& o = it->at(i);
        if (!o.is_object()) bad(where, "expected an object");
        LabDigest l;
        l.id = str_field(o, where, "id", true);
        l.mutant = str_field(o, where, "mutant", false);
        l.backend = str_field(o, where, "backend", false, "real");
        l.output = str_field(o, where, "output", false);
        l.kind = str_field(o, where, "kind", false);
        l.verdict = str_field(o, where, "verdict", true);
        if (l.verdict != "held" && l.verdict != "broken" && l.verdict != "skipped")
            bad(where + "/verdict", fmt::format("expected held, broken or skipped, got \"{}\"", l.verdict));
        l.expectation = str_field(o, where, "expectation", false);
        l.trials = num_field<int>(o, where, "trials", l.verdict != "skipped");
        l.wrong = num_field<int>(o, where, "wrong", l.verdict != "skipped");
        l.wrong_rate = num_field<double>(o, where, "wrong_rate", false, l.trials > 0 ? double(l.wrong) / l.trials : 0.0);
        // Without the flag, a lab that went wrong in every trial or in none is taken as deterministic.
        const auto det = o.find("deterministic");
        if (det != o.end() && !det->is_null()) {
            if (!det->is_boolean()) bad(where + "/deterministic", "expected a boolean");
            l.deterministic = det->get<bool>();
        } else {
            l.deterministic = l.wrong == 0 || l.wrong == l.trials;
        }
        const auto ci = o.find("ci95");
        if (ci != o.end() && !ci->is_null()) {
            if (!ci->is_array() || ci->size() != 2 || !ci->at(0).is_number() || !ci->at(1).is_number())
                bad(where + "/ci95", "expected [low, high]");
            l.ci_low = ci->at(0).get<double>();
            l.ci_high = ci->at(1).get<double>();
        } else if (l.verdict != "skipped") {
            bad(where, "\"ci95\" is missing");
        }
        const auto acc = o.find("accounting");
        if (acc != o.end() && !acc->is_null()) {
            if (!acc->is_object()) bad(where + "/accounting", "expected an object of counts");
            for (const auto& [k, v] : acc->items()) {
                const std::optional<int> count = v.is_number_integer() ? json_number_as<int>(v) : std::nullopt;
                if (!count) bad(where + "/accounting/" + k, "expected a count");
                l.accounting[k] = *count;
            }
        }
        l.bounded = class_list(o, where, "bounded");
        l.may_appear = class_list(o, where, "may_appear");
        l.failure = str_field(o, where, "failure", false);
        l.skip_reason = str_field(o, where, "skip_reason", false);
        d.labs.push_back(std::move(l));
    }
    return d;
}

}  // namespace relab
