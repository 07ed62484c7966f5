// What the fuzzers (harness/fuzz) found, each as the refusal a user now gets. The inputs that
// crashed a target are replayed by ctest's fuzz_regressions (harness/fuzz/regressions/); these
// tests pin the messages.
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "real/temp_dir.h"
#include "report/lab_diff.h"
#include "report/report_dir.h"
#include "scenario/scenario.h"

namespace relab {
namespace {

using nlohmann::json;

std::optional<ScenarioError> scenario_error(const std::string& text) {
    try {
        parse_scenario(text, "f.json");
    } catch (const ScenarioError& e) {
        return e;
    }
    return std::nullopt;
}

TEST(FuzzFindingsTest, a_number_beyond_a_double_is_a_scenario_error_at_its_line) {
    // The parser throws out_of_range, not parse_error, for it: it escaped the loader.
    const auto e = scenario_error("{\n  \"id\": \"a\",\n  \"runs\": 1e400\n}");
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->json_path(), "line 3, column 15");
    EXPECT_STREQ(e->what(), "f.json: at line 3, column 15: number overflow parsing '1e400'");
}

TEST(FuzzFindingsTest, a_report_file_with_a_number_beyond_a_double_is_not_json_and_named) {
    TempDir dir;
    const std::string file = dir.path() + "/run.json";
    std::ofstream(file) << R"({"labs": [], "wall_s": -5e7616})";
    try {
        read_report_dir(dir.path());
        FAIL() << "accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(file + ": not JSON: ", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find("number overflow"), std::string::npos) << e.what();
    }
    std::vector<std::string> notes;
    try {
        read_digest(file, notes);  // relab diff's reading of one file
        FAIL() << "accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind(file + ": not JSON (", 0), 0u) << e.what();
    }
}

}  // namespace
}  // namespace relab
