// A lab as plain data. Loaded from scenarios/*.json by load_scenario(); everything a lab varies is
// a field here, so a new lab is a new file, not new code.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ports/ports.h"

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

enum class ScenarioKind { workload, sessions };

// Where the consumer's CAS takes its version from.
enum class VersionSource { event, entry_id };

struct StreamSpec {
    std::string key = "orders";
    std::string group = "order-processor";
    int read_count = 1;       // XREADGROUP COUNT
    int64_t block_ms = 2000;  // XREADGROUP BLOCK; 0 is not allowed (would block forever)
};

struct OrderSpec {
    int64_t id = 42;
    std::string initial_status = "new";
    int64_t initial_version = 0;
    std::string expected_final = "paid";  // a trial whose final status differs is wrong
};

struct EventSpec {
    int64_t order = 42;
    std::string type;     // "created", "paid", ...
    int64_t version = 0;  // the business version assigned when the event was created
    int64_t at_ms = 0;    // when the producer publishes it, from the trial origin; events due at
                          // the same time go out back to back (one XADD after the other)
};

struct LockSpec {
    bool enabled = false;
    std::string key = "lock:order:{order}";  // {order} is replaced by the event's order id
    int64_t ttl_ms = 5000;                   // SET ... NX PX ttl_ms
    int64_t retry_ms = 20;                   // sleep between failed attempts
    int64_t skew_min_ms = 0;                 // random delay before the first attempt, drawn
    int64_t skew_max_ms = 0;                 // uniformly from [min, max]; 0..0 means none
};

struct WriteSpec {
    WriteMode mode = WriteMode::plain;
    VersionSource version_source = VersionSource::event;
};

// Matches a history record when op is equal and every field in `fields` is equal in the record's
// data (e.g. {"op":"lock_release","fields":{"result":0}}).
struct RecordMatch {
    std::string op;
    nlohmann::json fields = nlohmann::json::object();
    std::string describe() const;
};

struct Expectation {
    enum class Count { all, none, at_least, at_most, exactly };
    Count wrong = Count::none;  // how many trials may end in a wrong final state
    int n = 0;                  // for at_least / at_most / exactly
    std::vector<RecordMatch> every_trial_has;
    std::string describe() const;  // "wrong = all", "wrong >= 1", ...
    bool holds(int wrong_trials, int trials) const;
};

// What the article reported, shown beside what relab measured.
struct Documented {
    std::string text;     // English summary
    std::string text_vi;  // the article's own words
    std::optional<int> wrong;
    std::optional<int> of;
};

// One step of a scripted session (the article's psql transcripts).
struct SessionStep {
    int64_t at_ms = -1;  // start no earlier than this (from the case's origin); -1: right after the previous step
    std::string sql;
    std::optional<std::string> expect;          // command tag, e.g. "UPDATE 1", "COMMIT"
    std::optional<std::string> expect_sqlstate;  // e.g. "40001": the step must fail with it
    std::optional<int64_t> expect_wait_min_ms;   // the step's duration must lie in [min, max]
    std::optional<int64_t> expect_wait_max_ms;
};

struct SessionSpec {
    std::string name;  // "A", "B"
    std::vector<SessionStep> steps;
};

struct SessionCase {
    std::string title;
    std::string title_vi;
    std::vector<std::string> setup_sql;  // run before the sessions, in one connection
    std::vector<SessionSpec> sessions;   // run concurrently, one connection each
    std::string final_sql = "SELECT id, status, version FROM tmp_orders ORDER BY id";
    std::vector<std::vector<std::string>> expect_rows;  // the final query's rows, as text
    std::vector<std::string> transcript_sessions;       // print only these sessions' steps; empty: all
};

struct Scenario {
    std::string file;    // where it was loaded from
    std::string id;      // "08a-baseline"
    std::string part;    // run_labs.sh part name: "baseline"
    std::string output;  // report file stem: "08a-baseline"
    std::string title;
    std::string title_vi;
    ScenarioKind kind = ScenarioKind::workload;
    int runs = 10;
    uint64_t seed = 1;

    // workload
    StreamSpec stream;
    std::vector<OrderSpec> orders;
    std::vector<EventSpec> events;
    std::map<std::string, int64_t> job_cost_ms;  // per event type; a type not listed costs 0
    int consumers = 2;
    WriteSpec write;
    LockSpec lock;

    // sessions
    std::vector<SessionCase> cases;

    Expectation expect;
    Documented documented;
    nlohmann::json source;  // the file's JSON, embedded in the JSON report
};

// Parses and validates one file. Throws ScenarioError naming file, JSON path and reason.
// JSON with // and /* */ comments is accepted.
Scenario load_scenario(const std::string& path);
Scenario parse_scenario(const std::string& text, const std::string& file_for_errors);

// Every *.json under dir, sorted by file name. The first bad file throws.
std::vector<Scenario> load_scenario_dir(const std::string& dir);

std::string to_string(WriteMode m);
std::string to_string(VersionSource v);

}  // namespace relab
