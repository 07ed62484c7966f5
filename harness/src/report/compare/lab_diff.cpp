#include "report/compare/lab_diff.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "check/accounting.h"
#include "report/compare/report_dir.h"
#include "report/reporter.h"
#include "report/compare/verdict_recheck.h"

namespace relab {

namespace {

std::string pct(double x) { return fmt::format("{:.1f}", 100 * x); }

// The rate of NEW left OLD's interval (deterministic lab: the rate changed at all).
bool wrong_moved(const LabDigest& o, const LabDigest& n) {
    if (o.trials <= 0 || n.trials <= 0) return false;
    // Cross-multiplied, so 10/10 against 20/20 is no change.
    if (o.deterministic) return int64_t(n.wrong) * o.trials != int64_t(o.wrong) * n.trials;
    const double rate = double(n.wrong) / n.trials;
    const double eps = 1e-9;
    return rate < o.ci_low - eps || rate > o.ci_high + eps;
}

// Whether a digest's list of accounting classes ("bounded", "may_appear") names `cls`.
bool names(const std::vector<std::string>& classes, const std::string& cls) {
    return std::find(classes.begin(), classes.end(), cls) != classes.end();
}

std::string shortened(const std::string& text, size_t max = 160) {
    if (text.size() <= max) return text;
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    return text.substr(0, cut) + "…";
}

LabChange compare(const LabDigest& o, const LabDigest& n) {
    LabChange c;
    c.kind = LabChange::Kind::changed;
    c.lab = n.name();
    c.id = n.id;
    c.mutant = n.mutant;
    c.backend = n.backend;
    const bool o_ran = o.verdict != "skipped";
    const bool n_ran = n.verdict != "skipped";
    if (!o_ran || !n_ran) {
        // Nothing to compare a count with: only whether it ran.
        if (o.verdict != n.verdict)
            c.what.push_back(n_ran ? fmt::format("skipped → {}", n.verdict)
                                   : fmt::format("{} → skipped ({})", o.verdict, shortened(n.skip_reason)));
        return c;
    }
    if (o.verdict == "held" && n.verdict == "broken") {
        c.what.push_back(n.failure.empty() ? "held → broken" : "held → broken (" + shortened(n.failure) + ")");
        c.regression = true;
    } else if (o.verdict != n.verdict) {
        c.what.push_back(fmt::format("{} → {}", o.verdict, n.verdict));
    }
    if (wrong_moved(o, n)) {
        const std::string where = o.deterministic ? "a deterministic lab: any change counts"
                                                  : fmt::format("outside {}–{}%", pct(o.ci_low), pct(o.ci_high));
        c.what.push_back(fmt::format("wrong {}/{} → {}/{} ({})", o.wrong, o.trials, n.wrong, n.trials, where));
        if (n.verdict != "held") c.regression = true;
    }
    if (!o.accounting.empty() && !n.accounting.empty()) {
        for (const AccountingFigure& f : accounting_figures()) {
            if (f.flag != AccountingFlag::anomaly) continue;
            const std::string cls(f.name);
            const auto oi = o.accounting.find(cls);
            const auto ni = n.accounting.find(cls);
            const int before = oi == o.accounting.end() ? 0 : oi->second;
            const int after = ni == n.accounting.end() ? 0 : ni->second;
            if (before == 0 && after > 0) {
                const bool bounded = names(n.bounded, cls);
                const bool allowed = names(n.may_appear, cls);
                c.what.push_back(fmt::format("new accounting anomaly: {} 0 → {}{}", cls, after,
                                             bounded   ? " (within the lab's own bound)"
                                             : allowed ? " (the lab says it may appear)"
                                                       : ""));
                if (!bounded && !allowed) c.regression = true;
            }
        }
    }
    if (!o.expectation.empty() && !n.expectation.empty() && o.expectation != n.expectation)
        c.what.push_back(fmt::format("expectation \"{}\" → \"{}\"", shortened(o.expectation, 100),
                                     shortened(n.expectation, 100)));
    return c;
}

LabChange presence(const LabDigest& l, LabChange::Kind kind) {
    LabChange c;
    c.kind = kind;
    c.lab = l.name();
    c.id = l.id;
    c.mutant = l.mutant;
    c.backend = l.backend;
    if (kind == LabChange::Kind::missing)
        c.what.push_back(fmt::format("in OLD ({}), not in NEW", l.verdict));
    else
        c.what.push_back(fmt::format("not in OLD; {}", l.verdict == "skipped" ? "skipped"
                                                       : fmt::format("{} ({}/{} wrong)", l.verdict, l.wrong, l.trials)));
    return c;
}

const char* tag(const LabChange& c) {
    if (c.regression) return "regression";
    switch (c.kind) {
        case LabChange::Kind::changed: return "changed";
        case LabChange::Kind::missing: return "missing";
        case LabChange::Kind::added: return "new";
    }
    return "?";
}

}  // namespace

DigestDiff diff_digests(const RunDigest& old_run, const RunDigest& new_run, bool strict) {
    std::map<std::string, const LabDigest*> old_by_key, new_by_key;
    for (const auto& l : old_run.labs) old_by_key[l.key()] = &l;  // a key seen twice: the later one
    for (const auto& l : new_run.labs) new_by_key[l.key()] = &l;

    DigestDiff d;
    std::map<std::string, bool> done;
    for (const auto& l : new_run.labs) {
        if (done[l.key()]) continue;
        done[l.key()] = true;
        const LabDigest& n = *new_by_key.at(l.key());
        const auto it = old_by_key.find(l.key());
        if (it == old_by_key.end()) {
            d.changes.push_back(presence(n, LabChange::Kind::added));
            continue;
        }
        ++d.compared;
        LabChange c = compare(*it->second, n);
        if (!c.what.empty()) d.changes.push_back(std::move(c));
    }
    for (const auto& l : old_run.labs) {
        if (new_by_key.count(l.key()) || done[l.key()]) continue;
        done[l.key()] = true;
        LabChange c = presence(*old_by_key.at(l.key()), LabChange::Kind::missing);
        c.regression = strict;
        d.changes.push_back(std::move(c));
    }
    for (const auto& c : d.changes) d.regressions += c.regression ? 1 : 0;
    return d;
}

std::string diff_text(const DigestDiff& d) {
    if (d.no_change()) return fmt::format("no change: {} lab(s) compared\n", d.compared);
    std::string text;
    int changed = 0, missing = 0, added = 0;
    for (const auto& c : d.changes) {
        std::string what;
        for (const auto& w : c.what) what += (what.empty() ? "" : "; ") + w;
        text += fmt::format("{:<10}  {}: {}\n", tag(c), c.lab, what);
        switch (c.kind) {
            case LabChange::Kind::changed: ++changed; break;
            case LabChange::Kind::missing: ++missing; break;
            case LabChange::Kind::added: ++added; break;
        }
    }
    text += fmt::format("{} of {} lab(s) compared changed, {} missing from NEW, {} new; {} regression(s)\n", changed,
                        d.compared, missing, added, d.regressions);
    return text;
}

nlohmann::json diff_json(const DigestDiff& d) {
    nlohmann::json changes = nlohmann::json::array();
    for (const auto& c : d.changes)
        changes.push_back({{"lab", c.lab},
                           {"id", c.id},
                           {"mutant", c.mutant.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.mutant)},
                           {"backend", c.backend},
                           {"status", c.kind == LabChange::Kind::changed   ? "changed"
                                      : c.kind == LabChange::Kind::missing ? "missing"
                                                                           : "new"},
                           {"regression", c.regression},
                           {"what", c.what}});
    return {{"no_change", d.no_change()},
            {"compared", d.compared},
            {"regressions", d.regressions},
            {"changes", std::move(changes)}};
}

namespace {

namespace fs = std::filesystem;

nlohmann::json parse_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path.string() + ": cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return nlohmann::json::parse(text.str());
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range: a number beyond a double
        throw std::runtime_error(path.string() + ": not JSON (" + e.what() +
                                 "); pass a folder of run reports (reports/out) or a digest (reports/reference)");
    }
}

RunDigest digest_of_run_report(const fs::path& path, const nlohmann::json& j, std::vector<std::string>& notes) {
    RunReport run;
    try {
        run = run_from_json(j);
    } catch (const std::exception& e) {
        throw std::runtime_error(path.string() + ": " + e.what());
    }
    for (auto& lab : run.labs) {
        const std::string note = recheck_verdict(lab);
        if (!note.empty()) notes.push_back(fmt::format("{}: lab {}: {}", path.string(), lab.scenario.id, note));
    }
    return digest_run(run);
}

}  // namespace

RunDigest read_digest(const std::string& path_text, std::vector<std::string>& notes) {
    const fs::path path(path_text);
    std::error_code ec;
    if (!fs::exists(path, ec))
        throw std::runtime_error(path_text + " does not exist: pass a folder of run reports (./run_labs.sh fills "
                                             "reports/out) or a lab digest (reports/reference)");
    if (!fs::is_directory(path, ec)) {
        const nlohmann::json j = parse_file(path);
        if (is_digest_json(j)) {
            try {
                return digest_from_json(j);
            } catch (const std::exception& e) {
                throw std::runtime_error(path_text + ": " + e.what());
            }
        }
        if (j.is_object() && j.contains("labs") && j.at("labs").is_array()) return digest_of_run_report(path, j, notes);
        throw std::runtime_error(path_text + ": neither a run report (no \"labs\") nor a lab digest (no \"format\": \"" +
                                 std::string(k_digest_format) + "\")");
    }

    std::vector<std::string> files;
    int tests = 0;
    for (const auto& entry : fs::directory_iterator(path)) {
        if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
        // `./run_labs.sh test` leaves its labs' runs here; they are tests' runs (some with other
        // settings), not the full run a reference is compared with.
        if (entry.path().filename().string().rfind("test-", 0) == 0) {
            ++tests;
            continue;
        }
        files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    if (tests > 0)
        notes.push_back(fmt::format("{}: left out {} test-*.json (the lab tests' runs, not a full run)", path_text, tests));
    SavedReports saved = read_report_files(files);
    for (const auto& f : saved.ignored) notes.push_back(f + ": left out (neither a run report nor a lab digest)");
    for (const auto& n : saved.notes) notes.push_back(n);
    if (!saved.files.empty() && !saved.digests.empty())
        throw std::runtime_error(fmt::format("{} holds both run reports ({}) and lab digests ({}): pass the digest file "
                                             "itself, or a folder with one kind",
                                             path_text, saved.files.front(), saved.digests.front()));
    if (!saved.files.empty()) return digest_run(saved.run);
    if (saved.digests.empty())
        throw std::runtime_error(path_text + " holds no run reports and no lab digest: run the labs first "
                                             "(./run_labs.sh writes reports/out) or pass reports/reference");
    // Several digest files: their labs together, a lab in two of them as the later file has it.
    RunDigest merged;
    for (const auto& f : saved.digests) {
        RunDigest d;
        try {
            d = digest_from_json(parse_file(f));
        } catch (const std::exception& e) {
            throw std::runtime_error(f + ": " + e.what());
        }
        if (merged.labs.empty()) {
            merged = std::move(d);
            continue;
        }
        for (auto& l : d.labs) merged.labs.push_back(std::move(l));
    }
    return merged;
}

}  // namespace relab
