// Scenario files -> Scenario. Every check names the JSON Pointer of the offending value and says
// what was expected and what was found; unknown fields are rejected so a typo never silently
// falls back to a default.
#include "scenario/loader/loader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "ports/seeded_rng.h"
#include "scenario/loader/documented_loader.h"
#include "scenario/loader/expect_loader.h"
#include "scenario/loader/idem_loader.h"
#include "scenario/loader/sessions_loader.h"
#include "scenario/loader/stream_loader.h"
#include "describe/json_reader.h"
#include "scenario/scenario.h"
#include "util/check.h"
#include "util/json_shape.h"

namespace relab {

namespace {

using nlohmann::json;
using namespace scenario_json;

const std::vector<std::string> k_common_fields = {"id",   "part", "output", "title",  "title_vi",
                                                  "kind", "runs", "seed",   "expect", "documented", "group", "mutants",
                                                  "requires", "only_on", "compare"};
const std::vector<std::string> k_workload_fields = {"stream", "orders", "events", "job_cost_ms",
                                                    "consumers", "write", "lock", "buffer", "fanout", "producer",
                                                    "dispatcher", "stream_line", "sim", "idem", "recovery", "faults",
                                                    "servers", "generate", "shard", "show_throughput", "soak",
                                                    "beside"};
const std::vector<std::string> k_sessions_fields = {"cases"};

std::vector<Mutant> read_mutants(const Reader& r, const json& v, const std::string& path) {
    std::vector<Mutant> out;
    const json& list = r.array(v, path, true);
    for (size_t i = 0; i < list.size(); ++i) {
        Object m(r, list[i], child(path, i), {"name", "change", "patch", "why_several"});
        Mutant mutant;
        mutant.name = m.req_string("name");
        if (!is_slug(mutant.name))
            r.expected(m.path("name"), "lower-case letters, digits and '-' ([a-z0-9][a-z0-9-]*)", m.at("name"));
        for (const auto& earlier : out)
            if (earlier.name == mutant.name) r.fail(m.path("name"), "duplicate mutant name " + mutant.name);
        mutant.change = m.req_string("change");
        mutant.patch = r.array(m.at("patch"), m.path("patch"), true);
        if (m.has("why_several")) {
            mutant.why_several = m.req_string("why_several");
            if (mutant_paths(mutant).size() < 2)
                r.fail(m.path("why_several"), "the patch touches one path: a one-knob mutant needs no why_several; drop it");
        }
        out.push_back(std::move(mutant));
    }
    return out;
}

std::string slug_field(const Object& o, const std::string& key, const std::string& fallback) {
    if (!o.has(key)) return fallback;
    std::string s = o.req_string(key);
    if (!is_slug(s)) o.reader().expected(o.path(key), "lower-case letters, digits and '-' ([a-z0-9][a-z0-9-]*)", o.at(key));
    return s;
}

// id, part, output, group, the Redis features it needs, the backend it is only for, and its titles.
void read_identity(const Reader& r, const Object& top, Scenario& s) {
    if (!top.has("id")) r.fail("/id", "required field is missing");
    s.id = slug_field(top, "id", "");
    s.part = slug_field(top, "part", s.id);
    s.output = slug_field(top, "output", s.id);
    s.group = slug_field(top, "group", "");
    if (top.has("requires")) {
        const json& list = r.array(top.at("requires"), top.path("requires"), false);
        for (size_t i = 0; i < list.size(); ++i) {
            const std::vector<std::string> known = {"DELEX", "XADD IDMP"};
            if (!list[i].is_string() ||
                std::find(known.begin(), known.end(), list[i].get<std::string>()) == known.end())
                r.expected(child(top.path("requires"), i), "a Redis feature: " + quoted_list(known), list[i]);
            s.needs_features.push_back(list[i].get<std::string>());
        }
    }
    if (top.has("only_on")) {
        Object only(r, top.at("only_on"), top.path("only_on"), {"backend", "why"});
        s.only_backend = only.opt_choice("backend", "", {"sim", "real"});
        if (s.only_backend.empty()) r.fail(only.path("backend"), "required: \"sim\" or \"real\"");
        s.only_backend_why = only.req_string("why");
    }
    s.title = top.req_string("title");
    s.title_vi = top.opt_string("title_vi", s.title);
}

// Whether `doc` holds the object path "a/b" (each part a member of an object).
bool holds_path(const json& doc, std::string_view path) {
    const json* at = &doc;
    for (size_t from = 0; from <= path.size();) {
        const size_t to = std::min(path.find('/', from), path.size());
        const std::string key(path.substr(from, to - from));
        if (!at->is_object() || !at->contains(key)) return false;
        at = &at->at(key);
        from = to + 1;
    }
    return true;
}

// A field of the other kind would be ignored; say so instead.
void refuse_other_kind_fields(const Reader& r, const Object& top, bool sessions) {
    const auto& foreign = sessions ? k_workload_fields : k_sessions_fields;
    const char* own_kind = sessions ? "sessions" : "workload";
    const char* other_kind = sessions ? "workload" : "sessions";
    for (const auto& key : foreign)
        if (top.has(key))
            r.fail(top.path(key), fmt::format("field applies only to kind \"{}\"; this scenario is kind \"{}\"",
                                              other_kind, own_kind));
}

// "beside": a stream lab's other arrangement, whose throughput its own is compared with.
void read_beside(const Reader& r, const Object& top, Scenario& s) {
    StreamLab* flow = s.flow_if();
    if (!flow) r.fail(top.path("beside"), "applies to stream labs (their throughput beside another arrangement's)");
    Object b(r, top.at("beside"), top.path("beside"), {"name", "change", "patch"});
    BesideSpec spec;
    spec.name = b.req_string("name");
    if (!is_slug(spec.name))
        r.expected(b.path("name"), "lower-case letters, digits and '-' ([a-z0-9][a-z0-9-]*)", b.at("name"));
    spec.change = b.req_string("change");
    spec.patch = r.array(b.at("patch"), b.path("patch"), true);
    flow->beside = std::move(spec);
}

Scenario read_scenario(const Reader& r, const json& doc) {
    if (!doc.is_object()) r.expected("", "a JSON object at the top level", doc);
    std::vector<std::string> all_fields = k_common_fields;
    all_fields.insert(all_fields.end(), k_workload_fields.begin(), k_workload_fields.end());
    all_fields.insert(all_fields.end(), k_sessions_fields.begin(), k_sessions_fields.end());
    // "$schema" names the JSON Schema (scenarios/schema.json) for editors; the loader only checks
    // it is a string.
    Object top(r, doc, "", all_fields, {"$schema"});
    if (top.has("$schema")) (void)top.req_string("$schema");

    Scenario s;
    read_identity(r, top, s);
    const json& kind = top.at("kind");
    if (kind != "workload" && kind != "sessions") r.expected(top.path("kind"), "\"workload\" or \"sessions\"", kind);
    const bool sessions = kind == "sessions";
    s.runs = static_cast<int>(top.opt_int("runs", s.runs, 1, 100000));
    if (top.has("seed")) s.seed = r.unsigned_integer(top.at("seed"), top.path("seed"));
    refuse_other_kind_fields(r, top, sessions);

    // The lab's kind, decided here once for every layer from the marks of the kinds' rows: a
    // workload with "idem" is one of the idempotency kinds, "idem/cluster" the cluster lab. The kind's
    // row names its family, whose data the lab then holds and that family's loader reads.
    s.set_kind(kind_marked(kind.get<std::string>(), [&doc](std::string_view path) { return holds_path(doc, path); })
                   .value());
    switch (kind_row(s.kind).spec) {
        case SpecType::stream: read_stream_lab(r, top, s); break;
        case SpecType::sessions: read_sessions_lab(r, top, s); break;
        case SpecType::idem: read_idem_lab(r, top, s); break;
    }

    // A sessions lab's expectation counts its cases; the others count their runs.
    const int total = sessions ? static_cast<int>(s.sessions().cases.size()) : s.runs;
    s.expect = read_expect(r, top.at("expect"), top.path("expect"), s.kind, total, sessions ? "cases" : "runs");
    check_term_needs(r, s, top.path("expect"));
    if (top.has("documented")) s.documented = read_documented(r, top.at("documented"), top.path("documented"));
    if (top.has("compare")) s.compare = read_comparison(r, top.at("compare"), top.path("compare"));
    if (top.has("mutants")) s.mutants = read_mutants(r, top.at("mutants"), top.path("mutants"));
    if (top.has("beside")) read_beside(r, top, s);
    if (s.expect.throughput_ratio_at_least && !(s.flow_if() && s.flow_if()->beside))
        r.fail(top.path("expect") + "/throughput_ratio",
               "needs \"beside\": the arrangement whose throughput the lab's is compared with");
    return s;
}

// "line L, column C" of the 1-based byte offset the parser reports (1-based line and column).
std::string text_position(const std::string& text, size_t byte) {
    const size_t offset = std::min(byte == 0 ? 0 : byte - 1, text.size());
    const auto end = text.begin() + static_cast<std::ptrdiff_t>(offset);
    const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), end, '\n'));
    const size_t newline = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
    const size_t line_start = newline == std::string::npos ? 0 : newline + 1;
    return fmt::format("line {}, column {}", line, offset - line_start + 1);
}

// The parser's own reason, without its exception id and its (newline-blind) position prefix.
std::string parser_reason(const json::parse_error& e) {
    std::string what = e.what();
    const size_t at = what.find("parse error");
    if (at != std::string::npos) {
        const size_t colon = what.find(": ", at);
        if (colon != std::string::npos) return what.substr(colon + 2);
    }
    const size_t bracket = what.find("] ");
    return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

// Arrays and objects within each other: the scenarios nest 9 levels at most. Deeper is refused
// before anything copies or prints the value (both recurse once a level).
constexpr size_t k_max_nesting = 64;
// What a mutant's patch may add to its lab, in JSON values: room for any change a lab needs, none
// for a patch whose "copy" ops double the document forty times over.
constexpr size_t k_max_patch_growth = 10000;

void check_nesting(const json& doc, const std::string& file) {
    if (const auto at = json_nested_too_deep(doc, k_max_nesting))
        throw ScenarioError(file, *at, fmt::format("nested more than {} arrays and objects deep", k_max_nesting));
}

// The byte where parsing `text` stops, found by a second pass that builds nothing: json::parse's
// out_of_range (a number too large for a double, 1e400) carries no position of its own.
size_t parse_error_byte(const std::string& text) {
    struct Where : nlohmann::json_sax<json> {
        size_t byte = 0;
        bool null() override { return true; }
        bool boolean(bool) override { return true; }
        bool number_integer(number_integer_t) override { return true; }
        bool number_unsigned(number_unsigned_t) override { return true; }
        bool number_float(number_float_t, const string_t&) override { return true; }
        bool string(string_t&) override { return true; }
        bool binary(binary_t&) override { return true; }
        bool start_object(std::size_t) override { return true; }
        bool key(string_t&) override { return true; }
        bool end_object() override { return true; }
        bool start_array(std::size_t) override { return true; }
        bool end_array() override { return true; }
        bool parse_error(std::size_t at, const std::string&, const nlohmann::detail::exception&) override {
            byte = at;
            return false;
        }
    } where;
    json::sax_parse(text, &where, json::input_format_t::json, true, /*ignore_comments=*/true);
    return where.byte;
}

// The library's message without its exception id: "number overflow parsing '1e400'".
std::string without_exception_id(const json::exception& e) {
    const std::string what = e.what();
    const size_t bracket = what.find("] ");
    return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

}  // namespace

Scenario parse_scenario(const std::string& text, const std::string& file_for_errors) {
    json doc;
    try {
        doc = json::parse(text, nullptr, true, /*ignore_comments=*/true);
    } catch (const json::parse_error& e) {
        throw ScenarioError(file_for_errors, text_position(text, e.byte), parser_reason(e));
    } catch (const json::exception& e) {
        // A number out of a double's range (out_of_range 406): a refusal like a syntax error.
        throw ScenarioError(file_for_errors, text_position(text, parse_error_byte(text)), without_exception_id(e));
    }
    check_nesting(doc, file_for_errors);
    Scenario s = read_scenario(Reader(file_for_errors), doc);
    s.file = file_for_errors;
    s.source = std::move(doc);
    // Every mutant must itself be a valid lab, so a broken patch is found when the file loads.
    for (const auto& m : s.mutants) (void)apply_mutant(s, m);
    if (s.flow_if() && s.flow_if()->beside) (void)beside_scenario(s);
    return s;
}

std::vector<std::string> mutant_paths(const Mutant& m) {
    std::set<std::string> paths;
    for (const json& op : m.patch) {
        if (!op.is_object()) continue;
        for (const char* key : {"path", "from"})
            if (op.contains(key) && op.at(key).is_string()) paths.insert(op.at(key).get<std::string>());
    }
    return {paths.begin(), paths.end()};
}

Scenario apply_mutant(const Scenario& s, const Mutant& mutant) {
    const std::string file = fmt::format("{} (mutant {})", s.file, mutant.name);
    auto refuse = [&](const std::string& why) {
        throw ScenarioError(s.file, "/mutants", fmt::format("mutant {}: the patch does not apply: {}", mutant.name, why));
    };
    // One op at a time, each result measured: an op can at most double the document (a "copy" of
    // its root), so neither the values nor the nesting run away before the check.
    json doc = s.source;
    const size_t max_values = json_value_count(doc, std::numeric_limits<size_t>::max()) + k_max_patch_growth;
    for (size_t i = 0; i < mutant.patch.size(); ++i) {
        try {
            doc.patch_inplace(json::array({mutant.patch[i]}));
        } catch (const json::exception& e) {
            refuse(e.what());
        }
        if (const auto at = json_nested_too_deep(doc, k_max_nesting))
            refuse(fmt::format("op {} nests {} more than {} arrays and objects deep", i + 1, *at, k_max_nesting));
        if (json_value_count(doc, max_values) > max_values)
            refuse(fmt::format("op {} grows the lab by more than {} JSON values", i + 1, k_max_patch_growth));
    }
    // A patch may replace the whole document: read_scenario says what a non-object is.
    if (doc.is_object()) doc.erase("mutants");
    Scenario m = read_scenario(Reader(file), doc);
    m.file = s.file;
    m.source = std::move(doc);
    m.mutant = mutant.name;
    m.title = fmt::format("[mutant {}: {}] {}", mutant.name, mutant.change, m.title);
    m.title_vi = fmt::format("[mutant {}: {}] {}", mutant.name, mutant.change, m.title_vi);
    return m;
}

Scenario beside_scenario(const Scenario& s) {
    const StreamLab& flow = s.flow();
    RELAB_CHECK(flow.beside.has_value(), "beside_scenario needs a lab with \"beside\"");
    const BesideSpec& beside = *flow.beside;
    // The patch applied as a mutant's would be, then the copy's own beside and ratio dropped: it
    // is measured, not judged, and has nothing beside it.
    Scenario m = apply_mutant(s, Mutant{beside.name, beside.change, beside.patch, ""});
    json doc = m.source;
    if (doc.is_object()) {
        doc.erase("beside");
        if (doc.contains("expect") && doc.at("expect").is_object()) doc["expect"].erase("throughput_ratio");
    }
    Scenario b = read_scenario(Reader(fmt::format("{} (beside {})", s.file, beside.name)), doc);
    b.file = s.file;
    b.source = std::move(doc);
    b.mutant = s.mutant;
    b.title = fmt::format("[beside {}: {}] {}", beside.name, beside.change, s.title);
    b.title_vi = fmt::format("[beside {}: {}] {}", beside.name, beside.change, s.title_vi);
    return b;
}

namespace {

// A resized workload keeps only the scripted failures that still name one of its events (producer
// failures by order and type, outbox failures by row); returns how many it left out.
size_t drop_failures_beyond(json& doc, const Scenario& resized) {
    size_t dropped = 0;
    const auto rows = static_cast<int64_t>(resized.flow().events.size());
    const auto keep_if = [&](const char* section, auto known) {
        if (!doc.contains(section) || !doc[section].is_object() || !doc[section].contains("failures")) return;
        json& list = doc[section]["failures"];
        if (!list.is_array()) return;
        const size_t before = list.size();
        json kept = json::array();
        for (const auto& f : list)
            if (known(f)) kept.push_back(f);
        dropped += before - kept.size();
        list = std::move(kept);
    };
    keep_if("dispatcher", [&](const json& f) { return f.value("outbox_id", int64_t{0}) <= rows; });
    keep_if("producer", [&](const json& f) {
        const auto& events = resized.flow().events;
        return std::any_of(events.begin(), events.end(), [&](const EventSpec& e) {
            return e.order == f.value("order", int64_t{-1}) && e.type == f.value("type", std::string());
        });
    });
    return dropped;
}

}  // namespace

Scenario with_generated_orders(const Scenario& s, int orders) {
    json doc = s.source;
    if (!doc.contains("generate") || !doc.at("generate").is_object())
        throw ScenarioError(s.file, "/generate", "no generated workload to resize");
    doc["generate"]["orders"] = orders;
    const Reader reader(fmt::format("{} (--orders {})", s.file, orders));
    // The workload first without its scripted failures, to learn which of them still name an event.
    json bare = doc;
    for (const char* section : {"dispatcher", "producer"})
        if (bare.contains(section) && bare[section].is_object()) bare[section].erase("failures");
    const size_t dropped = drop_failures_beyond(doc, read_scenario(reader, bare));
    Scenario m = read_scenario(reader, doc);
    m.file = s.file;
    m.source = std::move(doc);
    m.mutant = s.mutant;
    const std::string note =
        dropped == 0 ? fmt::format("--orders {}", orders)
                     : fmt::format("--orders {}; {} scripted failure(s) beyond the smaller workload left out", orders, dropped);
    m.title = fmt::format("{} [{}]", s.title, note);
    m.title_vi = fmt::format("{} [{}]", s.title_vi, note);
    return m;
}

Scenario load_scenario(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ScenarioError(path, "", fmt::format("cannot open file: {}", std::strerror(errno)));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw ScenarioError(path, "", "cannot read file");
    return parse_scenario(text.str(), path);
}

std::vector<Scenario> load_scenario_dir(const std::string& dir) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw ScenarioError(dir, "", "not a directory");
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
        // scenarios/schema.json is the JSON Schema of these files, not a lab.
        if (entry.is_regular_file() && entry.path().extension() == ".json" && entry.path().filename() != k_schema_file)
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    std::vector<Scenario> scenarios;
    std::map<std::string, std::string> ids;  // id -> file that has it
    for (const auto& file : files) {
        Scenario s = load_scenario(file.string());
        auto [it, inserted] = ids.emplace(s.id, s.file);
        if (!inserted)
            throw ScenarioError(s.file, "/id", fmt::format("duplicate id \"{}\": {} has it too", s.id, it->second));
        scenarios.push_back(std::move(s));
    }
    return scenarios;
}

}  // namespace relab

