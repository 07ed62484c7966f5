// The docs lint test (ctest docs_lint, label lint). DocsCheck.* run the checks of cli/docs_check.h
// on small fixture folders, sound ones and broken ones, so each check is seen to pass and to fail;
// they also test GitHub's anchors and the two generators. RepoDocs.* check the repository's own
// README.md and docs/ (only in docs_lint: the unit test leaves them out).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_spec.h"
#include "cli/commands.h"
#include "cli/docs_check.h"
#include "report/markdown_text.h"
#include "report/schema_doc.h"
#include "scenario/loader/loader.h"
#include "scenario/scenario.h"

namespace relab {
namespace docs_lint_test {

namespace fs = std::filesystem;

const fs::path k_source = RELAB_SOURCE_DIR;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

// A repository of a few Markdown files in a temporary folder, and the facts it is checked against:
// relab's real command line, three lab names and one generated file.
class DocsCheck : public ::testing::Test {
protected:
    void SetUp() override {
        m_root = fs::temp_directory_path() / fmt::format("relab-docs-test-{}", getpid());
        fs::remove_all(m_root);
        fs::create_directories(m_root / "docs");
        fs::create_directories(m_root / "scenarios");
        fs::create_directories(m_root / "harness/src/fault");
        write("scenarios/08a-baseline.json", "{}");
        write("harness/src/fault/faults.cpp", "");
        m_facts.lab_names = {"08a-baseline", "baseline", "idem"};
        m_facts.cli = cli_spec();
        m_facts.generated = {{"docs/gen.md", "# Generated\n\nnow\n", "./build/relab list --format markdown > docs/gen.md"}};
        write("docs/gen.md", "# Generated\n\nnow\n");
        write("docs/guide.md", "# Guide\n\n## Run one lab\n\nText.\n");
    }
    void TearDown() override { fs::remove_all(m_root); }

    void write(const std::string& rel, const std::string& text) {
        std::ofstream(m_root / rel, std::ios::binary) << text;
    }
    // The problems found when README.md holds `readme`.
    std::vector<std::string> check_readme(const std::string& readme) {
        write("README.md", readme);
        return check_docs(m_root.string(), doc_files(m_root.string()), m_facts);
    }
    // Asserts exactly one problem, at README.md:line, whose text matches `pattern`.
    void expect_one(const std::vector<std::string>& problems, int line, const std::string& pattern) {
        ASSERT_EQ(problems.size(), 1u) << joined(problems);
        EXPECT_EQ(problems[0].rfind(fmt::format("README.md:{}: ", line), 0), 0u) << problems[0];
        EXPECT_TRUE(std::regex_search(problems[0], std::regex(pattern))) << problems[0] << "\ndoes not match " << pattern;
    }

    fs::path m_root;
    DocsFacts m_facts;
};

const char* k_sound_readme = R"(# relab

See [the guide](docs/guide.md), [one lab](docs/guide.md#run-one-lab) and [below](#parts-and-groups).
![shot](docs/gen.md) and <a href="docs/guide.md">html</a>; the web: [site](https://example.org/x).

## Parts and groups

| part | labs |
| --- | --- |
| `baseline` | `08a-baseline` |

Run `relab run baseline --jobs 2`, `relab run 08a-baseline --mutant cas-write` or `relab list --format markdown > docs/labs.md`.
An id in prose: `08a-baseline`; a file: `scenarios/08a-baseline.json`; output: `relab: 1 lab(s)`.

```bash
./build/relab run idem --backend sim --trials 100 --out-dir reports/out
./run_labs.sh baseline --seed 7
./run_labs.sh test -L lint
relab run LAB [--seed N] --timelines all \
    --lang vi
relab diff reports/reference reports/out --strict
```
)";

TEST_F(DocsCheck, SoundDocsPass) {
    const std::vector<std::string> problems = check_readme(k_sound_readme);
    EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST_F(DocsCheck, FailsOnABrokenLink) {
    expect_one(check_readme("# A\n\nSee [the guide](docs/missing.md).\n"), 3, "broken link docs/missing.md: docs/missing.md does not exist");
}

TEST_F(DocsCheck, FailsOnABrokenAnchorHereOrInAnotherFile) {
    expect_one(check_readme("# A\n\n[x](#b)\n"), 3, "has no heading with the anchor #b");
    expect_one(check_readme("# A\n\n[x](docs/guide.md#run-all-labs)\n"), 3,
               "docs/guide.md has no heading with the anchor #run-all-labs");
}

TEST_F(DocsCheck, FailsOnALinkOutOfTheRepository) {
    expect_one(check_readme("# A\n\n[notes](../../elsewhere/notes.md)\n"), 3, "points outside the repository");
}

TEST_F(DocsCheck, LinksInCodeAreNotLinks) {
    EXPECT_TRUE(check_readme("# A\n\n`[x](missing.md)`\n\n```\n[y](missing.md)\n```\n").empty());
}

TEST_F(DocsCheck, FailsOnAnUnknownLabId) {
    expect_one(check_readme("# A\n\nThe lab `08z-nothing` shows it.\n"), 3, "names `08z-nothing`, which is no lab id");
    expect_one(check_readme("# A\n\n```\nrelab run 08a-baseline nolab --jobs 2\n```\n"), 4,
               "relab run names `nolab`, which is no lab id");
    expect_one(check_readme("# A\n\n```sh\n./run_labs.sh basline\n```\n"), 4, "names `basline`");
}

TEST_F(DocsCheck, FailsOnAnUnknownPartOrGroupInATable) {
    expect_one(check_readme("# A\n\n| group | what |\n| --- | --- |\n| `idem` | fine |\n| `idempotency` | no |\n"), 6,
               "a table names `idempotency`");
}

TEST_F(DocsCheck, FailsOnAnUnknownRelabOption) {
    expect_one(check_readme("# A\n\nRun `relab run baseline --no-such-flag`.\n"), 3,
               "relab run has no option --no-such-flag");
    expect_one(check_readme("# A\n\n```\n./build/relab diff a b --json --save-ref x\n```\n"), 4,
               "relab diff has no option --save-ref");
    // An option of another subcommand is not one of this one's.
    expect_one(check_readme("# A\n\n`relab report --jobs 2`\n"), 3, "relab report has no option --jobs");
}

TEST_F(DocsCheck, FailsOnAnUnknownSubcommand) {
    expect_one(check_readme("# A\n\n`relab lst`\n"), 3, "relab has no subcommand lst");
}

TEST_F(DocsCheck, AnOptionValueIsNotAPositional) {
    // "--scenarios" takes a value: "scenarios/load" is not read as a lab, "--quiet" takes none.
    EXPECT_TRUE(check_readme("# A\n\n`relab run --scenarios elsewhere baseline --quiet idem`\n").empty());
}

TEST_F(DocsCheck, FailsOnAPathThatIsNotThere) {
    EXPECT_TRUE(check_readme("# R\n\n`fault/faults.cpp` and `scenarios/08a-baseline.json`, `reports/out/x.html`\n").empty());
    expect_one(check_readme("# R\n\n`run/supervisor.cpp` moved.\n"), 3, "run/supervisor.cpp.*does not exist");
    expect_one(check_readme("# R\n\n`scenarios/08z.json`\n"), 3, "scenarios/08z.json.*does not exist");
}

TEST_F(DocsCheck, FailsOnAStaleGeneratedFileAndNamesTheCommand) {
    write("docs/gen.md", "# Generated\n\nthen\n");
    const std::vector<std::string> problems = check_docs(m_root.string(), doc_files(m_root.string()), m_facts);
    ASSERT_EQ(problems.size(), 1u) << joined(problems);
    EXPECT_EQ(problems[0],
              "docs/gen.md:3: stale: it differs from what its generator prints now (from this line on); regenerate it "
              "with `./build/relab list --format markdown > docs/gen.md` and commit it");
    fs::remove(m_root / "docs/gen.md");
    const std::vector<std::string> missing = check_docs(m_root.string(), doc_files(m_root.string()), m_facts);
    ASSERT_EQ(missing.size(), 1u) << joined(missing);
    EXPECT_NE(missing[0].find("missing; generate it with `./build/relab list"), std::string::npos) << missing[0];
}

TEST(DocsCheckSlug, GithubAnchors) {
    EXPECT_EQ(github_slug("Parts and groups"), "parts-and-groups");
    EXPECT_EQ(github_slug("`relab run`: options"), "relab-run-options");
    EXPECT_EQ(github_slug("`shard.reshard`"), "shardreshard");
    EXPECT_EQ(github_slug("What it costs (2-core machine)"), "what-it-costs-2-core-machine");
    EXPECT_EQ(github_slug("Exit codes — 0, 1, 2"), "exit-codes--0-1-2");
    EXPECT_EQ(github_slug("Lưu idempotency key ở Redis"), "lưu-idempotency-key-ở-redis");
    EXPECT_EQ(github_slug("Vấn đề thứ tự"), "vấn-đề-thứ-tự");
    EXPECT_EQ(github_slug("Đ and Ư"), "đ-and-ư");
    EXPECT_EQ(github_slug("[Link](x.md) text"), "link-text");
    Slugger s;
    EXPECT_EQ(s.add("Usage"), "usage");
    EXPECT_EQ(s.add("Usage"), "usage-1");
    EXPECT_EQ(s.add("Usage"), "usage-2");
}

// The CLI's definition as the check sees it: relab's own, with its values and flags told apart.
TEST(DocsCheckCli, SpecIsRelabsCommandLine) {
    const std::vector<CliCommandSpec> cli = cli_spec();
    std::set<std::string> names;
    for (const auto& c : cli) names.insert(c.name);
    EXPECT_EQ(names, (std::set<std::string>{"", "list", "run", "role", "report", "merge", "diff", "bench", "schema"}));
    const CliCommandSpec* run = nullptr;
    for (const auto& c : cli)
        if (c.name == "run") run = &c;
    ASSERT_NE(run, nullptr);
    ASSERT_NE(run->option("--jobs"), nullptr);
    EXPECT_TRUE(run->option("--jobs")->takes_value);
    ASSERT_NE(run->option("--quiet"), nullptr);
    EXPECT_FALSE(run->option("--quiet")->takes_value);
    EXPECT_NE(run->option("-h"), nullptr);
    EXPECT_EQ(run->option("--format"), nullptr);
    EXPECT_EQ(run->positionals, std::vector<std::string>{"labs"});
}

// The schema reference refuses a schema with an undescribed property or rule, naming each.
TEST(DocsCheckSchema, UndescribedPropertiesAndRulesAreRefused) {
    const std::string schema = R"({
      "description": "x", "type": "object",
      "properties": {"a": {"description": "A.", "type": "integer"}, "b": {"type": "string"},
                     "c": {"description": "C.", "type": "object", "properties": {"d": {"type": "boolean"}},
                           "anyOf": [{"required": ["d"]}]}},
      "allOf": [{"if": {"required": ["a"]}, "then": {"required": ["b"]}}],
      "$defs": {}
    })";
    const std::vector<std::string> holes = undocumented_in_schema(schema);
    EXPECT_EQ(holes, (std::vector<std::string>{"b", "c.d", "`c` (anyOf outside allOf: give it an allOf item with a description)",
                                               "Top level (rule 1 of allOf)"}));
    EXPECT_THROW(schema_markdown(schema, "relab schema"), std::runtime_error);
}

TEST(DocsCheckSchema, RowsCarryTypeDefaultUnitAndExample) {
    const std::string schema = R"({
      "description": "x", "type": "object", "required": ["id"],
      "properties": {
        "id": {"description": "The id.", "examples": ["08a-baseline"], "type": "string"},
        "wait_ms": {"description": "How long.", "default": 20, "type": "integer", "minimum": 1},
        "title_vi": {"description": "In Vietnamese. Default: title.", "type": "string"},
        "band": {"$ref": "#/$defs/band"}, "other": {"$ref": "#/$defs/band"}
      },
      "$defs": {"band": {"description": "A band.", "type": "object",
                         "properties": {"at_least": {"description": "At least.", "type": "integer"}}}}
    })";
    const std::string md = schema_markdown(schema, "relab schema --format markdown > docs/scenarios.md");
    EXPECT_NE(md.find("Generated by `relab schema --format markdown > docs/scenarios.md`"), std::string::npos);
    EXPECT_NE(md.find("| `id` | string | *required* | — | The id. Example: `\"08a-baseline\"`. |"), std::string::npos) << md;
    EXPECT_NE(md.find("| `wait_ms` | integer ≥ 1 | `20` | ms | How long. |"), std::string::npos) << md;
    EXPECT_NE(md.find("| `title_vi` | string | title | — | In Vietnamese. |"), std::string::npos) << md;
    EXPECT_NE(md.find("| `band` | [band](#band) |"), std::string::npos) << md;
    EXPECT_NE(md.find("### `band`"), std::string::npos) << md;
    EXPECT_NE(md.find("Used at: `band`, `other`."), std::string::npos) << md;
}

// The schema's "default" of the property at `pointer` (a JSON Pointer into scenarios/schema.json).
nlohmann::json schema_default(const std::string& pointer) {
    static const nlohmann::json schema = nlohmann::json::parse(slurp(k_source / "scenarios" / "schema.json"));
    return schema.at(nlohmann::json::json_pointer(pointer)).at("default");
}

// The defaults docs/scenarios.md prints are the loader's: minimal labs read back field by field.
TEST(DocsCheckSchema, DefaultsAreTheLoaders) {
    const std::string d = "/$defs/", p = "/properties/";
    const Scenario a = parse_scenario(R"({"id": "a", "title": "a", "kind": "workload", "expect": {"wrong": "none"},
        "orders": [{"id": 1}], "events": [{"order": 1, "type": "x", "version": 1}], "consumers": 1,
        "stream": {}, "write": {}, "lock": {}, "buffer": {}, "producer": {}, "sim": {},
        "recovery": {"autoclaim": {}}, "soak": {}})", "a.json");
    EXPECT_EQ(schema_default(p + "runs"), a.runs);
    EXPECT_EQ(schema_default(p + "seed"), a.seed);
    EXPECT_EQ(schema_default(p + "stream_line"), a.flow().stream_line);
    EXPECT_EQ(schema_default(p + "soak/properties/drain_ms"), a.flow().soak.drain_ms);
    EXPECT_EQ(schema_default(d + "stream/properties/key"), a.flow().stream.key);
    EXPECT_EQ(schema_default(d + "stream/properties/group"), a.flow().stream.group);
    EXPECT_EQ(schema_default(d + "stream/properties/read_count"), a.flow().stream.read_count);
    EXPECT_EQ(schema_default(d + "stream/properties/block_ms"), a.flow().stream.block_ms);
    EXPECT_EQ(schema_default(d + "stream/properties/ack"), a.flow().stream.ack == StreamSpec::Ack::each ? "each" : "batch");
    EXPECT_EQ(schema_default(d + "order/properties/initial_status"), a.flow().orders[0].initial_status);
    EXPECT_EQ(schema_default(d + "order/properties/initial_version"), a.flow().orders[0].initial_version);
    EXPECT_EQ(schema_default(d + "order/properties/expected_final"), a.flow().orders[0].expected_final.status);
    EXPECT_EQ(schema_default(d + "event/properties/at_ms"), a.flow().events[0].at_ms);
    EXPECT_EQ(schema_default(d + "write/properties/mode"), to_string(a.flow().write.mode));
    EXPECT_EQ(schema_default(d + "write/properties/version_source"), to_string(a.flow().write.version_source));
    EXPECT_EQ(schema_default(d + "write/properties/dedupe"), to_string(a.flow().write.dedupe));
    EXPECT_EQ(schema_default(d + "write/properties/side_effect"), a.flow().write.side_effect);
    EXPECT_EQ(schema_default(d + "write/properties/isolation"), to_string(a.flow().write.isolation));
    EXPECT_EQ(schema_default(d + "write/properties/serialization_retries"), a.flow().write.serialization_retries);
    EXPECT_EQ(schema_default(d + "lock/properties/key"), a.flow().lock.key);
    EXPECT_EQ(schema_default(d + "lock/properties/ttl_ms"), a.flow().lock.ttl_ms);
    EXPECT_EQ(schema_default(d + "lock/properties/retry_ms"), a.flow().lock.retry_ms);
    EXPECT_EQ(schema_default(d + "lock/properties/skew_ms"), nlohmann::json::array({a.flow().lock.skew_ms.min, a.flow().lock.skew_ms.max}));
    EXPECT_EQ(schema_default(d + "buffer/properties/gap_timeout_ms"), a.flow().buffer.gap_timeout_ms);
    EXPECT_EQ(schema_default(d + "producer/properties/backoff_ms"), a.flow().producer.backoff_ms);
    EXPECT_EQ(schema_default(d + "producer/properties/backoff_multiplier"), a.flow().producer.backoff_multiplier);
    EXPECT_EQ(schema_default(d + "producer/properties/max_attempts"), a.flow().producer.max_attempts);
    EXPECT_EQ(schema_default(d + "sim/properties/rtt_us"), nlohmann::json::array({a.sim.rtt_us.min, a.sim.rtt_us.max}));
    EXPECT_EQ(schema_default(d + "sim/properties/wakeup_us"), nlohmann::json::array({a.sim.wakeup_us.min, a.sim.wakeup_us.max}));
    EXPECT_EQ(schema_default(d + "sim/properties/start_us"), nlohmann::json::array({a.sim.start_us.min, a.sim.start_us.max}));
    const std::string claim = d + "recovery/properties/autoclaim/properties/";
    EXPECT_EQ(schema_default(claim + "min_idle_ms"), a.flow().recovery.autoclaim.min_idle_ms);
    EXPECT_EQ(schema_default(claim + "every_ms"), a.flow().recovery.autoclaim.every_ms);
    EXPECT_EQ(schema_default(claim + "count"), a.flow().recovery.autoclaim.count);
    EXPECT_EQ(schema_default(claim + "in"), a.flow().recovery.autoclaim.in_reaper() ? "reaper" : "consumers");

    const Scenario b = parse_scenario(R"({"id": "b", "title": "b", "kind": "workload", "expect": {"wrong": "none"},
        "orders": [{"id": 1}], "events": [{"order": 1, "type": "x", "version": 1}],
        "dispatcher": {}, "fanout": {"workers": 2}})", "b.json");
    EXPECT_EQ(schema_default(p + "consumers"), b.flow().consumers);
    EXPECT_EQ(schema_default(d + "dispatcher/properties/ordering"), to_string(b.flow().dispatcher.ordering));
    EXPECT_EQ(schema_default(d + "dispatcher/properties/poll_ms"), b.flow().dispatcher.poll_ms);
    EXPECT_EQ(schema_default(d + "dispatcher/properties/max_rounds"), b.flow().dispatcher.max_rounds);
    EXPECT_EQ(schema_default(d + "dispatcher/properties/mark"), to_string(b.flow().dispatcher.mark));
    EXPECT_EQ(schema_default(d + "dispatcher/properties/publish_ms"), b.flow().dispatcher.publish_ms);
    EXPECT_EQ(schema_default(d + "dispatcher/properties/count"), b.flow().dispatcher.count);
    EXPECT_EQ(schema_default(d + "dispatcher/properties/claim"), to_string(b.flow().dispatcher.claim));
    EXPECT_EQ(schema_default(d + "fanout/properties/poll_ms"), b.flow().fanout.poll_ms);
    EXPECT_EQ(schema_default(d + "fanout/properties/dispatch"),
              b.flow().fanout.dispatch == FanoutSpec::Dispatch::per_key ? "per_key" : "any_worker");

    const Scenario c = parse_scenario(R"({"id": "c", "title": "c", "kind": "workload", "expect": {"wrong": "none"},
        "generate": {"orders": 2, "events": [{"type": "x", "version": 1}]},
        "shard": {"reshard": {"to": 4, "after_events": 1}}})", "c.json");
    EXPECT_EQ(schema_default(d + "generate/properties/first_id"), c.flow().orders[0].id);
    EXPECT_EQ(schema_default(d + "generate/properties/expected_final"), c.flow().orders[0].expected_final.status);
    EXPECT_EQ(c.flow().events[1].at_ms, 0) << "every_ms defaults to 0: every order at once";
    EXPECT_EQ(schema_default(d + "shard/properties/streams"), c.flow().shard.streams);
    EXPECT_EQ(schema_default(d + "shard/properties/key_format"), c.flow().shard.key_format);
    EXPECT_EQ(schema_default(d + "shard/properties/by"), to_string(c.flow().shard.by));
    EXPECT_EQ(schema_default(d + "shard/properties/reshard/properties/drain"), c.flow().shard.reshard->drain);
    EXPECT_EQ(schema_default(d + "shard/properties/reshard/properties/drain_poll_ms"), c.flow().shard.reshard->drain_poll_ms);
}

// Every property name of the real schema, wherever it is defined.
void property_names(const nlohmann::json& n, std::set<std::string>& out) {
    if (n.is_array())
        for (const auto& v : n) property_names(v, out);
    if (!n.is_object()) return;
    for (const auto& [key, value] : n.items()) {
        if (key == "properties" && value.is_object())
            for (const auto& [name, p] : value.items()) out.insert(name);
        if (key != "if" && key != "then" && key != "else") property_names(value, out);
    }
}

TEST(RepoDocs, EveryPropertyOfTheSchemaIsInTheReference) {
    const std::string schema = slurp(k_source / "scenarios" / "schema.json");
    EXPECT_EQ(undocumented_in_schema(schema), std::vector<std::string>{});
    const std::string md = schema_reference_markdown((k_source / "scenarios").string());
    std::set<std::string> names;
    property_names(nlohmann::json::parse(schema), names);
    ASSERT_GT(names.size(), 150u);
    for (const auto& name : names) {
        const bool row = md.find("`" + name + "` |") != std::string::npos || md.find("." + name + "` |") != std::string::npos;
        EXPECT_TRUE(row) << name << " has no row in the reference";
    }
}

TEST(RepoDocs, EveryLabIsInTheCatalogue) {
    const std::string scenarios = (k_source / "scenarios").string();
    const std::string md = labs_markdown(scenarios, default_reference_dir(scenarios));
    size_t labs = 0;
    std::vector<std::string> dirs = {scenarios};
    for (const auto& d : named_only_scenario_dirs(scenarios)) dirs.push_back(d);
    for (const auto& dir : dirs)
        for (const auto& s : load_scenario_dir(dir)) {
            ++labs;
            EXPECT_NE(md.find("\n### " + s.id + "\n"), std::string::npos) << s.id;
        }
    EXPECT_GT(labs, 80u);
}

// The catalogue's measured column covers the labs a full run leaves out too: their references
// (reports/reference/load, examples, soak) are read beside the full run's.
TEST(RepoDocs, EveryLabHasAMeasuredFigureInTheCatalogue) {
    const std::string scenarios = (k_source / "scenarios").string();
    const std::string md = labs_markdown(scenarios, default_reference_dir(scenarios));
    EXPECT_EQ(md.find("no reference entry"), std::string::npos)
        << "a lab has no reference figure: save its group's run with relab diff --save-reference";
    for (const char* id : {"load-shard-failover-s2-s5", "soak-s3-s5-kills", "php-link-hang"}) {
        const size_t lab = md.find(std::string("\n### ") + id + "\n");
        ASSERT_NE(lab, std::string::npos) << id;
        const std::string section_md = md.substr(lab, md.find("\n### ", lab + 1) - lab);
        EXPECT_NE(section_md.find("- measured: held"), std::string::npos) << id;
    }
}

// Done when the reader can hold every quote against the article: each lab's quote_vi, and every
// passage of its throughput and also, stands in the catalogue with its section.
TEST(RepoDocs, EveryQuoteIsInTheCatalogueWithItsSection) {
    const std::string scenarios = (k_source / "scenarios").string();
    const std::string md = labs_markdown(scenarios, default_reference_dir(scenarios));
    size_t quotes = 0;
    std::vector<std::string> dirs = {scenarios};
    for (const auto& d : named_only_scenario_dirs(scenarios)) dirs.push_back(d);
    for (const auto& dir : dirs)
        for (const auto& s : load_scenario_dir(dir)) {
            std::vector<ArticlePassage> passages = s.documented.also;
            if (!s.documented.quote_vi.empty()) passages.push_back({s.documented.quote_vi, s.documented.section, "", ""});
            if (s.documented.throughput) passages.push_back(s.documented.throughput->passage);
            const size_t lab = md.find("\n### " + s.id + "\n");
            ASSERT_NE(lab, std::string::npos) << s.id;
            const std::string section_md = md.substr(lab, md.find("\n### ", lab + 1) - lab);
            for (const auto& p : passages) {
                ++quotes;
                EXPECT_NE(section_md.find("\n> " + md_escape(p.quote_vi) + "\n"), std::string::npos) << s.id << ": " << p.quote_vi;
                EXPECT_NE(section_md.find(", " + md_escape(p.section) + ":\n"), std::string::npos) << s.id << ": " << p.section;
            }
        }
    EXPECT_GT(quotes, 80u);
}

// README.md and docs/*.md: links, anchors, lab names, relab's command line, generated files.
TEST(RepoDocs, ReadmeAndDocsAreSound) {
    const std::vector<std::string> files = doc_files(k_source.string());
    ASSERT_FALSE(files.empty());
    const std::vector<std::string> problems = check_docs(k_source.string(), files, repo_docs_facts(k_source.string()));
    EXPECT_TRUE(problems.empty()) << problems.size() << " problem(s) in README.md and docs/:\n" << joined(problems);
}

}  // namespace docs_lint_test
}  // namespace relab
