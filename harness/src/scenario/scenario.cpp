#include "scenario/scenario.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "scenario/trial_figures.h"
#include "util/check.h"

namespace relab {

bool Band::contains(int64_t x) const { return (!at_least || x >= *at_least) && (!at_most || x <= *at_most); }

std::string Band::describe() const {
    if (at_least && at_most) return *at_least == *at_most ? fmt::format("= {}", *at_least)
                                                           : fmt::format("in {}..{}", *at_least, *at_most);
    if (at_least) return fmt::format(">= {}", *at_least);
    if (at_most) return fmt::format("<= {}", *at_most);
    return "any";
}

std::string RecordMatch::describe() const {
    std::string text = to_string(op);
    if (!actor.empty()) text += " by " + actor;
    const char* separator = " with ";
    for (const auto& [key, value] : fields.items()) {
        // Strings read better unquoted ("method=DELEX IFEQ"); anything else as JSON.
        text += separator + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
        separator = ", ";
    }
    for (const auto& [key, band] : bands) {
        text += separator + key + " " + band.describe();
        separator = ", ";
    }
    return text;
}

std::string StaleOverwrite::describe() const { return fmt::format("{} overwrote {} (#{})", by, over, order); }

const std::vector<std::string>& load_figure_names() {
    static const std::vector<std::string> names = desc::figure_names<LoadStats>();
    return names;
}

const std::vector<std::string>& soak_figure_names() {
    static const std::vector<std::string> names = desc::figure_names<SoakStats>();
    return names;
}

int64_t last_event_ms(const StreamLab& f) {
    int64_t last = 0;
    for (const auto& e : f.events) last = std::max(last, e.at_ms);
    return last;
}

int64_t soak_deadline_ms(const StreamLab& f) { return last_event_ms(f) + f.soak.drain_ms; }

namespace {

// The lab's kind names family `t`, and the lab holds that family's data.
void check_family(const Scenario& s, SpecType t) {
    RELAB_CHECK(kind_row(s.kind).spec == t && s.spec.index() == static_cast<size_t>(t),
                "a lab of kind " + to_string(s.kind) + " asked for another family's data");
}

template <size_t... I>
LabSpec empty_spec(size_t index, std::index_sequence<I...>) {
    LabSpec out;
    ((index == I ? (void)out.emplace<I>() : void()), ...);
    return out;
}

}  // namespace

void Scenario::set_kind(LabKind k) {
    kind = k;
    const auto want = static_cast<size_t>(kind_row(k).spec);
    if (spec.index() != want) spec = empty_spec(want, std::make_index_sequence<std::variant_size_v<LabSpec>>{});
}

const StreamLab& Scenario::flow() const {
    check_family(*this, SpecType::stream);
    return std::get<StreamLab>(spec);
}

StreamLab& Scenario::flow() { return const_cast<StreamLab&>(std::as_const(*this).flow()); }

const SessionsLab& Scenario::sessions() const {
    check_family(*this, SpecType::sessions);
    return std::get<SessionsLab>(spec);
}

SessionsLab& Scenario::sessions() { return const_cast<SessionsLab&>(std::as_const(*this).sessions()); }

const IdemSpec& Scenario::idem() const {
    check_family(*this, SpecType::idem);
    return std::get<IdemSpec>(spec);
}

IdemSpec& Scenario::idem() { return const_cast<IdemSpec&>(std::as_const(*this).idem()); }

const StreamLab* Scenario::flow_if() const {
    const StreamLab* f = std::get_if<StreamLab>(&spec);
    RELAB_CHECK((f != nullptr) == has_stream(kind), "a lab of kind " + to_string(kind) + " holds another family's data");
    return f;
}

StreamLab* Scenario::flow_if() { return const_cast<StreamLab*>(std::as_const(*this).flow_if()); }

std::string Expectation::describe() const {
    std::string text;
    switch (wrong) {
        case Count::all: text = "wrong = all"; break;
        case Count::none: text = "wrong = none"; break;
        case Count::at_least: text = fmt::format("wrong >= {}", n); break;
        case Count::at_most: text = fmt::format("wrong <= {}", n); break;
        case Count::exactly: text = fmt::format("wrong = {}", n); break;
        case Count::between: text = fmt::format("wrong in {}..{}", n, n_max); break;
    }
    if (of_runs > 0 && (wrong == Count::at_most || wrong == Count::between)) text += fmt::format(" of {}", of_runs);
    if (until_wrong_max_runs > 0) text += fmt::format(" (more trials until one is wrong, up to {})", until_wrong_max_runs);
    if (throughput_ratio_at_least)
        text += fmt::format("; throughput >= {} x the arrangement's beside", *throughput_ratio_at_least);
    if (!every_trial.empty()) text += "; every trial: " + every_trial.describe();
    if (!every_wrong_trial.empty()) text += "; every wrong trial: " + every_wrong_trial.describe();
    if (!may_appear.empty()) {
        std::vector<std::string> names;
        for (const auto& [name, why] : may_appear) names.push_back(name);
        text += fmt::format("; may appear in any number: {}", fmt::join(names, ", "));
    }
    return text;
}

bool Expectation::holds(int wrong_trials, int trials) const {
    switch (wrong) {
        // "All of zero trials" would hold without anything having run.
        case Count::all: return trials > 0 && wrong_trials == trials;
        case Count::none: return wrong_trials == 0;
        case Count::at_least: return wrong_trials >= n;
        case Count::at_most: return wrong_trials <= upper_bound(trials);
        case Count::exactly: return wrong_trials == n;
        case Count::between: return wrong_trials >= n && wrong_trials <= upper_bound(trials);
    }
    return false;
}

int Expectation::upper_bound(int trials) const {
    const int bound = wrong == Count::between ? n_max : n;
    if (of_runs <= 0 || trials == of_runs) return bound;
    // Rounded up: a bound of 54 of 60 allows 1 wrong trial of 1, not 0.
    return static_cast<int>((static_cast<int64_t>(bound) * trials + of_runs - 1) / of_runs);
}

bool Expectation::wants_more(int wrong_trials, int trials) const {
    if (until_wrong_max_runs <= 0 || trials >= until_wrong_max_runs) return false;
    const bool has_lower = wrong == Count::at_least || wrong == Count::between;
    return has_lower && wrong_trials < n;
}

std::string to_string(LabKind k) { return std::string(kind_row(k).name); }

std::vector<std::string> lab_kind_names() { return names_in(k_kind_rows); }

std::optional<LabKind> lab_kind_named(const std::string& name) { return value_named(k_kind_rows, name); }

std::string to_string(Article a) {
    switch (a) {
        case Article::none: return "";
        case Article::ordering: return "ordering";
        case Article::idempotency: return "idempotency";
    }
    return "";
}

std::optional<Article> article_named(const std::string& name) {
    for (Article a : {Article::ordering, Article::idempotency})
        if (to_string(a) == name) return a;
    return std::nullopt;
}

const std::string& article_title(Article a) {
    static const std::string none, ordering = "Vấn đề thứ tự khi xử lý background job bằng Redis Stream — solution và trade-off",
                                   idempotency = "Lưu idempotency key ở Redis";
    switch (a) {
        case Article::none: return none;
        case Article::ordering: return ordering;
        case Article::idempotency: return idempotency;
    }
    return none;
}

std::string FinalState::describe() const {
    return amount ? fmt::format("{}, amount {}", status, *amount) : status;
}

std::string row_state_text(const OrderRow& row, bool with_amount) {
    return with_amount ? fmt::format("{}, amount {}", row.status, row.amount) : row.status;
}

bool carries_amounts(const StreamLab& f) {
    return std::any_of(f.events.begin(), f.events.end(), [](const EventSpec& e) { return e.delta.has_value(); });
}

std::vector<OrderRow> initial_order_rows(const StreamLab& f) {
    std::vector<OrderRow> rows;
    for (const auto& o : f.orders)
        if (!o.absent) rows.push_back(OrderRow{o.id, o.initial_status, o.initial_version});
    return rows;
}

std::string to_string(VersionSource v) { return std::string(name_in(k_version_sources, v)); }

std::string to_string(WriteSpec::Commit c) { return std::string(name_in(k_write_commits, c)); }

std::string to_string(DispatchOrder o) {
    switch (o) {
        case DispatchOrder::naive: return "naive";
        case DispatchOrder::per_key: return "per_key";
    }
    return "unknown";
}

std::string to_string(DispatchMark m) { return m == DispatchMark::round ? "round" : "row"; }

std::string to_string(DispatchClaim c) { return c == DispatchClaim::skip_locked ? "skip_locked" : "none"; }

std::string to_string(WriteDedupe d) { return std::string(name_in(k_write_dedupes, d)); }

std::vector<std::string> dispatcher_actors(const DispatcherSpec& d) {
    if (d.count <= 1) return {"dispatcher"};
    std::vector<std::string> out;
    for (int i = 1; i <= d.count; ++i) out.push_back("dispatcher" + std::to_string(i));
    return out;
}

}  // namespace relab

namespace relab {

std::string to_string(ShardSpec::By b) { return b == ShardSpec::By::round_robin ? "round_robin" : "order"; }

std::string shard_stream_key(const ShardSpec& s, int i) { return fmt::format(fmt::runtime(s.key_format), fmt::arg("i", i)); }

uint32_t shard_hash(int64_t order) {
    uint32_t h = 2166136261u;
    for (char c : std::to_string(order)) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    return h;
}

int shard_of(const ShardSpec& s, int64_t order, int64_t event_index, int n) {
    if (n < 1) throw std::invalid_argument("a router needs at least one shard");
    if (s.by == ShardSpec::By::round_robin) return static_cast<int>(event_index % n);
    return static_cast<int>(shard_hash(order) % static_cast<uint32_t>(n));
}

std::vector<std::string> lab_stream_keys(const StreamSpec& stream, const ShardSpec& shard) {
    if (!shard.enabled) return {stream.key};
    std::vector<std::string> out;
    for (int i = 0; i < shard.shard_count(); ++i) out.push_back(shard_stream_key(shard, i));
    return out;
}

}  // namespace relab
