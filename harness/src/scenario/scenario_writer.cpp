// write_scenario: each part of a Scenario as the loader reads it back. A described section is
// desc::write_file's; the expectation's terms are walked from terms.h's rows; what the loader reads
// by hand is written here, leaving out what equals the default the loader would apply.
#include "scenario/scenario_writer.h"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace relab {

namespace {

using nlohmann::json;

// `v` under `key`, unless it is absent (null) or, for a section without a presence flag, empty.
void put(json& out, const std::string& key, json v, bool empty_means_on = false) {
    if (v.is_null() || ((v.is_object() || v.is_array()) && v.empty() && !empty_means_on)) return;
    out[key] = std::move(v);
}

template <class S>
void put_section(json& out, const std::string& key, const S& section) {
    put(out, key, desc::write_file(section), desc::has_presence<S>());
}

// A role's object with the user's program in it, when the lab gives the role as one.
json with_program(json role, const Scenario& s, const std::string& name) {
    const ExecSpec* program = s.exec.of(name);
    if (!program) return role;
    if (role.is_null()) role = json::object();
    role.update(desc::write_file(*program));
    return role;
}

void write_identity(const Scenario& s, json& out) {
    out["id"] = s.id;
    if (s.part != s.id) out["part"] = s.part;
    if (s.output != s.id) out["output"] = s.output;
    put(out, "group", s.group.empty() ? json() : json(s.group));
    put(out, "requires", s.needs_features);
    if (!s.only_backend.empty()) out["only_on"] = {{"backend", s.only_backend}, {"why", s.only_backend_why}};
    out["title"] = s.title;
    if (s.title_vi != s.title) out["title_vi"] = s.title_vi;
    out["kind"] = std::string(kind_row(s.kind).file_kind);
    static const Scenario defaults{};
    if (s.runs != defaults.runs) out["runs"] = s.runs;
    if (s.seed != defaults.seed) out["seed"] = s.seed;
}

void write_servers(const LabServers& servers, json& out) {
    if (!servers.own) return;
    json o = json::object();
    if (!servers.redis_config.empty()) o["redis"] = servers.redis_config;
    if (servers.replica) o["replica"] = true;
    if (servers.cache) o["cache"] = servers.cache_config;
    if (servers.postgres) o["postgres"] = servers.postgres_config;
    out["servers"] = std::move(o);
}

// The orders and events, or the "generate" that makes them (and the load it draws).
void write_workload(const Scenario& s, const StreamLab& f, json& out) {
    put_section(out, "stream", f.stream);
    if (f.generate) {
        out["generate"] = desc::write_file(*f.generate);
    } else {
        out["orders"] = desc::write_value(f.orders);
        out["events"] = desc::write_value(f.events);
    }
    put(out, "job_cost_ms", f.job_cost_ms);
    static const StreamLab defaults{};
    if (s.exec.of("consumer")) {
        json c = with_program(json::object(), s, "consumer");
        if (f.consumers != defaults.consumers) c["count"] = f.consumers;
        out["consumers"] = std::move(c);
    } else if (!f.shard.enabled && f.consumers != defaults.consumers) {
        out["consumers"] = f.consumers;  // a sharded lab's is one per shard
    }
}

// The lab's own servers and what breaks in it: every family with roles has these.
void write_world(const Scenario& s, json& out) {
    write_servers(s.servers, out);
    put(out, "faults", desc::write_value(s.faults));
}

void write_stream_lab(const Scenario& s, const StreamLab& f, json& out) {
    write_workload(s, f, out);
    put_section(out, "write", f.write);
    put_section(out, "lock", f.lock);
    put_section(out, "buffer", f.buffer);
    put_section(out, "fanout", f.fanout);
    put(out, "producer", with_program(desc::write_file(f.producer), s, "producer"));
    put(out, "dispatcher", with_program(desc::write_file(f.dispatcher), s, "dispatcher"), true);
    put_section(out, "shard", f.shard);
    if (f.stream_line != StreamLab{}.stream_line) out["stream_line"] = f.stream_line;
    if (f.show_throughput != (f.fanout.enabled || f.shard.enabled)) out["show_throughput"] = f.show_throughput;
    put_section(out, "soak", f.soak);
    put_section(out, "recovery", f.recovery);
    put_section(out, "sim", s.sim);
    write_world(s, out);
}

void write_idem_lab(const Scenario& s, const IdemSpec& spec, json& out) {
    json idem = desc::write_file(spec);
    if (const ExecSpec* program = s.exec.of("idem_client")) idem["program"] = desc::write_file(*program);
    out["idem"] = std::move(idem);
    write_world(s, out);
}

// --- sessions ---

// A step's optional bounds as the file gives them: {"min": …, "max": …}, under `key`, only when set.
template <typename T>
void put_range(json& o, const char* key, const std::optional<T>& min, const std::optional<T>& max) {
    if (!min && !max) return;
    json range = json::object();
    if (min) range["min"] = *min;
    if (max) range["max"] = *max;
    o[key] = std::move(range);
}

json write_sql_step(const SessionStep& step) {
    json o = {{"sql", step.sql}};
    if (step.expect) o["expect"] = *step.expect;
    if (step.expect_sqlstate) o["expect_sqlstate"] = *step.expect_sqlstate;
    put_range(o, "expect_wait_ms", step.expect_wait_min_ms, step.expect_wait_max_ms);
    return o;
}

json write_redis_step(const RedisStep& rs) {
    json o = {{"redis", rs.argv}};
    if (rs.expect_reply) o["expect_reply"] = *rs.expect_reply;
    if (rs.expect_error) o["expect_error"] = *rs.expect_error;
    put_range(o, "expect_integer", rs.expect_min, rs.expect_max);
    if (rs.via_redis_cli) o["via"] = "redis-cli";
    put(o, "documented", rs.documented.empty() ? json() : json(rs.documented));
    put(o, "note", rs.note.empty() ? json() : json(rs.note));
    if (rs.note_vi != rs.note) o["note_vi"] = rs.note_vi;
    if (rs.project) {
        const MemoryProjection& p = *rs.project;
        json po = {{"keys", p.keys}, {"label", p.label}};
        if (p.label_vi != p.label) po["label_vi"] = p.label_vi;
        if (!p.documented.empty()) po["documented"] = p.documented;
        o["project"] = std::move(po);
    }
    return o;
}

json write_case(const SessionCase& c) {
    json o = {{"title", c.title}};
    if (c.title_vi != c.title) o["title_vi"] = c.title_vi;
    put(o, "setup_sql", c.setup_sql);
    json sessions = json::array();
    bool redis_only = true;
    for (const SessionSpec& spec : c.sessions) {
        json so = {{"name", spec.name}, {"steps", json::array()}};
        if (spec.client != SessionSpec{}.client) so["client"] = spec.client;
        redis_only = redis_only && spec.client == "redis";
        for (const SessionStep& step : spec.steps) {
            json st = step.redis ? write_redis_step(*step.redis) : write_sql_step(step);
            if (step.at_ms != SessionStep{}.at_ms) st["at_ms"] = step.at_ms;
            so["steps"].push_back(std::move(st));
        }
        sessions.push_back(std::move(so));
    }
    o["sessions"] = std::move(sessions);
    // The loader's default query: none for Redis sessions alone without setup.
    const std::string final_default = redis_only && c.setup_sql.empty() ? "" : SessionCase{}.final_sql;
    if (c.final_sql != final_default) o["final_sql"] = c.final_sql;
    put(o, "expect_rows", c.expect_rows);
    put(o, "transcript_sessions", c.transcript_sessions);
    if (c.exact_keys) o["exact_keys"] = true;
    return o;
}

// --- the expectation ---

json write_band(const Band& b) {
    if (b.at_least && b.at_most && *b.at_least == *b.at_most) return {{"exactly", *b.at_least}};
    json o = json::object();
    if (b.at_least) o["at_least"] = *b.at_least;
    if (b.at_most) o["at_most"] = *b.at_most;
    return o;
}

json write_match(const RecordMatch& m) {
    json o = {{"op", to_string(m.op)}};
    if (!m.actor.empty()) o["actor"] = m.actor;
    put(o, "fields", m.fields);
    json bands = json::object();
    for (const auto& [field, band] : m.bands) bands[field] = write_band(band);
    put(o, "bands", std::move(bands));
    return o;
}

json write_sequence(const std::vector<SequenceStep>& steps) {
    json out = json::array();
    for (const SequenceStep& s : steps) {
        json o = write_match(s.match);
        if (s.gap_ms) o["gap_ms"] = write_band(*s.gap_ms);
        if (s.gap_ms && s.from_step != 0) o["from_step"] = s.from_step;
        if (s.same_as_step != 0) o["same_as"] = {{"step", s.same_as_step}, {"fields", s.same_fields}};
        out.push_back(std::move(o));
    }
    return out;
}

json write_term(const TermRow& row, const TrialTerms& t) {
    auto matches = [](const std::vector<RecordMatch>& ms) {
        json out = json::array();
        for (const RecordMatch& m : ms) out.push_back(write_match(m));
        return out;
    };
    json out = json::object();
    switch (row.shape) {
        case TermShape::final_status:
            for (const auto& [order, state] : t.final_status) out[std::to_string(order)] = desc::write_value(state);
            return out;
        case TermShape::stale_overwrites:
            out = json::array();
            for (const StaleOverwrite& so : t.stale_overwrites)
                out.push_back({{"order", so.order}, {"by", so.by}, {"over", so.over}});
            return out;
        case TermShape::figure: {
            const Band b = *t.band(row.name);  // a bare count means exactly it
            return b.at_least && b.at_most && *b.at_least == *b.at_most ? json(*b.at_least) : write_band(b);
        }
        case TermShape::figures:
            for (const auto& [name, band] : t.figure_bands(row)) out[name] = write_band(band);
            return out;
        case TermShape::has: return matches(t.has);
        case TermShape::never: return matches(t.never);
        case TermShape::sequence: return write_sequence(t.sequence);
        case TermShape::stream: return t.stream;
        case TermShape::publish_delay:
            out = json::array();
            for (const DelayBound& d : t.publish_delay_ms)
                out.push_back({{"order", d.order}, {"min", d.min_ms}, {"max", d.max_ms}});
            return out;
    }
    return out;
}

// The terms `t` states, each under its key (`top`: the key at the top of `expect`).
void write_terms(const TrialTerms& t, bool top, json& out) {
    for (const TermRow& row : term_rows())
        if (t.states(row))
            out[std::string(top && !row.top_name.empty() ? row.top_name : row.name)] = write_term(row, t);
}

json write_wrong(const Expectation& e) {
    using C = Expectation::Count;
    switch (e.wrong) {
        case C::all: return "all";
        case C::none: return "none";
        case C::exactly: return {{"exactly", e.n}};
        case C::at_least: return {{"at_least", e.n}};
        case C::at_most: return {{"at_most", e.n}};
        case C::between: return {{"at_least", e.n}, {"at_most", e.n_max}};
    }
    return "none";
}

json write_expect(const Expectation& e) {
    json o = {{"wrong", write_wrong(e)}};
    write_terms(e.every_trial, true, o);
    json wrong_trial = json::object();
    write_terms(e.every_wrong_trial, false, wrong_trial);
    put(o, "every_wrong_trial", std::move(wrong_trial));
    if (e.until_wrong_max_runs > 0) o["until_wrong"] = {{"max_runs", e.until_wrong_max_runs}};
    if (e.throughput_ratio_at_least) o["throughput_ratio"] = {{"at_least", *e.throughput_ratio_at_least}};
    put(o, "may_appear", e.may_appear);
    return o;
}

// --- what the article says, the comparison, the mutants ---

json write_passage(const ArticlePassage& p, json o = json::object()) {
    o["quote_vi"] = p.quote_vi;
    o["section"] = p.section;
    if (!p.text.empty()) o["text"] = p.text;
    if (!p.text_vi.empty()) o["text_vi"] = p.text_vi;
    return o;
}

json write_documented(const Documented& d) {
    using Text = std::pair<const char*, const std::string*>;
    json o = json::object();
    for (const auto& [key, text] : std::initializer_list<Text>{{"text", &d.text}, {"text_vi", &d.text_vi},
                                                               {"relab_choice", &d.relab_choice},
                                                               {"quote_vi", &d.quote_vi}, {"section", &d.section}})
        if (!text->empty()) o[key] = *text;
    if (d.relab_choice_vi != d.relab_choice) o["relab_choice_vi"] = d.relab_choice_vi;
    if (d.wrong) o["wrong"] = *d.wrong;
    if (d.of) o["of"] = *d.of;
    if (d.article != Article::none) o["article"] = to_string(d.article);
    if (d.throughput) o["throughput"] = write_passage(d.throughput->passage, {{"per_s", d.throughput->per_s}});
    for (const ArticlePassage& p : d.also) o["also"].push_back(write_passage(p));
    return o;
}

json write_comparison(const Comparison& c) {
    json o = {{"table", c.table}, {"row", c.row}};
    if (c.article) o["article"] = {{"row", c.article->row}, {"wrong", c.article->wrong}, {"of", c.article->of}};
    return o;
}

json write_mutants(const std::vector<Mutant>& mutants) {
    json out = json::array();
    for (const Mutant& m : mutants) {
        json o = {{"name", m.name}, {"change", m.change}, {"patch", m.patch}};
        if (!m.why_several.empty()) o["why_several"] = m.why_several;
        out.push_back(std::move(o));
    }
    return out;
}

// --- what a patch needs to find ---

// Every section the file may give, whole: where a patch finds a value the file form left out.
json whole_sections(const Scenario& s) {
    json full = {{"runs", s.runs}, {"seed", s.seed}};
    if (is_idem(s.kind)) full["idem"] = desc::write_complete(s.idem());
    const StreamLab* f = s.flow_if();
    if (!f) return full;
    full.update({{"stream", desc::write_complete(f->stream)},   {"write", desc::write_complete(f->write)},
                 {"lock", desc::write_complete(f->lock)},       {"buffer", desc::write_complete(f->buffer)},
                 {"fanout", desc::write_complete(f->fanout)},   {"producer", desc::write_complete(f->producer)},
                 {"dispatcher", desc::write_complete(f->dispatcher)}, {"shard", desc::write_complete(f->shard)},
                 {"soak", desc::write_complete(f->soak)},       {"recovery", desc::write_complete(f->recovery)},
                 {"sim", desc::write_complete(s.sim)},          {"stream_line", f->stream_line}});
    full["consumers"] = s.exec.of("consumer") ? json{{"count", f->consumers}} : json(f->consumers);
    if (f->generate) full["generate"] = desc::write_complete(*f->generate);
    return full;
}

// A mutant's or beside's patch replaces, removes or tests a value (or adds to an object) where the
// lab's file had it: what the file form leaves out as the default is written after all, so that the
// patch applies.
void keep_patched_values(const Scenario& s, json& out) {
    std::vector<const json*> patches;
    for (const Mutant& m : s.mutants) patches.push_back(&m.patch);
    const StreamLab* f = s.flow_if();
    if (f && f->beside) patches.push_back(&f->beside->patch);
    json full;
    for (const json* patch : patches)
        for (const json& op : *patch) {
            const std::string kind = op.is_object() ? op.value("op", "") : "";
            const char* key = kind == "move" || kind == "copy" ? "from" : kind.empty() ? nullptr : "path";
            if (!key || !op.contains(key) || !op.at(key).is_string()) continue;
            json::json_pointer at(op.at(key).get<std::string>());
            if (kind == "add") at = at.parent_pointer();  // an add needs the object it adds to
            if (at.empty() || out.contains(at)) continue;
            if (full.is_null()) full = whole_sections(s);
            if (!full.contains(at)) continue;
            // An object the file form left out holds only defaults: empty, it reads the same.
            out[at] = kind == "add" && full[at].is_object() ? json::object() : full[at];
        }
}

}  // namespace

json write_scenario(const Scenario& s) {
    json out = json::object();
    write_identity(s, out);
    switch (kind_row(s.kind).spec) {
        case SpecType::stream: write_stream_lab(s, s.flow(), out); break;
        case SpecType::sessions:
            out["cases"] = json::array();
            for (const SessionCase& c : s.sessions().cases) out["cases"].push_back(write_case(c));
            break;
        case SpecType::idem: write_idem_lab(s, s.idem(), out); break;
    }
    out["expect"] = write_expect(s.expect);
    put(out, "documented", write_documented(s.documented));
    if (s.compare) out["compare"] = write_comparison(*s.compare);
    put(out, "mutants", write_mutants(s.mutants));
    if (const StreamLab* f = s.flow_if(); f && f->beside)
        out["beside"] = {{"name", f->beside->name}, {"change", f->beside->change}, {"patch", f->beside->patch}};
    keep_patched_values(s, out);
    return out;
}

}  // namespace relab
