// scenarios/schema.json mirrors the loader: the vocabularies the loader takes from tables (history
// ops and their fields, fault actions, load figures, recovery settings) are the schema's enums, and
// every object of every scenario file and docs example lists in the schema exactly the fields the
// loader knows there (read back from the loader's own "unknown field; known fields are: ..."). The
// files the lint test (ctest schema_scenarios) expects ajv to reject, the loader rejects too, at
// the place each declares. The lint test checks the other direction: every file validates.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fault/fault_spec.h"
#include "ports/history_op.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"
#include "scenario/terms.h"

namespace relab {
namespace scenario_schema_test {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path k_source = RELAB_SOURCE_DIR;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

const json& schema() {
    static const json s = json::parse(slurp(k_source / "scenarios" / "schema.json"));
    return s;
}

// The subschema at `pointer`, following a $ref that stands alone.
const json& at(const std::string& pointer) {
    const json* node = &schema().at(json::json_pointer(pointer));
    while (node->contains("$ref") && !node->contains("properties"))
        node = &schema().at(json::json_pointer(node->at("$ref").get<std::string>().substr(1)));
    return *node;
}

std::set<std::string> property_names(const std::string& pointer) {
    std::set<std::string> out;
    for (const auto& [key, value] : at(pointer).at("properties").items()) out.insert(key);
    return out;
}

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }
std::set<std::string> enum_of(const std::string& pointer) { return as_set(at(pointer).at("enum").get<std::vector<std::string>>()); }

TEST(ScenarioSchemaTest, SchemaNamesTheLoadersVocabulary) {
    EXPECT_EQ(enum_of("/$defs/historyOp"), as_set(op_names()));
    std::set<std::string> ops_with_fields;
    for (const auto& rule : at("/$defs/opFields").at("allOf")) {
        const std::string name = rule.at("/if/properties/op/const"_json_pointer).get<std::string>();
        const auto op = op_named(name);
        ASSERT_TRUE(op.has_value()) << name;
        ops_with_fields.insert(name);
        for (const char* key : {"fields", "bands"}) {
            const json& allowed = rule.at("then").at("properties").at(key);
            if (op_fields(*op).empty())
                EXPECT_EQ(allowed.value("maxProperties", -1), 0) << name << " " << key;
            else
                EXPECT_EQ(as_set(allowed.at("propertyNames").at("enum").get<std::vector<std::string>>()),
                          as_set(op_fields(*op)))
                    << name << " " << key;
        }
    }
    EXPECT_EQ(ops_with_fields, as_set(op_names()));
    EXPECT_EQ(enum_of("/$defs/fault/properties/action"), as_set(fault_action_names()));
    EXPECT_EQ(property_names("/$defs/loadBands"), as_set(load_figure_names()));
    EXPECT_EQ(property_names("/$defs/soakBands"), as_set(soak_figure_names()));
    EXPECT_EQ(property_names("/$defs/recovery"), as_set(desc::keys<RecoverySpec>()));
    EXPECT_EQ(property_names("/$defs/recovery/properties/autoclaim"), as_set(desc::keys<RecoverySpec::Autoclaim>()));
}

// expect.may_appear's keys are the anomaly classes the loader takes, no more, no fewer.
TEST(ScenarioSchemaTest, may_appear_takes_the_anomaly_classes) {
    const json& pattern = at("/$defs/expect/properties/may_appear/patternProperties");
    ASSERT_EQ(pattern.size(), 1u);
    const auto classes = anomaly_classes();
    EXPECT_EQ(pattern.items().begin().key(), fmt::format("^({})$", fmt::join(classes, "|")));
}

// write.mode and the other write.* enums are their tables' names, and the rules that allow only
// some modes name the modes the loader's rule allows: UPDATEs (the inbox, a batch), and the
// guarded ones for a version taken from the entry ID.
TEST(ScenarioSchemaTest, SchemaNamesTheWriteModesAndTheirRules) {
    EXPECT_EQ(enum_of("/$defs/write/properties/mode"), as_set(write_mode_names()));
    EXPECT_EQ(enum_of("/$defs/write/properties/version_source"), as_set(names_in(k_version_sources)));
    EXPECT_EQ(enum_of("/$defs/write/properties/dedupe"), as_set(names_in(k_write_dedupes)));
    EXPECT_EQ(enum_of("/$defs/write/properties/commit"), as_set(names_in(k_write_commits)));
    EXPECT_EQ(enum_of("/$defs/write/properties/isolation"), as_set(names_in(k_write_isolations)));
    std::set<std::string> updates, guarded;
    for (const WriteModeInfo& m : k_write_modes) {
        if (m.statement == WriteStatement::update) updates.emplace(m.name);
        if (is_guarded_update(m.value)) guarded.emplace(m.name);
    }
    for (const auto& rule : at("/$defs/write").at("allOf")) {
        // A rule on other fields only (serialization_retries needs isolation) bounds no mode.
        if (!rule.at("then").contains("properties")) continue;
        const json& mode = rule.at("then").at("properties").at("mode");
        const std::set<std::string> allowed = mode.contains("const")
                                                  ? std::set<std::string>{mode.at("const").get<std::string>()}
                                                  : as_set(mode.at("enum").get<std::vector<std::string>>());
        const bool on_version_source = rule.at("if").at("properties").contains("version_source");
        EXPECT_EQ(allowed, on_version_source ? guarded : updates) << rule.at("description");
    }
}

// Which schema object describes the scenario's object at a JSON Pointer. `schema` may depend on
// the document (a session's steps, the servers of an idempotency lab); `loader_only` are fields
// the loader knows only to refuse them with a pointer elsewhere.
struct Place {
    std::string pattern;
    std::function<std::string(const json& doc, const std::string& pointer)> schema;
    std::set<std::string> loader_only = {};
};

auto fixed(const std::string& s) {
    return [s](const json&, const std::string&) { return s; };
}

const std::string k_expect = "/expect(/every_wrong_trial)?";
// The terms that are a band on one figure (scenario/terms.h), as alternatives of a pattern.
std::string figure_terms() {
    std::vector<std::string> names;
    for (const TermRow& row : term_rows())
        if (row.shape == TermShape::figure) names.emplace_back(row.name);
    return fmt::format("{}", fmt::join(names, "|"));
}
const std::vector<Place>& places() {
    static const std::vector<Place> p = {
        {"", fixed("")},
        {"/stream", fixed("/$defs/stream")},
        {"/orders/N", fixed("/$defs/order")},
        {"/orders/N/expected_final", fixed("/$defs/finalState/oneOf/1")},
        {"/events/N", fixed("/$defs/event")},
        {"/write", fixed("/$defs/write")},
        {"/lock", fixed("/$defs/lock")},
        {"/buffer", fixed("/$defs/buffer")},
        {"/fanout", fixed("/$defs/fanout")},
        {"/consumers", fixed("/$defs/programConsumers")},
        {"/producer", fixed("/$defs/producer")},
        {"/producer/failures/N", fixed("/$defs/producer/properties/failures/items")},
        {"/producer/wait", fixed("/$defs/producer/properties/wait")},
        {"/dispatcher", fixed("/$defs/dispatcher")},
        {"/dispatcher/failures/N", fixed("/$defs/dispatcher/properties/failures/items")},
        {"/sim", fixed("/$defs/sim")},
        {"/recovery", fixed("/$defs/recovery")},
        {"/recovery/autoclaim", fixed("/$defs/recovery/properties/autoclaim")},
        {"/servers",
         [](const json& doc, const std::string&) { return doc.contains("idem") ? "/$defs/idemServers" : "/$defs/streamServers"; }},
        {"/generate", fixed("/$defs/generate")},
        {"/generate/arrival", fixed("/$defs/generate/properties/arrival/oneOf/1")},
        {"/generate/events/N", fixed("/$defs/generate/properties/events/items")},
        {"/generate/job_cost", fixed("/$defs/costDraw")},
        {"/generate/slow_jobs/N", fixed("/$defs/generate/properties/slow_jobs/items")},
        {"/soak", fixed("/properties/soak")},
        {"/only_on", fixed("/properties/only_on")},
        {"/compare", fixed("/properties/compare")},
        {"/compare/article", fixed("/properties/compare/properties/article")},
        {"/shard", fixed("/$defs/shard")},
        {"/shard/reshard", fixed("/$defs/shard/properties/reshard")},
        {"/shard/cluster", fixed("/$defs/shard/properties/cluster")},
        {"/faults/N", fixed("/$defs/fault")},
        {"/faults/N/after", fixed("/$defs/fault/properties/after")},
        {"/idem/program", fixed("/$defs/idem/properties/program")},
        {"/idem", fixed("/$defs/idem"), {"servers", "faults"}},
        {"/idem/middleware", fixed("/$defs/middleware")},
        {"/idem/middleware/wait", fixed("/$defs/middleware/properties/wait")},
        {"/idem/clients/N", fixed("/$defs/idemClient")},
        {"/idem/clients/N/requests/N", fixed("/$defs/idemRequest")},
        {"/idem/clients/N/generate", fixed("/$defs/idemClient/properties/generate")},
        {"/idem/clients/N/retry", fixed("/$defs/idemClient/properties/retry")},
        {"/idem/benchmark", fixed("/$defs/benchmark")},
        {"/idem/cluster", fixed("/$defs/cluster")},
        {"/idem/cluster/pairs/N", fixed("/$defs/cluster/properties/pairs/items")},
        {"/idem/cluster/hot_user", fixed("/$defs/cluster/properties/hot_user")},
        {"/idem/cluster/hot_user/loads/N", fixed("/$defs/cluster/properties/hot_user/properties/loads/items")},
        {"/cases/N", fixed("/$defs/case")},
        {"/cases/N/sessions/N", fixed("/$defs/session")},
        {"/cases/N/sessions/N/steps/N",
         [](const json& doc, const std::string& pointer) {
             const std::string session = pointer.substr(0, pointer.rfind("/steps/"));
             return doc.at(json::json_pointer(session)).value("client", "sql") == "redis" ? "/$defs/redisStep"
                                                                                           : "/$defs/sqlStep";
         }},
        {"/cases/N/sessions/N/steps/N/expect_wait_ms", fixed("/$defs/sqlStep/properties/expect_wait_ms")},
        {"/cases/N/sessions/N/steps/N/expect_integer", fixed("/$defs/redisStep/properties/expect_integer")},
        {"/cases/N/sessions/N/steps/N/project", fixed("/$defs/redisStep/properties/project")},
        {"/expect", fixed("/$defs/expect")},
        {"/expect/every_wrong_trial", fixed("/$defs/wrongTrialTerms")},
        {"/expect/until_wrong", fixed("/$defs/expect/properties/until_wrong")},
        {"/expect/throughput_ratio", fixed("/$defs/expect/properties/throughput_ratio")},
        {"/beside", fixed("/properties/beside")},
        {k_expect + "/(every_trial_has|has|never)/N", fixed("/$defs/recordMatch")},
        {k_expect + "/sequence/N", fixed("/$defs/sequenceStep")},
        {k_expect + "/sequence/N/same_as", fixed("/$defs/sequenceStep/properties/same_as")},
        {k_expect + "/publish_delay_ms/N", fixed("/$defs/expect/properties/publish_delay_ms/items")},
        {k_expect + "/stale_overwrite(/N)?", fixed("/$defs/staleOverwrite")},
        {k_expect + "/final/[^/]+", fixed("/$defs/finalState/oneOf/1")},
        {k_expect + "/counts", fixed("/$defs/expect/properties/counts")},
        {k_expect + "/load", fixed("/$defs/loadBands")},
        {k_expect + "/soak", fixed("/$defs/soakBands")},
        {k_expect + "/(wrong|" + figure_terms() + ")", fixed("/$defs/band")},
        {k_expect + "/(counts|load|soak)/[^/]+", fixed("/$defs/band")},
        {k_expect + "/(every_trial_has|has|never|sequence)/N/bands/[^/]+", fixed("/$defs/band")},
        {k_expect + "/sequence/N/gap_ms", fixed("/$defs/band")},
        {"/documented", fixed("/$defs/documented")},
        {"/documented/throughput", fixed("/$defs/documented/properties/throughput")},
        {"/documented/also/N", fixed("/$defs/articlePassage")},
        {"/mutants/N", fixed("/$defs/mutant")},
    };
    return p;
}

// Objects no Object() of the loader reads: maps whose keys are data (event types, settings,
// history fields) and the mutants' and the arrangement beside's JSON Patch.
const std::regex k_not_objects_of_the_loader(
    "/job_cost_ms|/servers/(redis|postgres|cache)|.*/fields(/.*)?|"
    "/mutants/[0-9]+/patch(/.*)?|/beside/patch(/.*)?|.*/env|"  // env: a program's variables, not fields
    "/expect/may_appear");  // class → reason: its keys are checked below (anomaly_classes)
// A record match's "bands": a map of field name to a band, which is the loader's object; "final":
// a map of order id to a final state, an object where it states the amount.
const std::regex k_map_of_objects(".*/bands|/expect(/every_wrong_trial)?/final");

std::regex place_regex(const std::string& pattern) {
    return std::regex(std::regex_replace(pattern, std::regex("/N"), "/[0-9]+"));
}

// The loader's "known fields are: a, b, c" for an unknown field added at `pointer`.
std::set<std::string> loader_known_fields(json doc, const std::string& pointer, const std::string& origin) {
    doc[json::json_pointer(pointer)]["zz-not-a-field"] = 0;
    try {
        parse_scenario(doc.dump(), origin);
    } catch (const ScenarioError& e) {
        const std::string marker = "unknown field; known fields are: ";
        EXPECT_EQ(e.json_path(), pointer + "/zz-not-a-field") << e.what();
        const auto at = e.reason().find(marker);
        if (at == std::string::npos) {
            ADD_FAILURE() << e.what();
            return {};
        }
        std::set<std::string> out;
        std::string list = e.reason().substr(at + marker.size());
        for (size_t start = 0; start <= list.size();) {
            const size_t comma = std::min(list.find(", ", start), list.size());
            out.insert(list.substr(start, comma - start));
            start = comma + 2;
        }
        return out;
    }
    ADD_FAILURE() << origin << ": an unknown field at " << pointer << " was accepted";
    return {};
}

// The hand-written docs whose scenario examples are checked: README.md and docs/*.md, but the pages
// generated from the scenario files and the schema (docs/labs.md, docs/scenarios.md). The lint test
// (tools/lint/check-scenarios.mjs) reads the same ones.
std::vector<fs::path> docs_with_examples() {
    std::vector<fs::path> out{k_source / "README.md"};
    std::vector<fs::path> pages;
    for (const auto& e : fs::directory_iterator(k_source / "docs")) {
        const std::string name = e.path().filename().string();
        if (e.is_regular_file() && e.path().extension() == ".md" && name != "labs.md" && name != "scenarios.md")
            pages.push_back(e.path());
    }
    std::sort(pages.begin(), pages.end());
    out.insert(out.end(), pages.begin(), pages.end());
    return out;
}

// The scenario files (comments are fine for nlohmann's parser), the docs' examples (```json blocks
// starting with "{", as the lint test takes them) and a lab of this test's own.
std::vector<std::pair<std::string, json>> documents() {
    std::vector<std::pair<std::string, json>> out;
    for (const auto& e : fs::recursive_directory_iterator(k_source / "scenarios")) {
        if (!e.is_regular_file() || e.path().extension() != ".json" || e.path().filename() == k_schema_file) continue;
        out.emplace_back(e.path().string(), json::parse(slurp(e.path()), nullptr, true, true));
    }
    const std::regex block("\n```json\n(\\{[^`]*)\n```");
    for (const fs::path& doc : docs_with_examples()) {
        const std::string text = slurp(doc);
        const std::string name = fs::relative(doc, k_source).string();
        for (auto it = std::sregex_iterator(text.begin(), text.end(), block); it != std::sregex_iterator(); ++it)
            out.emplace_back(fmt::format("{} example at byte {}", name, it->position()), json::parse((*it)[1].str()));
    }
    // What no shipped lab has yet: the simulator's timing.
    out.emplace_back("the test's own sim lab", json::parse(R"({
        "id": "sim-timing", "title": "T", "kind": "workload",
        "orders": [ { "id": 42 } ],
        "events": [ { "order": 42, "type": "created", "version": 1 } ],
        "sim": { "rtt_us": [10, 20], "wakeup_us": [0, 5], "start_us": [0, 100] },
        "expect": { "wrong": "none" }
    })"));
    return out;
}

TEST(ScenarioSchemaTest, DocsExamplesLoad) {
    size_t examples = 0;
    for (const auto& [origin, doc] : documents()) {
        if (origin.find(".md example at byte ") == std::string::npos) continue;  // the files load in ScenarioLoaderTest
        ++examples;
        EXPECT_NO_THROW(parse_scenario(doc.dump(), origin)) << origin;
    }
    EXPECT_GE(examples, 2u);
}

TEST(ScenarioSchemaTest, EveryObjectListsTheFieldsTheLoaderKnows) {
    std::vector<std::regex> regexes;
    for (const auto& p : places()) regexes.push_back(place_regex(p.pattern));
    std::vector<size_t> seen(places().size(), 0);
    // Named references, not a structured binding: clang 14 (the sanitizer builds') cannot capture one.
    for (const auto& document : documents()) {
        const std::string& origin = document.first;
        const json& doc = document.second;
        std::function<void(const json&, const std::string&)> walk = [&](const json& node, const std::string& pointer) {
            if (node.is_array())
                for (size_t i = 0; i < node.size(); ++i) walk(node[i], pointer + "/" + std::to_string(i));
            if (!node.is_object()) return;
            if (std::regex_match(pointer, k_not_objects_of_the_loader)) return;
            if (std::regex_match(pointer, k_map_of_objects)) {
                for (const auto& [key, value] : node.items()) walk(value, pointer + "/" + key);
                return;
            }
            size_t i = 0;
            while (i < regexes.size() && !std::regex_match(pointer, regexes[i])) ++i;
            if (i == regexes.size()) {
                ADD_FAILURE() << origin << ": no schema place for the object at " << pointer << ": add it to places()";
                return;
            }
            ++seen[i];
            const Place& place = places()[i];
            const std::string where = place.schema(doc, pointer);
            std::set<std::string> schema_fields = property_names(where);
            schema_fields.erase("$schema");  // accepted and ignored, never listed by the loader
            std::set<std::string> loader_fields = loader_known_fields(doc, pointer, origin);
            for (const auto& f : place.loader_only) loader_fields.erase(f);
            EXPECT_EQ(schema_fields, loader_fields) << origin << ": the object at \"" << pointer << "\", schema " << where;
            for (const auto& [key, value] : node.items()) walk(value, pointer + "/" + key);
        };
        walk(doc, "");
    }
    for (size_t i = 0; i < places().size(); ++i)
        EXPECT_GT(seen[i], 0u) << "no scenario file or docs example has an object at " << places()[i].pattern
                               << ": nothing checks its schema";
}

// tools/lint/bad-scenarios/*.json: "// loader: POINTER" is where the loader refuses the file.
TEST(ScenarioSchemaTest, TheLintTestsBadScenariosAreRefusedByTheLoaderToo) {
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(k_source / "tools" / "lint" / "bad-scenarios")) {
        if (e.path().extension() != ".json") continue;
        ++files;
        const std::string text = slurp(e.path());
        std::smatch m;
        ASSERT_TRUE(std::regex_search(text, m, std::regex("// loader: (\\S+)"))) << e.path();
        try {
            load_scenario(e.path().string());
            ADD_FAILURE() << e.path() << " loads";
        } catch (const ScenarioError& err) {
            EXPECT_EQ(err.json_path(), m[1].str()) << err.what();
        }
    }
    EXPECT_GE(files, 2u);
}

}  // namespace scenario_schema_test
}  // namespace relab
