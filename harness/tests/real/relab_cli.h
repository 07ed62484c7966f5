// Running the relab binary from an end-to-end test: `relab run ARGS --json FILE --timelines all`
// in a test's own folder (TMPDIR too), its exit status, output and JSON report read back.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace relab::test {

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

struct RelabRun {
    int exit_code = -1;
    nlohmann::json report;
    std::string out;
    std::string err;
};

// Whether a run's JSON joins the CI report (RELAB_REPORTS_DIR).
enum class CiReport {
    save,  // every run of a shipped or hand-made lab, whatever its exit status: a broken lab must show
    skip,  // a run that breaks a lab on purpose (a mutant, a wrong expectation): CI must not show it
};

// Runs relab in `dir` (which must have a tmp/ folder). When RELAB_REPORTS_DIR is set
// (`./run_labs.sh test`) and the run wrote its JSON, the JSON is kept there, held or broken, so the
// HTML, Markdown and JUnit rendered after the tests show every lab the tests ran, a broken one as a
// failure. A test that breaks a lab on purpose passes CiReport::skip.
inline RelabRun run_relab(const std::filesystem::path& dir, const std::string& args, CiReport ci = CiReport::save) {
    namespace fs = std::filesystem;
    const auto json_path = dir / "run.json";
    fs::remove(json_path);
    const std::string cmd =
        fmt::format("TMPDIR={} {} run {} --json {} --timelines all >{} 2>{}", (dir / "tmp").string(), RELAB_BINARY, args,
                    json_path.string(), (dir / "out.txt").string(), (dir / "err.txt").string());
    const int status = std::system(cmd.c_str());
    RelabRun r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir / "out.txt");
    r.err = slurp(dir / "err.txt");
    if (fs::exists(json_path)) r.report = nlohmann::json::parse(slurp(json_path));
    const char* reports = std::getenv("RELAB_REPORTS_DIR");
    if (ci == CiReport::save && reports && *reports && fs::exists(json_path)) {
        static int saved = 0;
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        // The suite and the process in the name: ctest runs each test in a process of its own, side by side.
        fs::copy_file(json_path,
                      fs::path(reports) / fmt::format("test-{}.{}-{}-{}.json", test->test_suite_name(), test->name(),
                                                      getpid(), ++saved),
                      fs::copy_options::overwrite_existing);
    }
    return r;
}

// The lab with this id in a run's JSON report.
inline const nlohmann::json& lab_of(const RelabRun& r, const std::string& id) {
    for (const auto& l : r.report.at("labs"))
        if (l.at("id") == id) return l;
    throw std::runtime_error("no lab " + id + " in the report");
}

// The fixture of a real test that runs relab: a folder of its own per test, named after its suite
// (its tmp/ is relab's TMPDIR there), removed after the test whatever the outcome.
class RelabDirTest : public ::testing::Test {
protected:
    void SetUp() override {
        static int counter = 0;
        const char* suite = ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name();
        m_dir = std::filesystem::temp_directory_path() / fmt::format("relab-{}-{}-{}", suite, getpid(), ++counter);
        std::filesystem::create_directories(m_dir / "tmp");
    }
    void TearDown() override { std::filesystem::remove_all(m_dir); }
    RelabRun relab(const std::string& args, CiReport ci = CiReport::save) { return run_relab(m_dir, args, ci); }

    std::filesystem::path m_dir;
};

}  // namespace relab::test
