// A lab as plain data. Loaded from scenarios/*.json by load_scenario(); everything a lab varies is
// a field here, so a new lab is a new file, not new code.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fault/fault_spec.h"
#include "scenario/exec_spec.h"
#include "ports/ports.h"
#include "scenario/idem/idem_spec.h"
#include "scenario/lab_servers.h"
#include "scenario/terms.h"
#include "util/enum_names.h"

namespace relab {

// A scenario file that cannot be used. what() reads "FILE: at /json/path: expected ..., got ...".
class ScenarioError : public std::runtime_error {
public:
    ScenarioError(std::string file, std::string json_path, std::string reason);
    const std::string& file() const { return m_file; }
    const std::string& json_path() const { return m_json_path; }
    const std::string& reason() const { return m_reason; }

private:
    std::string m_file, m_json_path, m_reason;
};

// What a lab is. The loader decides it once, from the file's "kind" and what its "idem" section
// holds; every layer then switches on it (each backend picks the lab's runner by it, the checker
// and the reporters their view of its results) instead of deciding again from the lab's fields.
// A switch over it without `default:` makes the compiler name every layer a new kind must reach.
enum class LabKind {
    stream,          // "kind": "workload": a producer (or outbox dispatcher), consumers, a Redis stream
    sessions,        // "kind": "sessions": scripted psql / redis-cli sessions, case by case
    idem_clients,    // a workload with "idem": clients send requests through the idempotency middleware
    idem_benchmark,  // a workload with "idem": {"benchmark"}: the claim's cost, Redis vs PostgreSQL
    idem_cluster,    // a workload with "idem": {"cluster"}: hash tags and slots on a Redis Cluster
};

std::string to_string(LabKind k);  // "stream", "sessions", "idem_clients", "idem_benchmark", "idem_cluster"
std::optional<LabKind> lab_kind_named(const std::string& name);
std::vector<std::string> lab_kind_names();
// The idempotency labs (article 002): their trials carry request counts and figures, not a stream.
bool is_idem(LabKind k);

// Where the consumer's CAS takes its version from.
enum class VersionSource { event, entry_id };
inline constexpr EnumName<VersionSource> k_version_sources[] = {{VersionSource::event, "event"},
                                                                {VersionSource::entry_id, "entry_id"}};

// A generated workload's shape (the load labs): how events arrive and what jobs cost, as the file
// says it, for the reports; the events themselves carry their times and costs.
struct LoadSpec {
    bool enabled = false;
    std::string arrival;    // "burst" or "400 orders/s"
    std::string job_cost;   // "lognormal p50 0.2 ms, p99 2 ms", "fixed 0.5 ms", "uniform 0.1–1 ms"
    struct SlowJob {
        int64_t order = 0;
        std::string type;
        int64_t ms = 0;
        bool operator==(const SlowJob&) const = default;
    };
    std::vector<SlowJob> slow_jobs;  // a long job in the stream (S1's head-of-line blocking)
    bool operator==(const LoadSpec&) const = default;
};

// A soak lab ("soak": {"drain_ms": N}): a long generated workload under a repeated fault, judged
// on its accounting. Its trial ends drained or, at the latest, drain_ms after its last event is
// due (counted from the trial's origin, the producer's start): what is left then is reported (the
// group's pending entries, those never delivered, the entries never processed) as the trial's
// result, not as a timeout. At the end relab reads the consumer group (XINFO GROUPS) into the
// history, and the run ends with the soak's accounting.
struct SoakSpec {
    bool enabled = false;
    int64_t drain_ms = 30000;
    bool operator==(const SoakSpec&) const = default;
};

struct StreamSpec {
    std::string key = "orders";
    std::string group = "order-processor";
    int read_count = 1;       // XREADGROUP COUNT
    int64_t block_ms = 2000;  // XREADGROUP BLOCK; 0 is not allowed (would block forever)
    // When a consumer acknowledges: each entry once its job is over (XACK per entry), or every entry
    // of a read with one XACK once the read's last job is over (a consumer killed mid-read gets the
    // read's finished jobs again).
    enum class Ack { each, batch };
    Ack ack = Ack::each;
    // Once the publishing roles are done, the trial ends after this long with nothing moving (no
    // history record): what is still pending or never delivered is then the trial's result.
    int64_t quiet_ms = 10'000;
    // A trial whose group has not drained this long after its origin ends there, and what it left
    // pending or undelivered is its result (a poison entry claimed over and over keeps the trial
    // moving, so quiet_ms never ends it). 0: no such deadline.
    int64_t deadline_ms = 0;
    bool operator==(const StreamSpec&) const = default;
};

// The state an order must end in: its status and, where a lab states it (P4's labs), its amount.
// Scenario files write it as "paid" or {"status": "paid", "amount": 30}.
struct FinalState {
    std::string status;
    std::optional<int64_t> amount = std::nullopt;
    bool matches(const OrderRow& row) const { return row.status == status && (!amount || row.amount == *amount); }
    std::string describe() const;  // "paid", or "paid, amount 30"
    bool operator==(const FinalState&) const = default;
};
// A row as a final state reads: "paid", or "paid, amount 30" when `with_amount`.
std::string row_state_text(const OrderRow& row, bool with_amount);

struct OrderSpec {
    int64_t id = 42;
    std::string initial_status = "new";
    int64_t initial_version = 0;
    std::string expected_final = "paid";  // a trial whose final status differs is wrong
    std::optional<int64_t> expected_amount = std::nullopt;  // and, when given, one whose final amount differs
    FinalState expected_state() const { return FinalState{expected_final, expected_amount}; }
    // No row for this order before the trial ("absent": true): its first write must create it
    // (write mode upsert or insert_then_update); initial_status and initial_version do not apply.
    bool absent = false;
};

struct EventSpec {
    int64_t order = 42;
    std::string type;     // "created", "paid", ...
    int64_t version = 0;  // the business version assigned when the event was created
    int64_t at_ms = 0;    // when the producer publishes it, from the trial origin; events due at
                          // the same time go out back to back (one XADD after the other)
    // This event's job cost in µs, drawn by a generated workload ("generate": {"job_cost": ...});
    // -1: the lab's job_cost_ms for its type.
    int64_t cost_us = -1;
    // P4's labs: the change the event makes to its order's amount, as the scenario gives it, and the
    // amount after it, which the loader computes by adding the order's changes in version order (the
    // state the event carries). Both absent in every other lab.
    std::optional<int64_t> delta = std::nullopt;
    std::optional<int64_t> amount = std::nullopt;
    // A poison entry: the job of this event fails on every delivery (the consumer records a
    // job_fail, does not write and does not acknowledge it).
    bool fails = false;
    bool operator==(const EventSpec&) const = default;
};

struct LockSpec {
    bool enabled = false;
    std::string key = "lock:order:{order}";  // {order} is replaced by the event's order id
    int64_t ttl_ms = 5000;                   // SET ... NX PX ttl_ms
    int64_t retry_ms = 20;                   // sleep between failed attempts
    int64_t skew_min_ms = 0;                 // random delay before the first attempt, drawn
    int64_t skew_max_ms = 0;                 // uniformly from [min, max]; 0..0 means none
    bool operator==(const LockSpec&) const = default;
};

// P3, a reorder buffer in the consumer: an event is applied only when its version is the order's
// last applied version + 1; a later one is held (not acknowledged) until the gap is filled, or
// until it has waited gap_timeout_ms, when the buffer gives up on the gap and applies it.
struct BufferSpec {
    bool enabled = false;
    int64_t gap_timeout_ms = 0;  // 0: wait for the gap forever
    // An event older than what was applied (it arrives after the buffer gave up on it): dropped
    // (acknowledged, never applied) or applied anyway (and the order goes back to it).
    enum class Late { drop, apply };
    Late late = Late::drop;
    bool operator==(const BufferSpec&) const = default;
};

// S3, worker per key (article 000, solution 3: "đọc tuần tự rồi fan-out trong RAM theo khoá"): the
// consumer process is one reader and `workers` worker tasks. The reader XREADGROUPs and puts each
// entry on an in-memory FIFO; a worker takes a job, runs it (cost, write) and XACKs it only then.
// per_key: one FIFO per order, and an order is worked on by one worker at a time, so its events
// run in stream order while other orders run beside it. any_worker: one FIFO for every order,
// any free worker takes its head (no per-key exclusion: what per-key order rests on).
struct FanoutSpec {
    enum class Dispatch { per_key, any_worker };
    bool enabled = false;
    int workers = 0;
    int64_t poll_ms = 1;  // an idle worker looks at the FIFOs again after this long
    Dispatch dispatch = Dispatch::per_key;
    bool operator==(const FanoutSpec&) const = default;
};

// Whether the consumer deduplicates the events it applies.
enum class WriteDedupe {
    none,               // every entry's write is applied
    aggregate_version,  // an inbox table keyed by (aggregate, version): INSERT ... ON CONFLICT DO NOTHING in
                        // the write's transaction; an event already applied is skipped (a republished row)
};
inline constexpr EnumName<WriteDedupe> k_write_dedupes[] = {{WriteDedupe::none, "none"},
                                                            {WriteDedupe::aggregate_version, "aggregate_version"}};

struct WriteSpec {
    WriteMode mode = WriteMode::plain;
    VersionSource version_source = VersionSource::event;
    // After each job's write, applied or not, the consumer sends the event's side effect (an email,
    // a webhook): a row of tmp_side_effects (seq bigserial, order_id, event_type, version, sent_at).
    bool side_effect = false;
    WriteDedupe dedupe = WriteDedupe::none;
    // each: every write its own autocommit statement, one round trip per event (the articles'
    // consumers). batch: the writes of one read in one transaction, sent as one multi-statement
    // query after the read's jobs ran: one round trip per read, and every write of the read or none.
    enum class Commit { each, batch };
    Commit commit = Commit::each;
    // The transaction the job runs in (ports/write_mode.h): none, or BEGIN ISOLATION LEVEL …, the
    // row's version read, the job, the UPDATE, COMMIT.
    WriteIsolation isolation = WriteIsolation::none;
    // How many times a job's transaction refused with 40001 runs again (job and all) before the
    // consumer gives up and acknowledges the entry unwritten; only with an isolation.
    int serialization_retries = 3;
    bool operator==(const WriteSpec&) const = default;
};
inline constexpr EnumName<WriteSpec::Commit> k_write_commits[] = {{WriteSpec::Commit::each, "each"},
                                                                  {WriteSpec::Commit::batch, "batch"}};

// Which attempts of one event's publication fail (1 = the first try), injected in the
// producer's publish path as the article does.
struct PublishFailure {
    int64_t order = 0;
    std::string type;
    std::vector<int> attempts;    // fail before anything reaches Redis (a network blip)
    std::vector<int> reply_lost;  // the XADD runs on the server, its reply never reaches the producer
    bool operator==(const PublishFailure&) const = default;
};

// The producer retries a failed publish asynchronously: after backoff_ms, then multiplied by
// backoff_multiplier for every further failure; at most max_attempts tries per event.
struct ProducerSpec {
    int64_t backoff_ms = 500;
    int64_t backoff_multiplier = 2;
    int max_attempts = 10;
    std::vector<PublishFailure> failures;
    // XADD ... IDMP producer <order>:<type>:v<version> (Redis 8.6): a resend of an event the
    // stream already has adds nothing and gets the first entry's ID back.
    bool idmp = false;
    // WAIT wait_replicas wait_timeout_ms after each XADD: an entry fewer replicas acknowledged is
    // not taken as published (recorded "not_replicated") and is sent again; 0: no WAIT.
    int64_t wait_replicas = 0;
    int64_t wait_timeout_ms = 100;
    bool operator==(const ProducerSpec&) const = default;
};

enum class DispatchOrder {
    naive,   // ORDER BY id; a failed row stays in the outbox and later rows go ahead
    per_key  // ORDER BY aggregate_id, id; a failed row blocks later rows of its aggregate only
};

// When the dispatcher marks a row published.
enum class DispatchMark {
    row,    // UPDATE ... SET published_at right after the row's XADD, each in its own transaction
    round,  // the round is one transaction (BEGIN; SELECT ... FOR UPDATE; each XADD followed by its
            // UPDATE; COMMIT): a crash before the COMMIT loses every mark of the round
};

// How several dispatchers share the outbox.
enum class DispatchClaim {
    none,         // each reads every unpublished row and publishes it: no exclusion between dispatchers
    skip_locked,  // each row is claimed in its own transaction (SELECT ... LIMIT 1 FOR UPDATE SKIP LOCKED, held
                  // across the XADD and the mark): per_key claims only an aggregate's first unpublished row,
                  // naive any unpublished row (row-level exclusion only)
};

// Which publish attempts of one outbox row fail.
struct OutboxFailure {
    int64_t outbox_id = 0;
    std::vector<int> attempts;
    bool operator==(const OutboxFailure&) const = default;
};

// The transactional outbox: the source app records every event (UPDATE tmp_src_orders + INSERT
// tmp_outbox in one transaction) and a dispatcher polls the outbox and publishes to the stream.
// When enabled, the dispatcher replaces the producer.
struct DispatcherSpec {
    bool enabled = false;
    DispatchOrder ordering = DispatchOrder::per_key;
    int64_t poll_ms = 200;
    int max_rounds = 100;  // a safety stop for a row that never gets through
    std::vector<OutboxFailure> failures;
    DispatchMark mark = DispatchMark::row;
    int64_t publish_ms = 0;  // each publish's time after its XADD, before its mark (a broker's confirm)
    int count = 1;           // dispatchers polling the same outbox: actor "dispatcher", or dispatcher1..N
    DispatchClaim claim = DispatchClaim::none;
    bool operator==(const DispatcherSpec&) const = default;
};

// S2, sharding by key: the producer is a router that puts each event into stream
// key_format(i), i = shard_hash(order) % N, and consumer Ck reads shard k-1 alone (one consumer per
// shard). With a reshard, N becomes `reshard_to` once `reshard_after_events` events were published;
// with drain, the router first waits until every shard's group has delivered and acknowledged
// everything (the safe switch). On the real backend the shards live on a 3-master Redis Cluster
// that relab forms; the key format's hash tag decides each shard's slot.
struct ShardSpec {
    bool enabled = false;
    int streams = 3;                             // N
    std::string key_format = "orders:{{{i}}}";   // fmt syntax: {i} is the shard index, {{ }} literal braces
    // What the router hashes: the order (S2: an order's events stay on one shard), or nothing at
    // all (round_robin: event k goes to shard k % N, the mistake of sharding by anything but the key).
    enum class By { order, round_robin };
    By by = By::order;
    int reshard_to = 0;                  // 0: no reshard
    int64_t reshard_after_events = 0;    // the switch comes before event number this + 1 (in publish order)
    bool drain = false;                  // wait for every shard to drain before the switch
    int64_t drain_poll_ms = 5;           // how often the draining router asks
    // The lab's Redis Cluster ("cluster"): a replica per master or none, cluster-node-timeout, and
    // cluster-require-full-coverage (no: the other masters keep serving while one shard is down).
    int cluster_replicas = 0;
    int64_t cluster_node_timeout_ms = 5000;
    bool cluster_full_coverage = true;
    int shard_count() const { return reshard_to > streams ? reshard_to : streams; }  // consumers
    bool operator==(const ShardSpec&) const = default;
};

// The stream of shard i (0-based).
std::string shard_stream_key(const ShardSpec& s, int i);
// FNV-1a (32 bit) of the order's decimal id: the router's hash(order).
uint32_t shard_hash(int64_t order);
// The shard the router puts an event in while there are `n` shards: by order, hash % n; round
// robin, the event's place in publish order (0-based) % n.
int shard_of(const ShardSpec& s, int64_t order, int64_t event_index, int n);
// Every stream a lab reads: its one stream, or each shard's.
std::vector<std::string> lab_stream_keys(const StreamSpec& stream, const ShardSpec& shard);

// Bounds on how late an order's first event reached the stream after its first attempt.
struct DelayBound {
    int64_t order = 0;
    int64_t min_ms = 0;
    int64_t max_ms = 0;
};

// A count that must lie within [at_least, at_most]; either bound may be absent, never both.
struct Band {
    std::optional<int64_t> at_least;
    std::optional<int64_t> at_most;
    bool contains(int64_t x) const;
    std::string describe() const;  // "= 0", ">= 1", "<= 3", "in 1..54"
};

// Matches a history record when op is equal, the actor (when given) is equal, every field in
// `fields` is equal in the record's data (e.g. {"op":"lock_release","fields":{"result":0}}) and
// every numeric field named in `bands` lies in its band (e.g. {"oom_errors": {"at_least": 1}}).
struct RecordMatch {
    Op op = Op::start;  // the loader accepts only ops history_op.h lists, and only their fields
    nlohmann::json fields = nlohmann::json::object();
    std::string actor{};  // empty: any
    std::map<std::string, Band> bands{};
    std::string describe() const;
};

// An applied write of an older event after a newer one of the same order: `by` overwrote `over`
// (08a: created's write lands after paid's, the row ends created).
struct StaleOverwrite {
    int64_t order = 0;
    std::string by;
    std::string over;
    std::string describe() const;  // "created overwrote paid (#42)"
};

// One step of a required sequence: the next record (in time) that matches, with an optional
// bound on the time since an earlier step's record (the previous one unless from_step names one).
struct SequenceStep {
    RecordMatch match;
    std::optional<Band> gap_ms;
    int from_step = 0;  // 1-based index of the earlier step gap_ms counts from; 0: the previous step
    // The record must carry the same value in these fields as the record an earlier step matched:
    // {"step": 1, "fields": ["entry"]} is "the claimed entry is the very entry step 1 received".
    int same_as_step = 0;  // 1-based; 0: no such term
    std::vector<std::string> same_fields;
};

// What a trial must show, stated as the mechanism the article claims, not only as a count. Every
// term is checked against one trial's history, final rows, stream and counts; the terms and their
// shapes are scenario/terms.h's table.
struct TrialTerms {
    std::map<int64_t, FinalState> final_status;  // order -> its exact final status (and amount, if stated)
    std::vector<StaleOverwrite> stale_overwrites;  // each must occur
    // The terms of shape `figure`, by the term's name ("lost", "reordered", ...): a band on the
    // accounting figure its row names (check/accounting.h).
    std::map<std::string, Band, std::less<>> bands;
    std::vector<RecordMatch> has;                  // records that must occur
    std::vector<RecordMatch> never;                // records that must not occur
    std::vector<SequenceStep> sequence;            // records that must occur in this order
    // The stream as XRANGE returns it, as "order:type" per entry, e.g. {"42:paid", "42:created"}.
    std::vector<std::string> stream;
    std::vector<DelayBound> publish_delay_ms;
    // Idempotency labs: a band per count of the trial (orders, duplicates, created, replays,
    // conflicts, mismatches, layer4, errors, leaks, sends, unanswered, vanished).
    std::map<std::string, Band, std::less<>> counts;
    // Load labs: a band per figure of the trial's load stats (check/load_stats.h), named as
    // load_figure_names() lists them.
    std::map<std::string, Band, std::less<>> load;
    // Soak labs: a band per figure of the trial's soak stats (check/soak_stats.h), named as
    // soak_figure_names() lists them.
    std::map<std::string, Band, std::less<>> soak;

    // The bands a term of shape `figure` (bands) or `figures` (counts, load, soak) keeps for `table`.
    using FigureBands = std::map<std::string, Band, std::less<>>;
    const FigureBands& figure_bands(const TermRow& row) const;
    FigureBands& figure_bands(const TermRow& row);
    // The band of the term of shape `figure` named `term`, if the expectation states one.
    std::optional<Band> band(std::string_view term) const;
    bool states(const TermRow& row) const;  // whether the term is stated here
    bool empty() const;
    std::string describe() const;
};

// The load figures an expectation may bound ("load": {"hol_ms": {...}}); check/load_stats.cpp's
// load_figure() reads each of them.
const std::vector<std::string>& load_figure_names();
// The soak figures an expectation may bound ("soak": {"kills": {...}}); check/soak_stats.cpp's
// soak_figure() reads each of them.
const std::vector<std::string>& soak_figure_names();

struct Expectation {
    enum class Count { all, none, at_least, at_most, exactly, between };
    Count wrong = Count::none;  // how many trials may end in a wrong final state
    int n = 0;                  // at_least / at_most / exactly; between: the lower bound
    int n_max = 0;              // between: the upper bound
    TrialTerms every_trial;        // must hold in every trial
    TrialTerms every_wrong_trial;  // must hold in every wrong trial: why it went wrong
    // The sequential rule of a racy lab: after `runs` trials, while fewer than the lower bound
    // went wrong, run more, up to this many trials in all; 0: no extension.
    int until_wrong_max_runs = 0;
    // The lab's median throughput over that of the arrangement run beside it (Scenario::beside) must
    // be at least this: what a strategy buys in pace, measured in the same run on the same machine.
    std::optional<double> throughput_ratio_at_least;
    // Accounting anomalies the lab's mechanism may show in any number, each with the reason ("may_appear":
    // {"redelivered": "why"}): no trial is judged on them, and relab diff does not call their first
    // appearance a regression.
    std::map<std::string, std::string, std::less<>> may_appear;
    // The trials an upper bound was written for (the file's runs): a run of another size (--runs,
    // --trials) keeps the bound's rate, e.g. at most 54 of 60 is at most 1800 of 2000. 0: as written.
    int of_runs = 0;
    int upper_bound(int trials) const;  // at_most / between's upper bound for a run of `trials`
    std::string describe() const;  // "wrong = all; every trial: #42 = created, ...", ...
    bool holds(int wrong_trials, int trials) const;
    // Whether a run of `trials` trials with `wrong_trials` wrong ones should go on (the sequential rule).
    bool wants_more(int wrong_trials, int trials) const;
};

// The two articles relab replays, which a lab's quote comes from.
enum class Article { none, ordering, idempotency };

std::string to_string(Article a);  // "ordering", "idempotency" ("" for none)
std::optional<Article> article_named(const std::string& name);
// The article's title as it stands (in Vietnamese): how the reports cite it beside a quote.
const std::string& article_title(Article a);

// Words of the article, verbatim, with where they stand in it, and relab's own note on them: the
// reports print the two apart so that nobody reads relab's words as the article's.
struct ArticlePassage {
    std::string quote_vi;  // the article's words, character for character
    std::string section;   // where: "§2", "§7, Case 1", "Phụ lục: lab đã chạy"
    std::string text;      // relab's note on the passage (English); may be empty
    std::string text_vi;   // the same in Vietnamese
    bool operator==(const ArticlePassage&) const = default;
};

// An article's throughput figure, printed beside the throughput the lab measured.
struct DocumentedThroughput {
    double per_s = 0;  // events per second, as the article gives it
    ArticlePassage passage;
    bool operator==(const DocumentedThroughput&) const = default;
};

// What the article reported, shown beside what relab measured.
struct Documented {
    std::string text;     // relab's summary of what the article reported (English)
    std::string text_vi;  // relab's summary in Vietnamese: relab's words, not a quote
    std::optional<int> wrong;
    std::optional<int> of;
    // What the lab does that the article does not say (a status code, a statement, a key format,
    // a workload's size): printed beside the article's words so nobody reads it as the article's.
    std::string relab_choice;
    std::string relab_choice_vi;
    // The article's own words for it, verbatim, with the article and its section. (Initialised
    // here so that code listing the fields above need not name these.)
    Article article = Article::none;
    std::string quote_vi{};
    std::string section{};
    std::optional<DocumentedThroughput> throughput{};
    std::vector<ArticlePassage> also{};  // more of the article's words that bear on the lab
};

// A row of a comparison table the report draws across labs of one run (relab's, e.g. S4a by
// language): the lab's wrong/trials beside the others' with 95% intervals.
struct ComparisonArticleRow {
    std::string row;  // how the article's figures are labelled, e.g. "the article: PHP 8.3 …"
    int wrong = 0;    // the article's wrong runs, pooled by relab
    int of = 0;
    bool operator==(const ComparisonArticleRow&) const = default;
};

struct Comparison {
    std::string table;  // labs naming the same table are compared in one table
    std::string row;    // this lab's row label
    std::optional<ComparisonArticleRow> article;  // the article's figures as the table's first row
    bool operator==(const Comparison&) const = default;
};

// One step of a scripted session (the article's psql transcripts).
struct SessionStep {
    int64_t at_ms = -1;  // start no earlier than this (from the case's origin); -1: right after the previous step
    std::string sql;
    std::optional<std::string> expect;          // command tag, e.g. "UPDATE 1", "COMMIT"
    std::optional<std::string> expect_sqlstate;  // e.g. "40001": the step must fail with it
    std::optional<int64_t> expect_wait_min_ms;   // the step's duration must lie in [min, max]
    std::optional<int64_t> expect_wait_max_ms;
    std::optional<RedisStep> redis;  // set in a Redis session ("client": "redis"); sql is then empty
};

struct SessionSpec {
    std::string name;  // "A", "B"
    std::vector<SessionStep> steps;
    std::string client = "sql";  // "sql" (psql-like) or "redis" (redis-cli-like)
};

struct SessionCase {
    std::string title;
    std::string title_vi;
    std::vector<std::string> setup_sql;  // run before the sessions, in one connection
    std::vector<SessionSpec> sessions;   // run concurrently, one connection each
    std::string final_sql = "SELECT id, status, version FROM tmp_orders ORDER BY id";
    std::vector<std::vector<std::string>> expect_rows;  // the final query's rows, as text
    std::vector<std::string> transcript_sessions;       // print only these sessions' steps; empty: all
    // Redis sessions use the key names as written, without the run's prefix, when relab started
    // the server itself (a measurement the name's length changes, like MEMORY USAGE). On a server
    // relab did not start the prefix stays. The keys are deleted after the case either way.
    bool exact_keys = false;
};

// The timing the simulator draws where real servers and the OS would give it: uniform ranges in
// microseconds, drawn from the trial's seeded generator. Only the sim backend reads them. The
// defaults put S4a near the rate the real backend measures on one machine (about 1 in 4) and the
// article reports (3-8 of 20).
struct SimSpec {
    int64_t rtt_min_us = 50;      // every port call: one network round trip (request half, reply half)
    int64_t rtt_max_us = 200;
    int64_t wakeup_min_us = 20;   // a process blocked in a read or a sleep running again
    int64_t wakeup_max_us = 400;
    int64_t start_min_us = 0;     // each role process starting, from the trial's beginning
    int64_t start_max_us = 2000;
};

// A copy of the lab with its mechanism's key knob turned: an RFC 6902 JSON Patch over the file.
// Its verdict must flip to broken; a lab whose expectation survives every mutant is a defect.
// Another arrangement of the lab's workload (the lab's file with `patch` applied), run just before
// the lab on the same backend and servers: the throughput its "throughput_ratio" is measured against.
struct BesideSpec {
    std::string name;    // "s1"
    std::string change;  // what the patch turns, in words: "the same workload in one stream"
    nlohmann::json patch = nlohmann::json::array();
};

struct Mutant {
    std::string name;    // "two-consumers"
    std::string change;  // what the patch turns, in words: "2 consumers instead of 1"
    nlohmann::json patch = nlohmann::json::array();
    // Why its patch touches more than one path, when it does: a mutant turns one knob, and a knob
    // spelled in several fields says so here (mutant_paths).
    std::string why_several;
};

// The paths a mutant's patch touches (each op's path, and a move's or copy's from), sorted, once each.
std::vector<std::string> mutant_paths(const Mutant& m);

struct Scenario {
    std::string file;    // where it was loaded from
    std::string id;      // "08a-baseline"
    std::string part;    // run_labs.sh part name: "baseline"
    std::string output;  // report file stem: "08a-baseline"
    std::string group;   // a name that selects a family of parts at once: "idem"; empty: none
    // Redis features the lab needs ("requires": "DELEX", "XADD IDMP"): a server without one skips
    // the lab with the reason.
    std::vector<std::string> needs_features;
    // "only_on": the one backend that can show what the lab measures ("sim": a rate over
    // thousands of seeds; "real": a server's own behaviour), and why; the other skips it saying so.
    std::string only_backend;
    std::string only_backend_why;
    std::string title;
    std::string title_vi;
    LabKind kind = LabKind::stream;
    int runs = 10;
    uint64_t seed = 1;

    // stream
    StreamSpec stream;
    std::vector<OrderSpec> orders;
    std::vector<EventSpec> events;
    std::map<std::string, int64_t> job_cost_ms;  // per event type; a type not listed costs 0
    int consumers = 2;
    WriteSpec write;
    LockSpec lock;
    BufferSpec buffer;             // P3: the consumer's reorder buffer
    FanoutSpec fanout;             // S3: each consumer is a reader and its workers
    ProducerSpec producer;
    DispatcherSpec dispatcher;
    ShardSpec shard;               // S2: a router over N streams, a consumer per shard
    LoadSpec load;                 // a generated workload's arrival and job costs (the load labs)
    SoakSpec soak;                 // a soak lab: its deadline, its group read at the end
    // How the text report prints a trial's stream: "list" (id type (v=1), ...) or "xrange"
    // (XRANGE orders - + : id type(v=1)  ...), as the article's producer-side labs print it.
    std::string stream_line = "list";
    // The report prints the lab's throughput (jobs written per second of the trial): S3 beside S1.
    // On by default in a lab with fanout.
    bool show_throughput = false;
    SimSpec sim;
    RecoverySpec recovery;         // how consumers get back entries left pending
    // A redis-server of the lab's own with these settings (appendonly, save, ...), started for it
    // and a fault target ("redis"); otherwise the run's shared server.
    LabServers servers;
    std::vector<FaultSpec> faults;  // the nemesis's schedule
    ExecRoles exec;                 // roles given as the user's programs (exec_spec.h); empty: relab's own

    // sessions
    std::vector<SessionCase> cases;

    // idempotency-key labs, the three idem_* kinds (a workload with "idem" instead of a stream;
    // see idem_spec.h)
    IdemSpec idem;

    Expectation expect;
    Documented documented;
    std::optional<Comparison> compare;
    std::vector<Mutant> mutants;
    std::optional<BesideSpec> beside;  // a stream lab's arrangement to compare its throughput with
    std::string mutant;  // set on a mutant's copy: its name (and the title says what it changes)
    nlohmann::json source;  // the file's JSON, embedded in the JSON report
};

// Parses and validates one file. Throws ScenarioError naming file, JSON path and reason.
// JSON with // and /* */ comments is accepted.
Scenario load_scenario(const std::string& path);
Scenario parse_scenario(const std::string& text, const std::string& file_for_errors);

// Every *.json in dir but schema.json, sorted by file name. The first bad file throws.
std::vector<Scenario> load_scenario_dir(const std::string& dir);
// The JSON Schema of the scenario files (scenarios/schema.json): in a scenario folder, not a lab.
inline constexpr const char* k_schema_file = "schema.json";

// The lab with `mutant`'s patch applied, validated like a file; throws ScenarioError when the
// patch does not apply or the result is not a valid scenario.
Scenario apply_mutant(const Scenario& s, const Mutant& mutant);
// The arrangement beside the lab (s.beside's patch applied, without a beside or a throughput_ratio
// of its own), validated like a file. Requires s.beside.
Scenario beside_scenario(const Scenario& s);

// The lab with its generated workload resized to `orders` orders (its "generate"/"orders"); the
// title says so. Throws ScenarioError when the result is not valid (a slow job beyond the last order).
Scenario with_generated_orders(const Scenario& s, int orders);

// The rows tmp_orders holds before a trial: every order but the absent ones.
std::vector<OrderRow> initial_order_rows(const Scenario& s);
// Whether the lab's events carry amounts (P4's labs): its reports then show each row's amount.
bool carries_amounts(const Scenario& s);

// When the lab's last event is due, in ms from the trial's origin (0 without events).
int64_t last_event_ms(const Scenario& s);
// A soak lab's deadline, in ms from the trial's origin: its last event's time + drain_ms.
int64_t soak_deadline_ms(const Scenario& s);

std::string to_string(VersionSource v);     // "event" | "entry_id"
std::string to_string(WriteSpec::Commit c);  // "each" | "batch"
std::string to_string(DispatchOrder o);
std::string to_string(DispatchMark m);
std::string to_string(DispatchClaim c);  // "none" | "skip_locked"
std::string to_string(ShardSpec::By b);  // "order" | "round_robin"
std::string to_string(WriteDedupe d);    // "none" | "aggregate_version"
// The dispatchers' actor names: "dispatcher" for one (the existing labs' histories), else
// "dispatcher1".."dispatcherN".
std::vector<std::string> dispatcher_actors(const DispatcherSpec& d);

}  // namespace relab
