#include "report/text/idem_text.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "check/record_fields.h"
#include "ports/seed_text.h"
#include "report/idem_facts.h"
#include "report/text/timeline.h"
#include "util/json_number.h"

namespace relab {

namespace {

struct IdemWords {
    const char* article;        // "article:"
    const char* why;            // "why:"
    const char* projection;     // "× {keys} ({label}) = {bytes}"
    const char* trial;
    const char* counts;         // per trial / total
    const char* total;
    const char* measured_title;
    const char* scaling;
    const char* no_answer;
    const char* more_trials;
};

// A simulated lab may have thousands of trials: the counts of its first few are printed one by one.
constexpr size_t k_trial_counts_shown = 20;

constexpr IdemWords k_idem_en{"article:", "why:", "× {} ({}) = {}", "trial",
                              "orders {} (duplicates {}) | 201: {} | replays: {} | 409: {} | 422: {} | layer 4 caught: {} | "
                              "5xx: {} | leaks: {} | sends: {}",
                              "all trials", "measured on this machine, beside the article:", "time scale:",
                              "(no answer: the client process was killed)", "… ({} more trials, counted in the total)"};
constexpr IdemWords k_idem_vi{"bài viết:", "vì sao:", "× {} ({}) = {}", "lần",
                              "đơn {} (trùng {}) | 201: {} | replay: {} | 409: {} | 422: {} | tầng 4 chặn: {} | "
                              "5xx: {} | lộ dữ liệu: {} | số request: {}",
                              "mọi lần", "đo trên máy này, bên cạnh số của bài viết:", "tỉ lệ thời gian:",
                              "(không có phản hồi: process client bị kill)", "… (thêm {} lần, đã cộng vào tổng)"};

const IdemWords& words(Lang lang) { return lang == Lang::vi ? k_idem_vi : k_idem_en; }

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
    const IdemWords& w = words(lang);
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

std::string decimal_bytes(double bytes) {
    const char* units[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1000 && u < 4) {
        bytes /= 1000;
        ++u;
    }
    return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

bool is_redis_case(const SessionCase& spec) {
    return std::any_of(spec.sessions.begin(), spec.sessions.end(),
                       [](const SessionSpec& s) { return s.client == "redis"; });
}

void print_redis_case(const CaseOutcome& c, const SessionCase& spec, Lang lang, std::ostream& out) {
    const IdemWords& w = words(lang);
    out << "--- " << pick(lang, c.title, c.title_vi) << '\n';
    const std::vector<const SessionStep*> specs = step_specs(c, spec);
    for (size_t k = 0; k < c.steps.size(); ++k) {
        const StepOutcome& step = c.steps[k];
        const SessionStep* step_spec = specs[k];
        if (!step.redis) {
            out << step.session << "=# " << step.sql << '\n' << (step.error.empty() ? step.tag : "ERROR:  " + step.error) << '\n';
            continue;
        }
        out << step.session << "> " << step.sql << '\n';
        out << reply_text(step);
        const RedisStep* rs = step_spec && step_spec->redis ? &*step_spec->redis : nullptr;
        if (rs && !rs->documented.empty()) out << "      ← " << w.article << ' ' << rs->documented;
        out << '\n';
        if (rs && rs->project) {
            if (const auto total = projected_total(step, *rs->project)) {
                out << "  "
                    << fmt::format(fmt::runtime(w.projection), with_thousands(rs->project->keys),
                                   pick(lang, rs->project->label, rs->project->label_vi), *total);
                if (!rs->project->documented.empty()) out << "      ← " << w.article << ' ' << rs->project->documented;
                out << '\n';
            }
        }
        if (rs && !pick(lang, rs->note, rs->note_vi).empty()) out << "  " << w.why << ' ' << pick(lang, rs->note, rs->note_vi) << '\n';
        if (!step.ok) out << "  ✕ " << step.failure << '\n';
    }
}

void print_idem_workload(const LabResult& lab, Lang lang, TimelineSelection timelines, std::ostream& out) {
    const IdemWords& w = words(lang);
    const IdemSpec& idem = lab.scenario.idem;
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
    if (lab.scenario.kind != LabKind::idem_clients) {
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

}  // namespace relab
