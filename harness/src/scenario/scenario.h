// A lab as plain data. Loaded from scenarios/*.json by load_scenario(); everything a lab varies is
// a field here, or in its family's own data (Scenario::spec: stream_lab.h, sessions_lab.h,
// idem/idem_spec.h), so a new lab is a new file, not new code.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "describe/json_error.h"
#include "fault/fault_spec.h"
#include "scenario/exec_spec.h"
#include "ports/ports.h"
#include "scenario/idem/idem_spec.h"
#include "scenario/lab_kind.h"
#include "scenario/lab_servers.h"
#include "scenario/sessions_lab.h"
#include "scenario/stream_lab.h"
#include "scenario/terms.h"
#include "util/enum_names.h"

namespace relab {

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

// The load figures an expectation may bound ("load": {"hol_ms": {...}}), from LoadStats'
// description (scenario/trial_figures.h), whose load_figure() reads each of them.
const std::vector<std::string>& load_figure_names();
// The soak figures an expectation may bound ("soak": {"kills": {...}}), from SoakStats'
// description, whose soak_figure() reads each of them.
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
    // The lab's median throughput over that of the arrangement run beside it (StreamLab::beside) must
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

// A copy of the lab with its mechanism's key knob turned: an RFC 6902 JSON Patch over the file.
// Its verdict must flip to broken; a lab whose expectation survives every mutant is a defect.
struct Mutant {
    std::string name;    // "two-consumers"
    std::string change;  // what the patch turns, in words: "2 consumers instead of 1"
    nlohmann::json patch = nlohmann::json::array();
    // Why its patch touches more than one path, when it does: a mutant turns one knob, and a knob
    // spelled in several fields says so here (mutant_paths, loader/loader.h).
    std::string why_several;
};

// A lab's family data, one alternative per SpecType (lab_kind.h), in its order.
using LabSpec = std::variant<StreamLab, SessionsLab, IdemSpec>;
template <SpecType T>
using SpecOf = std::variant_alternative_t<static_cast<size_t>(T), LabSpec>;
static_assert(std::is_same_v<SpecOf<SpecType::stream>, StreamLab> &&
                  std::is_same_v<SpecOf<SpecType::sessions>, SessionsLab> && std::is_same_v<SpecOf<SpecType::idem>, IdemSpec>,
              "LabSpec holds one alternative per SpecType, in the enum's order");

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
    LabKind kind = k_default_lab_kind;
    int runs = 10;
    uint64_t seed = 1;

    // The family's own data: the alternative kind_row(kind).spec names (set_kind() keeps the two
    // together; each accessor below checks them).
    LabSpec spec;
    // The simulator's network and wake-up latencies, for every lab it runs (a stream lab's file may set them).
    SimSpec sim;
    // A redis-server of the lab's own with these settings (appendonly, save, ...), started for it
    // and a fault target ("redis"); otherwise the run's shared server.
    LabServers servers;
    std::vector<FaultSpec> faults;  // the nemesis's schedule
    ExecRoles exec;                 // roles given as the user's programs (exec_spec.h); empty: relab's own

    Expectation expect;
    Documented documented;
    std::optional<Comparison> compare;
    std::vector<Mutant> mutants;
    std::string mutant;  // set on a mutant's copy: its name (and the title says what it changes)
    nlohmann::json source;  // the file's JSON, embedded in the JSON report

    // Sets the kind and, when its row names another family than the lab holds, that family's data, empty.
    void set_kind(LabKind k);
    // The family's data; asking a lab of another family is a bug (RELAB_CHECK).
    const StreamLab& flow() const;
    StreamLab& flow();
    const SessionsLab& sessions() const;
    SessionsLab& sessions();
    const IdemSpec& idem() const;
    IdemSpec& idem();
    // A stream lab's data, or null for a lab of another family: for code that asks "has it a stream?".
    const StreamLab* flow_if() const;
    StreamLab* flow_if();
};

// The JSON Schema of the scenario files (scenarios/schema.json): in a scenario folder, not a lab.
inline constexpr const char* k_schema_file = "schema.json";

}  // namespace relab
