#include "report/compare/shard_merge.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "check/run_shard.h"

namespace relab {

namespace {

// Every shard 1..N exactly once, of one run.
void check_shards(const std::vector<RunReport>& shards) {
    if (shards.empty()) throw std::runtime_error("relab merge: no report to merge; give each shard's folder or file");
    const int n = shards.front().shard.count;
    std::map<int, int> seen;
    for (const auto& r : shards) {
        if (r.shard.count != n)
            throw std::runtime_error(fmt::format("relab merge: shard {} is of a run split {} ways, shard {} of one "
                                                 "split {} ways; merge the shards of one run",
                                                 to_string(r.shard), r.shard.count, to_string(shards.front().shard), n));
        if (++seen[r.shard.index] > 1)
            throw std::runtime_error(fmt::format("relab merge: shard {} is given twice", to_string(r.shard)));
        if (r.seed != shards.front().seed || r.relab_commit != shards.front().relab_commit)
            throw std::runtime_error(fmt::format(
                "relab merge: shard {} ran with seed {} at commit {}, shard {} with seed {} at commit {}: the "
                "shards of one run share both",
                to_string(r.shard), r.seed, r.relab_commit, to_string(shards.front().shard), shards.front().seed,
                shards.front().relab_commit));
    }
    for (int k = 1; k <= n; ++k)
        if (!seen.count(k))
            throw std::runtime_error(fmt::format("relab merge: shard {}/{} is missing; give all {} shards' reports", k,
                                                 n, n));
}

std::string shard_lab_key(const LabResult& l) { return l.scenario.id + "\t" + l.scenario.mutant + "\t" + l.backend; }

// The trials one run would have run: 1, 2, ... while the planned trials or until_wrong ask for more.
template <class T>
void cut_to_one_run(const LabResult& lab, std::vector<T>& items) {
    std::sort(items.begin(), items.end(), [](const T& a, const T& b) { return a.trial < b.trial; });
    const Expectation& e = lab.scenario.expect;
    int wrong = 0;
    size_t i = 0;
    for (; i < items.size(); ++i) {
        const int want = static_cast<int>(i) + 1;
        if (!(want <= lab.planned_trials || e.wants_more(wrong, want - 1))) break;
        if (items[i].trial != want)
            throw std::runtime_error(fmt::format("relab merge: lab {} has no trial {} in any shard (next is {}); "
                                                 "give every shard's report",
                                                 lab.scenario.id, want, items[i].trial));
        if (items[i].wrong) ++wrong;
    }
    items.resize(i);
}

void keep_one_runs_histories(LabResult& lab) {
    KeepPolicy policy(lab.scenario, lab.planned_trials, KeepRule{});
    for (auto& t : lab.trials)
        if (!policy.keeps(t.trial, t.wrong, t.history.size())) {
            t.history = std::vector<HistoryRecord>();
            t.stream = std::vector<StreamEntry>();
        }
}

LabResult merge_lab(std::vector<LabResult*> parts) {
    LabResult out = *parts.front();
    // A report of a run without the figure (or a whole run given alone): its own trials were planned.
    if (out.planned_trials == 0) out.planned_trials = std::max(out.total, 1);
    out.trials.clear();
    out.cases.clear();
    out.measurements.clear();
    out.elapsed_s = 0;
    for (LabResult* p : parts) {
        out.elapsed_s += p->elapsed_s;
        out.finished_at_us = std::max(out.finished_at_us, p->finished_at_us);
        if (out.lock_release_method.empty()) out.lock_release_method = p->lock_release_method;
        const bool has_first = std::any_of(p->trials.begin(), p->trials.end(), [](const auto& t) { return t.trial == 1; });
        if (has_first) out.measurements = p->measurements;  // a lab's figures are trial 1's
        for (auto& t : p->trials) out.trials.push_back(std::move(t));
        for (auto& c : p->cases) out.cases.push_back(std::move(c));
    }
    cut_to_one_run(out, out.trials);
    cut_to_one_run(out, out.cases);
    keep_one_runs_histories(out);
    summarize(out);
    return out;
}

}  // namespace

RunReport merge_shards(std::vector<RunReport> shards) {
    check_shards(shards);
    std::sort(shards.begin(), shards.end(), [](const RunReport& a, const RunReport& b) { return a.shard.index < b.shard.index; });
    RunReport out = shards.front();
    out.labs.clear();
    out.shard = RunShard{};
    out.inherent_s = 0;
    out.jobs = 0;
    for (const auto& r : shards) {
        if (r.labs.size() != shards.front().labs.size())
            throw std::runtime_error(fmt::format("relab merge: shard {} has {} labs, shard {} has {}: the shards of one "
                                                 "run run the same labs",
                                                 to_string(r.shard), r.labs.size(), to_string(shards.front().shard),
                                                 shards.front().labs.size()));
        out.wall_s = std::max(out.wall_s, r.wall_s);
        out.inherent_s += r.inherent_s;
        out.jobs += std::max(r.jobs, 1);
        if (!r.started_at.empty() && (out.started_at.empty() || r.started_at < out.started_at)) out.started_at = r.started_at;
    }
    for (size_t i = 0; i < shards.front().labs.size(); ++i) {
        std::vector<LabResult*> parts;
        for (auto& r : shards) {
            if (shard_lab_key(r.labs[i]) != shard_lab_key(shards.front().labs[i]))
                throw std::runtime_error(fmt::format("relab merge: shard {} ran lab {} where shard {} ran {}",
                                                     to_string(r.shard), r.labs[i].scenario.id,
                                                     to_string(shards.front().shard), shards.front().labs[i].scenario.id));
            parts.push_back(&r.labs[i]);
        }
        out.labs.push_back(merge_lab(parts));
        out.labs.back().sequence = static_cast<int>(i) + 1;
    }
    return out;
}

}  // namespace relab
