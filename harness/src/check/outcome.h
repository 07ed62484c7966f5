// What one run measured, as plain structs. The checker fills them from history and final state;
// reporters only read them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/accounting.h"
#include "check/idem_outcome.h"
#include "check/load_stats.h"
#include "check/run_shard.h"
#include "check/soak_stats.h"
#include "ports/ports.h"
#include "scenario/scenario.h"

namespace relab {

struct TrialOutcome {
    int trial = 0;       // 1-based
    uint64_t seed = 0;   // the trial's own seed, derived from the run's seed
    std::vector<StreamEntry> stream;        // XRANGE after the trial, in log order
    std::vector<HistoryRecord> history;     // merged, times rebased to the trial origin, sorted
    std::vector<OrderRow> final_rows;
    bool wrong = false;                     // some order's final status is not its expected one
    std::vector<std::string> wrong_orders;  // "#42=created (expected paid)"
    std::vector<std::string> unmet;         // terms of the expectation this trial does not show
    // Stream labs: every published entry followed to its jobs (lost, duplicated, redelivered after
    // ack, unexpected, stale overwrites); see accounting.h.
    Accounting accounting;
    // Every stale overwrite the accounting counted, in time order (it keeps a few as text): what
    // the expectation's stale-overwrite terms are checked against.
    std::vector<StaleOverwrite> stale_overwrites;
    LoadStats load;             // stream labs: throughput, latency, utilisation, head-of-line blocking
    SoakStats soak;             // soak labs: kills, restarts, entries recovered, the group at the end
    std::map<std::string, int64_t> role_peak_rss_kb;  // real backend: each role process's peak RSS
    IdemTrial idem;             // idempotency labs: orders and answers counted
    // Per order: when its first event reached the stream minus when its publication was first
    // tried, in µs. Orders whose first try went through have 0.
    std::map<int64_t, int64_t> publish_delay_us;
};

// One step of a scripted session as it ran.
struct StepOutcome {
    std::string session;
    std::string sql;
    int64_t start_us = 0;     // from the case origin
    int64_t duration_us = 0;
    std::string tag;          // "UPDATE 1", "BEGIN"... empty on error
    std::string sqlstate;     // on error
    std::string error;        // server message on error
    std::vector<std::vector<std::string>> rows;  // result rows of a SELECT
    std::vector<std::string> columns;
    bool ok = true;           // every expectation of the step held
    std::string failure;      // why not
    // A Redis step: `sql` holds the command as redis-cli would echo it (logical key names) and
    // `tag` the reply in redis-cli's form; `error` the error reply.
    bool redis = false;
    bool operator==(const StepOutcome&) const = default;
};

struct CaseOutcome {
    int trial = 0;  // the case's place in its lab, 1-based: the engine's trial number
    std::string title;
    std::string title_vi;
    std::vector<StepOutcome> steps;  // in start order
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> final_rows;
    bool wrong = false;              // final rows differ from expect_rows
    std::vector<std::string> failures;
    bool operator==(const CaseOutcome&) const = default;
};

struct LatencyStats {
    int samples = 0;
    int64_t p50_us = 0;
    int64_t max_us = 0;
    bool operator==(const LatencyStats&) const = default;
};

// A stream lab's pace: per trial, the jobs its consumers wrote (write records, a dedupe's skips
// included) and when the last one was written, from the trial's origin (the producer's start);
// the medians over the trials, and the range of jobs per second.
struct ThroughputStats {
    int trials = 0;        // trials with at least one write
    int64_t jobs = 0;      // median jobs per trial
    double span_ms = 0;    // median time of a trial's last write
    double per_s = 0;      // median jobs / (last write's time)
    double per_s_min = 0;
    double per_s_max = 0;
    bool operator==(const ThroughputStats&) const = default;
};

// The pace of one trial: jobs written and when the last one was; nullopt without a write. A trial
// whose history was not kept (a load trial) gives its load figures' entries written and span.
std::optional<std::pair<int64_t, int64_t>> trial_jobs_and_last_write_ns(const TrialOutcome& t);
ThroughputStats throughput(const std::vector<TrialOutcome>& trials);

struct LabResult {
    Scenario scenario;
    std::string backend = "real";
    bool skipped = false;              // did not run: neither held nor broken (held stays false)
    std::string skip_reason;
    std::vector<TrialOutcome> trials;  // workload labs
    std::vector<CaseOutcome> cases;    // session labs
    int planned_trials = 0;            // before until_wrong; a shard's lab: the whole lab's
    int wrong = 0;                     // trials (or cases) with a wrong final state
    int total = 0;                     // trials (or cases)
    bool held = false;                 // the scenario's expectation held
    std::vector<std::string> failures; // why not, one line each
    LatencyStats delivery;             // XADD to receipt by a blocked consumer
    ThroughputStats throughput;        // stream labs: jobs written per second of the trial
    // The arrangement run beside the lab (StreamLab::beside), its name and its pace: what the lab's
    // throughput_ratio is measured against. Empty until the run sets it.
    std::string beside_name;
    std::optional<ThroughputStats> beside_throughput;
    std::string lock_release_method;   // "DELEX IFEQ" or "compare-and-delete Lua script"
    std::vector<Measurement> measurements;  // idempotency labs: server figures beside the article's
    double elapsed_s = 0;
    // When the result was final (wall clock, µs since the Unix epoch) and the lab's place in its run
    // (1, 2, ...): of two saved results of one lab, `relab report` keeps the one with the greater
    // (finished_at_us, sequence). 0 in reports written before relab recorded them.
    int64_t finished_at_us = 0;
    int sequence = 0;
    // wrong / total with its 95% Wilson score interval, and the seeds of the first few wrong
    // trials (`relab run <lab> --backend sim --replay SEED` replays one). Filled by summarize().
    double wrong_rate = 0;
    double wrong_rate_low = 0;
    double wrong_rate_high = 0;
    std::vector<uint64_t> failing_seeds;
    std::optional<uint64_t> replay_seed;  // the lab ran exactly this one trial seed (--replay)
    // Set by `relab report` (recheck_verdict) when the verdict shown is not simply the one its JSON
    // file stated: the file disagreed with its own trials, or its scenario could not be re-read.
    std::string verdict_note;
};

struct ServerInfo {
    std::string redis_version;
    std::string pg_version;
    bool redis_external = false;
    bool pg_external = false;
    bool delex = false;
    bool xadd_idmp = false;
    bool operator==(const ServerInfo&) const = default;
};

// The results' plain parts as the JSON report writes and reads them (report/json), described once.
namespace desc {

template <>
struct Described<StepOutcome> {
    // `redis` is the idempotency labs' part of the report (report/json/idem_json.cpp): written
    // only on a Redis step.
    static constexpr auto fields = std::tuple{
        field("session", &StepOutcome::session, "The session that ran the step."),
        field("sql", &StepOutcome::sql, "Its statement; a Redis step's command as redis-cli would echo it."),
        field("start_us", &StepOutcome::start_us, "When it started, from the case's origin.").of(Unit::us),
        field("duration_us", &StepOutcome::duration_us, "How long it ran.").of(Unit::us),
        field("tag", &StepOutcome::tag, "Its command tag (\"UPDATE 1\", \"BEGIN\"), or a Redis reply; empty on error."),
        field("sqlstate", &StepOutcome::sqlstate, "The SQLSTATE of its error."),
        field("error", &StepOutcome::error, "The server's message on error."),
        field("columns", &StepOutcome::columns, "The columns of a SELECT's result."),
        field("rows", &StepOutcome::rows, "The rows of a SELECT's result."),
        field("ok", &StepOutcome::ok, "Every expectation of the step held."),
        field("failure", &StepOutcome::failure, "Why not."),
    };
};

template <>
struct Described<CaseOutcome> {
    static constexpr auto fields = std::tuple{
        field("trial", &CaseOutcome::trial, "The case's place in its lab, 1-based."),
        field("title", &CaseOutcome::title, "The case's title."),
        field("title_vi", &CaseOutcome::title_vi, "Its title in Vietnamese."),
        field("wrong", &CaseOutcome::wrong, "Its final rows differ from the rows it expects."),
        field("failures", &CaseOutcome::failures, "Why it went wrong, one line each."),
        field("columns", &CaseOutcome::columns, "The columns of its final rows."),
        field("final_rows", &CaseOutcome::final_rows, "The rows its final query returned."),
        field("steps", &CaseOutcome::steps, "Its steps, in start order."),
    };
};

template <>
struct Described<LatencyStats> {
    static constexpr auto fields = std::tuple{
        field("samples", &LatencyStats::samples,
              "Entries received by a consumer that was blocked in XREADGROUP when they were added."),
        field("p50", &LatencyStats::p50_us, "XADD to receipt, the median.").of(Unit::us),
        field("max", &LatencyStats::max_us, "XADD to receipt, the longest.").of(Unit::us),
    };
};

template <>
struct Described<ThroughputStats> {
    static constexpr auto fields = std::tuple{
        field("trials", &ThroughputStats::trials, "Trials with at least one write."),
        field("jobs", &ThroughputStats::jobs, "Jobs written per trial, the median."),
        field("last_write_ms", &ThroughputStats::span_ms,
              "When a trial's last write came, from its origin: the median.")
            .of(Unit::ms),
        field("jobs_per_s", &ThroughputStats::per_s, "Jobs over the time of the trial's last write: the median.")
            .of(Unit::per_s),
        field("jobs_per_s_min", &ThroughputStats::per_s_min, "The same rate's lowest.").of(Unit::per_s),
        field("jobs_per_s_max", &ThroughputStats::per_s_max, "The same rate's highest.").of(Unit::per_s),
    };
};

template <>
struct Described<ServerInfo> {
    static constexpr auto fields = std::tuple{
        field("redis_version", &ServerInfo::redis_version, "The Redis server's version."),
        field("pg_version", &ServerInfo::pg_version, "The PostgreSQL server's version."),
        field("redis_external", &ServerInfo::redis_external, "Redis was given (--redis-url), not started by relab."),
        field("pg_external", &ServerInfo::pg_external, "PostgreSQL was given (--pg-url), not started by relab."),
        field("delex", &ServerInfo::delex,
              "The Redis server has DELEX IFEQ: a lock's compare-and-delete in one command."),
        field("xadd_idmp", &ServerInfo::xadd_idmp, "The Redis server has XADD's IDMP option."),
    };
};

}  // namespace desc

struct RunReport {
    RunShard shard;  // --shard K/N: this report holds the shard's share of each lab's trials
    std::string relab_commit;
    uint64_t seed = 0;
    std::string started_at;      // ISO 8601 UTC, to the second
    int64_t started_at_us = 0;   // the same instant in µs since the Unix epoch (0: not recorded)
    ServerInfo servers;
    std::vector<LabResult> labs;
    // How long the labs took (wall clock, from the start of `relab run` until every lab had run),
    // how long their trials and cases took by their own content (check/inherent_time.h), and how
    // many labs ran at once (--jobs). 0 in reports written before relab recorded them.
    double wall_s = 0;
    double inherent_s = 0;
    int jobs = 0;
    // Every lab that ran held (none broke); skipped labs count neither way.
    bool all_held() const;
};

// Checker: the outcome of one trial from its final rows and history.
// Makes history times count from the trial's origin: the last "start" record (the publishing
// role's, right after the start barrier); unchanged when there is none.
void rebase_on_start(std::vector<HistoryRecord>& history);
// Sorts by t_ns, stably: records of one instant keep the order they were recorded (merged) in.
void sort_by_time(std::vector<HistoryRecord>& history);

TrialOutcome check_trial(const Scenario& s, int trial, uint64_t seed, std::vector<HistoryRecord> history,
                         std::vector<OrderRow> final_rows, std::vector<StreamEntry> stream);
// check_trial without the expectation's per-trial terms: what the history and rows say (sorted
// history, wrong, the accounting, publish delays). A lab family that adds its own counts
// (check_idem_trial) classifies, counts, then calls evaluate_trial once.
TrialOutcome classify_trial(const Scenario& s, int trial, uint64_t seed, std::vector<HistoryRecord> history,
                            std::vector<OrderRow> final_rows, std::vector<StreamEntry> stream);
// Checks the expectation's per-trial terms (every trial, and every wrong trial) against a trial
// that still has its history; fills `unmet`.
void evaluate_trial(const Scenario& s, TrialOutcome& t);
// A trial read back from a JSON report judged again by its scenario: wrong from its final rows
// (or its idempotency counts) and, when it kept its history, its accounting and every per-trial term.
void recheck_trial(const Scenario& s, TrialOutcome& t);
// Fills wrong/total/held/failures/delivery of a lab from its trials or cases.
void summarize(LabResult& lab);
// Median and max of receipt - xadd per entry id, over all trials, counting only receipts by a
// consumer that was blocked in XREADGROUP (not busy with a job) when the entry was added.
LatencyStats delivery_latency(const std::vector<TrialOutcome>& trials);

}  // namespace relab
