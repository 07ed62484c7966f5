#include "report/text/idem_text.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "check/record_fields.h"
#include "ports/seed_text.h"
#include "report/idem_facts.h"
#include "scenario/lab_kind.h"
#include "report/text/text_sections.h"
#include "report/text/text_words.h"
#include "report/text/timeline.h"
#include "util/json_number.h"

namespace relab {

namespace {

// A simulated lab may have thousands of trials: the counts of its first few are printed one by one.
constexpr size_t k_trial_counts_shown = 20;

std::string text_of(const nlohmann::json& d, const char* key) {
    if (!d.is_object() || !d.contains(key) || d.at(key).is_null()) return "";
    const auto& v = d.at(key);
    return v.is_string() ? v.get<std::string>() : v.dump();
}

int64_t int_of(const nlohmann::json& d, const char* key, int64_t fallback = 0) {
    if (!d.is_object() || !d.contains(key)) return fallback;
    return json_number_as<int64_t>(d.at(key)).value_or(fallback);  // a number int64_t cannot hold: the fallback
}

std::string ttl_text(int64_t ms) { return ms % 1000 == 0 ? fmt::format("EX {}", ms / 1000) : fmt::format("PX {}", ms); }

std::string idem_time_text(int64_t t_ns) {
    const int64_t ms = t_ns >= 0 ? t_ns / 1'000'000 : -((-t_ns + 999'999) / 1'000'000);
    return fmt::format("t={:>5} ms", ms);
}

// A stored state as the timeline shows it: {in_progress} or {done,201,{"order_id":1}}.
std::string state_text(const std::string& value) {
    const auto j = nlohmann::json::parse(value, nullptr, false);
    if (!j.is_object()) return value;
    std::string out = "{" + text_of(j, "status");
    if (j.contains("user_id")) out += ",user " + text_of(j, "user_id");
    if (j.contains("code")) out += "," + text_of(j, "code") + "," + text_of(j, "body");
    return out + "}";
}

// A server's error as the timeline shows it: without relab's key prefix (relab:<run>:<lab>:t<n>:),
// so keys read as the lab names them.
std::string error_text(const nlohmann::json& d) {
    static const std::regex k_prefix{R"(relab:[0-9a-f]{8}:[a-z0-9-]+:t[0-9]+:)"};
    return std::regex_replace(text_of(d, "error"), k_prefix, "");
}

std::string describe(const HistoryRecord& r) {
    const auto& d = r.data;
    const std::string& pad = r.actor;  // the middleware runs in the client's process
    if (r.op == Op::send) {
        std::string text = fmt::format("{} POST /orders user {}, Idempotency-Key {}", r.actor, text_of(d, "user_id"),
                                       text_of(d, "client_key"));
        if (int_of(d, "attempt") > 1) text += fmt::format(" (attempt {})", int_of(d, "attempt"));
        return text + " " + text_of(d, "payload");
    }
    if (r.op == Op::claim) {
        const std::string prev = text_of(d, "previous");
        if (text_of(d, "via") == "add_get") {
            // Cache::add() then Cache::get(): two calls, shown as two.
            std::string text = fmt::format("{}   Cache::add {} {{in_progress}} {} → ", pad, text_of(d, "key"),
                                           ttl_text(int_of(d, "ttl_ms")));
            if (d.contains("error")) return text + "ERROR " + error_text(d);
            const std::string decision = text_of(d, "decision");
            if (decision == "first") return text + "true: first";
            return text + "false; Cache::get → " + (prev.empty() ? "null" : state_text(prev)) + ": " + decision;
        }
        std::string text = fmt::format("{}   SET {} {{in_progress}} NX GET {} → ", pad, text_of(d, "key"),
                                       ttl_text(int_of(d, "ttl_ms")));
        if (d.contains("error")) return text + "ERROR " + error_text(d);
        return text + (prev.empty() ? "(nil)" : state_text(prev)) + ": " + text_of(d, "decision");
    }
    if (r.op == Op::wait) {
        if (d.contains("error")) return fmt::format("{}   WAIT → ERROR {}", pad, error_text(d));
        return fmt::format("{}   WAIT {} {} → {} (after the {})", pad, text_of(d, "wanted"), text_of(d, "timeout_ms"),
                           text_of(d, "acked"), text_of(d, "after"));
    }
    if (r.op == Op::order) {
        if (d.contains("refused"))
            return fmt::format("{}   INSERT INTO orders (idem_key '{}') → unique violation: layer 4 caught a duplicate", pad,
                               text_of(d, "idem_key"));
        return fmt::format("{}   INSERT INTO orders (idem_key '{}') → order {}", pad, text_of(d, "idem_key"),
                           text_of(d, "order_id"));
    }
    if (r.op == Op::business_error) return fmt::format("{}   business logic threw ({})", pad, text_of(d, "reason"));
    if (r.op == Op::release) {
        if (d.contains("error")) return fmt::format("{}   DEL {} → ERROR {}", pad, text_of(d, "key"), error_text(d));
        return fmt::format("{}   DEL {} → (integer) {} ({})", pad, text_of(d, "key"), text_of(d, "deleted"),
                           text_of(d, "reason"));
    }
    if (r.op == Op::store) {
        const std::string ttl = d.contains("keepttl") ? "KEEPTTL" : ttl_text(int_of(d, "ttl_ms"));
        std::string text = fmt::format("{}   SET {} {{done}} XX {} → ", pad, text_of(d, "key"), ttl);
        if (d.contains("error")) return text + "ERROR " + error_text(d);
        return text + (record_fields::bool_field(d, "written") ? "OK" : "(nil): the key is gone, nothing stored");
    }
    if (r.op == Op::answer)
        return fmt::format("{} ← {} {} ({})", r.actor, text_of(d, "code"), text_of(d, "body"), text_of(d, "source"));
    if (r.op == Op::fault && r.actor == "nemesis") {  // Jepsen's nemesis op: invoke, then ok or fail
        const std::string head =
            fmt::format("nemesis: fault {} {}", text_of(d, "fault"), fault_words(d));
        const std::string phase = text_of(d, "phase");
        if (phase == "invoke") return head + " …";
        if (phase == "ok") return head + " → ok: " + text_of(d, "text");
        return head + " → failed: " + text_of(d, "error");
    }
    if (r.op == Op::fault || r.op == Op::observe) return r.actor + " " + text_of(d, "text");
    return r.actor + " " + to_string(r.op) + (d.empty() ? std::string{} : " " + d.dump());
}

std::string counts_text(const IdemWords& w, const IdemCounts& c) {
    return fmt::format(fmt::runtime(w.counts), c.orders, c.duplicates, c.created, c.replays, c.conflicts, c.mismatches,
                       c.layer4, c.errors, c.leaks, c.sends);
}

void print_measurements(const LabResult& lab, Lang lang, std::ostream& out) {
    if (lab.measurements.empty()) return;
    const IdemWords& w = idem_words(lang);
    out << "  " << w.measured_title << '\n';
    for (const auto& m : lab.measurements) {
        out << "    " << pick(lang, m.label, m.label_vi) << ": " << m.measured;
        if (!m.documented.empty()) out << "   (" << w.article << ' ' << m.documented << ')';
        out << '\n';
        const std::string& reason = pick(lang, m.reason, m.reason_vi);
        if (!reason.empty()) out << "      " << w.why << ' ' << reason << '\n';
    }
}

}  // namespace

std::string idem_record_text(const HistoryRecord& r) { return describe(r); }

void print_idem_workload(const LabResult& lab, Lang lang, TimelineSelection timelines, std::ostream& out) {
    const IdemWords& w = idem_words(lang);
    const IdemSpec& idem = lab.scenario.idem();
    const std::string& scaling = pick(lang, idem.scaling, idem.scaling_vi);
    if (!scaling.empty()) out << "  " << w.scaling << ' ' << scaling << '\n';
    for (const TrialOutcome* t : selected_trials(lab.trials, timelines)) {
        if (t->history.empty()) continue;
        out << w.trial << ' ' << t->trial;
        if (lab.backend == "sim") out << " (seed " << seed_text(t->seed) << ")";
        out << '\n';
        for (const auto& r : t->history) {
            if (r.op == Op::start) continue;
            out << "  " << idem_time_text(r.t_ns) << "  " << describe(r) << '\n';
        }
        for (const auto& leak : t->idem.leak_examples) out << "  ✕ " << leak << '\n';
    }
    // A lab without clients (the benchmark, the cluster lab) sends no request: no counts to show.
    if (!sends_requests(lab.scenario.kind)) {
        print_measurements(lab, lang, out);
        return;
    }
    IdemCounts total;
    size_t shown = 0;
    const size_t limit = lab.backend == "sim" ? k_trial_counts_shown : lab.trials.size();
    for (const auto& t : lab.trials) {
        total.add(t.idem.counts);
        if (lab.trials.size() > 1 && shown < limit) {
            out << "  " << w.trial << ' ' << t.trial << ": " << counts_text(w, t.idem.counts) << '\n';
            ++shown;
        }
    }
    if (lab.trials.size() > 1 && shown < lab.trials.size())
        out << "  " << fmt::format(fmt::runtime(w.more_trials), lab.trials.size() - shown) << '\n';
    if (!lab.trials.empty())
        out << "  " << (lab.trials.size() > 1 ? std::string(w.total) + ": " : "") << counts_text(w, total) << '\n';
    print_measurements(lab, lang, out);
}

// Idempotency labs: requests, answers and orders (or the figures) instead of a stream.
void write_idem_text(const TextContext& tc, const LabResult& lab, std::ostream& out) {
    print_idem_workload(lab, tc.opts.lang, tc.opts.timelines, out);
    if (lab.backend == "sim") write_wrong_rate_text(tc, lab, out);
    write_verdict_text(tc, lab, out);
}

}  // namespace relab
