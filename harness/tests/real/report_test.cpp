// `relab report` end to end: real labs run into a folder, the report is rendered from their JSON,
// and headless Chromium draws the page. Also: the progress line appears on a terminal and only
// there.
#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../unit/xml_tree.h"
#include "png_image.h"
#include "ports/seed_text.h"
#include "report/idem_facts.h"
#include "report/lab_summary.h"
#include "report/reporter.h"
#include "report/text/timeline.h"

namespace report_test {

namespace fs = std::filesystem;
using nlohmann::json;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

int shell(const std::string& cmd) {
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The first of `names` found on PATH, or "".
std::string find_program(std::initializer_list<const char*> names) {
    for (const char* name : names)
        if (shell(fmt::format("command -v {} >/dev/null 2>&1", name)) == 0) return name;
    return {};
}

size_t count(const std::string& text, const std::string& needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

// The pseudo-terminal side a child writes to; closed on destruction.
class FdGuard {
public:
    explicit FdGuard(int fd) : m_fd(fd) {}
    ~FdGuard() {
        if (m_fd >= 0) ::close(m_fd);
    }
    FdGuard(const FdGuard&) = delete;
    FdGuard& operator=(const FdGuard&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

struct TerminalRun {
    int exit_code = -1;
    std::string output;  // stdout and stderr as the terminal saw them
};

// Runs `args` with stdout and stderr on a new pseudo-terminal, as in an interactive shell.
TerminalRun run_on_terminal(const std::vector<std::string>& args, const fs::path& tmpdir) {
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    if (pid < 0) throw std::runtime_error(std::string("forkpty: ") + std::strerror(errno));
    if (pid == 0) {
        setenv("TMPDIR", tmpdir.c_str(), 1);
        std::vector<char*> argv;
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    FdGuard guard(master);
    TerminalRun r;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(master, buf, sizeof buf);
        if (n > 0) {
            r.output.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;  // EIO once the child's side is closed
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// The labs are run once for the whole suite: three output groups, a workload with an overwrite,
// a lock that expires, and a scripted session.
class ReportTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_dir = fs::temp_directory_path() / fmt::format("relab-report-test-{}", getpid());
        fs::remove_all(s_dir);
        fs::create_directories(s_dir / "out");
        fs::create_directories(s_dir / "tmp");
        s_run_exit = shell(fmt::format("TMPDIR={} {} run baseline 08c-s4c 08d-cas-by-hand --runs 2 --quiet --out-dir {} "
                                       ">{} 2>{}",
                                       (s_dir / "tmp").string(), RELAB_BINARY, out().string(),
                                       (s_dir / "run.out").string(), (s_dir / "run.err").string()));
        s_report_exit = shell(fmt::format("{} report {} >{} 2>{}", RELAB_BINARY, out().string(),
                                          (s_dir / "report.out").string(), (s_dir / "report.err").string()));
    }
    static void TearDownTestSuite() { fs::remove_all(s_dir); }

    void SetUp() override {
        ASSERT_EQ(s_run_exit, 0) << slurp(s_dir / "run.err");
        ASSERT_EQ(s_report_exit, 0) << slurp(s_dir / "report.err");
    }

    static fs::path out() { return s_dir / "out"; }

    // Every lab of every JSON report in the folder, read back.
    static relab::RunReport saved_run() {
        relab::RunReport all;
        for (const char* name : {"08a-baseline.json", "08c-lock.json", "08d-cas.json"}) {
            const relab::RunReport run = relab::run_from_json(json::parse(slurp(out() / name)));
            all.labs.insert(all.labs.end(), run.labs.begin(), run.labs.end());
        }
        return all;
    }

    static inline fs::path s_dir;
    static inline int s_run_exit = -1;
    static inline int s_report_exit = -1;
};

TEST_F(ReportTest, without_a_terminal_a_run_prints_no_progress) {
    const std::string err = slurp(s_dir / "run.err");
    EXPECT_EQ(err.find('\r'), std::string::npos) << err;
    EXPECT_EQ(err.find("\033["), std::string::npos) << err;
    EXPECT_EQ(err.find("trial 1/2"), std::string::npos) << err;
    EXPECT_NE(err.find("relab: 3 lab(s), 3 held, 0 broken"), std::string::npos) << err;
    EXPECT_EQ(slurp(s_dir / "run.out"), "");  // --quiet
}

TEST_F(ReportTest, on_a_terminal_a_run_shows_lab_trial_and_elapsed_then_clears_the_line) {
    const auto r = run_on_terminal({RELAB_BINARY, "run", "08d-cas-by-hand", "--quiet"}, s_dir / "tmp");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(std::regex_search(r.output, std::regex("\r\033\\[K08d-cas-by-hand trial 1/1 \\([0-9]+\\.[0-9] s\\)")))
        << r.output;
    // The line is cleared before the summary, so no progress text is left on screen.
    EXPECT_NE(r.output.find("\r\033[Krelab: 1 lab(s), 1 held, 0 broken"), std::string::npos) << r.output;
}

TEST_F(ReportTest, the_report_is_three_files_beside_the_json) {
    for (const char* name : {"index.html", "summary.md", "junit.xml"}) EXPECT_TRUE(fs::is_regular_file(out() / name)) << name;
    for (const char* name : {"index.html.tmp", "summary.md.tmp", "junit.xml.tmp"}) EXPECT_FALSE(fs::exists(out() / name));
    EXPECT_NE(slurp(s_dir / "report.err").find("relab report: 3 lab(s) from 3 file(s): 3 held, 0 broken, 0 skipped"),
              std::string::npos)
        << slurp(s_dir / "report.err");
}

TEST_F(ReportTest, text_rendered_from_the_json_is_the_text_the_run_wrote) {
    for (const char* group : {"08a-baseline", "08c-lock", "08d-cas"}) {
        const relab::RunReport run = relab::run_from_json(json::parse(slurp(out() / (std::string(group) + ".json"))));
        std::ostringstream text;
        relab::make_text_reporter(relab::TextOptions{})->report(run, text);
        EXPECT_EQ(text.str(), slurp(out() / (std::string(group) + ".txt"))) << group;
    }
}

TEST_F(ReportTest, junit_xml_parses_and_its_counts_match_the_run) {
    const std::string xmllint = find_program({"xmllint"});
    ASSERT_FALSE(xmllint.empty()) << "xmllint is missing: apt-get install libxml2-utils (./run_labs.sh test does)";
    EXPECT_EQ(shell(fmt::format("{} --noout {} 2>&1", xmllint, (out() / "junit.xml").string())), 0);

    const auto root = relab::test::parse_xml(slurp(out() / "junit.xml"));
    const auto suites = root.all("testsuite");
    ASSERT_EQ(suites.size(), 1u);
    EXPECT_EQ(suites[0]->attr("tests"), "3");
    EXPECT_EQ(suites[0]->attr("failures"), "0");
    EXPECT_EQ(suites[0]->attr("skipped"), "0");
    const auto cases = suites[0]->all("testcase");
    // The files in name order (08a-baseline, 08c-lock, 08d-cas), one lab each.
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"08a-baseline", "08a-baseline"}, {"08c-lock", "08c-s4c"}, {"08d-cas", "08d-cas-by-hand"}};
    ASSERT_EQ(cases.size(), expected.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        EXPECT_EQ(cases[i]->attr("classname"), expected[i].first);
        EXPECT_EQ(cases[i]->attr("name"), expected[i].second);
        EXPECT_TRUE(cases[i]->all("failure").empty());
        ASSERT_EQ(cases[i]->all("system-out").size(), 1u);
    }
}

TEST_F(ReportTest, summary_md_lists_every_lab_with_documented_beside_measured) {
    const std::string md = slurp(out() / "summary.md");
    // Two trials of each workload and the one case by hand, as run above; the baseline and S4c go
    // wrong every time (stale overwrite, expired lock), the CAS by hand never does.
    const std::vector<std::pair<std::string, std::string>> measured = {
        {"08a-baseline", " | 2/2 | "}, {"08c-s4c", " | 2/2 | "}, {"08d-cas-by-hand", " | 0/1 cases | "}};
    for (const auto& [id, cell] : measured) {
        const size_t row = md.find("| `" + id + "` | real | ");
        ASSERT_NE(row, std::string::npos) << id << "\n" << md;
        const std::string line = md.substr(row, md.find('\n', row) - row);
        EXPECT_NE(line.find(cell), std::string::npos) << line;
        EXPECT_NE(line.find("✅ held"), std::string::npos) << line;
    }
    // The article's count beside the measured one (scenarios/08a-baseline.json documents 10/10).
    EXPECT_NE(md.find("| `08a-baseline` | real | "), std::string::npos);
    EXPECT_NE(md.substr(md.find("| `08a-baseline` | real | ")).find(" | 10/10 — wrong 10/10; "), std::string::npos) << md;
    EXPECT_EQ(md.find("Verdict notes"), std::string::npos) << md;  // every saved verdict confirmed
}

TEST_F(ReportTest, headless_chromium_draws_the_timelines) {
    const std::string chromium = find_program({"chromium", "chromium-browser", "google-chrome"});
    ASSERT_FALSE(chromium.empty()) << "Chromium is missing: apt-get install chromium (./run_labs.sh test does)";
    const std::string flags = fmt::format("--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir={}",
                                          (s_dir / "chromium").string());
    // Chromium also writes under $HOME (~/.config, ~/.cache): keep that in the test's folder too.
    const std::string browser = fmt::format("HOME={0} XDG_CONFIG_HOME={0}/config XDG_CACHE_HOME={0}/cache {1}",
                                            (s_dir / "chromium-home").string(), chromium);
    const std::string url = "file://" + (out() / "index.html").string();

    // The DOM as Chromium built it: one lane group per actor of every drawn trial and case.
    ASSERT_EQ(shell(fmt::format("{} {} --dump-dom {} >{} 2>{}", browser, flags, url, (s_dir / "dom.html").string(),
                                (s_dir / "chromium.err").string())),
              0)
        << slurp(s_dir / "chromium.err");
    const std::string dom = slurp(s_dir / "dom.html");
    size_t lanes = 0, figures = 0;
    for (const auto& lab : saved_run().labs) {
        for (const auto& t : lab.trials) {  // two trials each: all are drawn
            lanes += relab::trial_timeline(t, lab.scenario.flow().orders.size() > 1).lanes.size();
            ++figures;
        }
        for (const auto& c : lab.cases) {
            lanes += relab::case_timeline(c).lanes.size();
            ++figures;
        }
    }
    EXPECT_EQ(lanes, 13u);  // two labs × two trials × (producer, C1, C2), and the session by hand
    EXPECT_EQ(count(dom, "<g class=\"lane\" data-lane="), lanes) << dom.substr(0, 2000);
    EXPECT_EQ(count(dom, "<svg class=\"timeline\""), figures);
    EXPECT_GE(count(dom, "<g class=\"lane\" data-lane=\"C1\">"), 4u);
    EXPECT_GE(count(dom, "<polygon class=\"marker write overwrite\""), 2u);  // baseline: created overwrites paid

    // The pixels: not blank, and the red bar of the overwriting job is drawn.
    const fs::path shot = s_dir / "index.png";
    ASSERT_EQ(shell(fmt::format("{} {} --window-size=1200,2000 --screenshot={} {} >>{} 2>&1", browser, flags,
                                shot.string(), url, (s_dir / "chromium.err").string())),
              0)
        << slurp(s_dir / "chromium.err");
    const relab::test::PngImage img = relab::test::decode_png(shot.string());
    ASSERT_EQ(img.width, 1200u);
    ASSERT_EQ(img.height, 2000u);
    size_t non_white = 0;
    std::set<uint32_t> colours;
    for (const auto& p : img.pixels) {
        if (p.r < 245 || p.g < 245 || p.b < 245) ++non_white;
        colours.insert((uint32_t{p.r} << 16) | (uint32_t{p.g} << 8) | p.b);
    }
    EXPECT_GT(colours.size(), 50u);
    EXPECT_GT(non_white, img.pixels.size() / 50) << "the page looks blank";
    // Longest horizontal runs of the overwrite red and the job blue: only a timeline bar is that wide.
    auto longest_run = [&](auto&& is_colour) {
        size_t best = 0;
        for (uint32_t y = 0; y < img.height; ++y) {
            size_t run = 0;
            for (uint32_t x = 0; x < img.width; ++x) {
                run = is_colour(img.at(x, y)) ? run + 1 : 0;
                best = std::max(best, run);
            }
        }
        return best;
    };
    const size_t red = longest_run([](const relab::test::Rgb& p) { return p.r > 190 && p.g < 70 && p.b < 70; });
    const size_t blue = longest_run([](const relab::test::Rgb& p) {
        return p.r > 40 && p.r < 80 && p.g > 100 && p.g < 140 && p.b > 175 && p.b < 215;
    });
    EXPECT_GT(red, 300u) << "no overwrite bar in the screenshot " << shot;
    EXPECT_GT(blue, 20u) << "no job bar in the screenshot " << shot;
    if (const char* keep = std::getenv("RELAB_REPORT_SCREENSHOT")) fs::copy_file(shot, keep, fs::copy_options::overwrite_existing);
}

// The simulator's labs and the idempotency labs in one folder: a simulated run that skips a lab
// it cannot run, and idempotency labs on real servers (clients through the middleware, and
// redis-cli sessions), rendered together.
class ReportSimIdemTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        s_dir = fs::temp_directory_path() / fmt::format("relab-report-sim-idem-test-{}", getpid());
        fs::remove_all(s_dir);
        fs::create_directories(s_dir / "out");
        fs::create_directories(s_dir / "tmp");
        s_sim_exit = shell(fmt::format("TMPDIR={} {} run 08c-s4a 08d-cas-by-hand --backend sim --trials 300 --seed 5 --quiet "
                                       "--out-dir {} >{} 2>{}",
                                       (s_dir / "tmp").string(), RELAB_BINARY, out().string(),
                                       (s_dir / "sim.out").string(), (s_dir / "sim.err").string()));
        s_idem_exit = shell(fmt::format("TMPDIR={} {} run idem-middleware idem-keys idem-memory idem-race --quiet --out-dir {} "
                                        ">{} 2>{}",
                                        (s_dir / "tmp").string(), RELAB_BINARY, out().string(),
                                        (s_dir / "idem.out").string(), (s_dir / "idem.err").string()));
        s_report_exit = shell(fmt::format("{} report {} >{} 2>{}", RELAB_BINARY, out().string(),
                                          (s_dir / "report.out").string(), (s_dir / "report.err").string()));
    }
    static void TearDownTestSuite() { fs::remove_all(s_dir); }

    void SetUp() override {
        ASSERT_EQ(s_sim_exit, 0) << slurp(s_dir / "sim.err");
        ASSERT_EQ(s_idem_exit, 0) << slurp(s_dir / "idem.err");
        ASSERT_EQ(s_report_exit, 0) << slurp(s_dir / "report.err");
    }

    static fs::path out() { return s_dir / "out"; }

    static relab::RunReport saved(const char* name) { return relab::run_from_json(json::parse(slurp(out() / name))); }

    static inline fs::path s_dir;
    static inline int s_sim_exit = -1;
    static inline int s_idem_exit = -1;
    static inline int s_report_exit = -1;
};

TEST_F(ReportSimIdemTest, a_lab_the_simulator_skips_is_said_and_does_not_fail_the_run) {
    const std::string err = slurp(s_dir / "sim.err");
    EXPECT_NE(err.find("relab: 2 lab(s), 1 held, 0 broken, 1 skipped\n"), std::string::npos) << err;
    EXPECT_NE(err.find("  SKIPPED 08d-cas-by-hand: "), std::string::npos) << err;
    for (const char* name : {"08c-lock.sim.json", "08d-cas.sim.json", "idem-keys.json", "idem-memory.json"})
        EXPECT_TRUE(fs::is_regular_file(out() / name)) << name;
    EXPECT_NE(slurp(s_dir / "report.err").find("relab report: 12 lab(s) from 6 file(s): 11 held, 0 broken, 1 skipped"),
              std::string::npos)
        << slurp(s_dir / "report.err");
}

TEST_F(ReportSimIdemTest, summary_md_names_a_failing_seed_whose_replay_command_replays_a_wrong_trial) {
    const std::string md = slurp(out() / "summary.md");
    // The lab as the run wrote it, read as plain JSON (not through relab's reader).
    const json raw = json::parse(slurp(out() / "08c-lock.sim.json")).at("labs").at(0);
    ASSERT_EQ(raw.at("backend"), "sim");
    ASSERT_EQ(raw.at("trials").size(), 300u);
    int wrong = 0;
    for (const auto& t : raw.at("trials")) wrong += t.at("wrong").get<bool>() ? 1 : 0;
    ASSERT_GT(wrong, 0) << "S4a goes wrong in about a quarter of the seeds";
    EXPECT_NE(md.find("| `08c-s4a` | sim | "), std::string::npos) << md;
    EXPECT_NE(md.find(fmt::format(" | {}/300 ({:.1f}%, 95% CI ", wrong, 100.0 * wrong / 300)), std::string::npos) << md;
    std::string first_wrong_seed;
    for (const auto& t : raw.at("trials"))
        if (t.at("wrong").get<bool>()) {
            first_wrong_seed = fmt::format("0x{:016x}", t.at("seed").get<uint64_t>());
            break;
        }

    const std::regex replay_re("`(relab run 08c-s4a --backend sim --replay (0x[0-9a-f]{16}))`");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(md, m, replay_re)) << md;
    EXPECT_EQ(m[2].str(), first_wrong_seed);
    // The command as printed, run: that one trial, and it is wrong.
    const std::string command = std::regex_replace(m[1].str(), std::regex("^relab"), RELAB_BINARY);
    EXPECT_EQ(shell(fmt::format("{} >{} 2>&1", command, (s_dir / "replay.out").string())), 0)
        << slurp(s_dir / "replay.out");
    const std::string replay = slurp(s_dir / "replay.out");
    EXPECT_NE(replay.find("→ wrong final state (not paid): 1/1"), std::string::npos) << replay;
    EXPECT_NE(replay.find("replay of trial seed " + m[2].str()), std::string::npos) << replay;
}

TEST_F(ReportSimIdemTest, summary_md_counts_the_idempotency_labs_and_puts_the_figures_beside_the_article) {
    const std::string md = slurp(out() / "summary.md");
    size_t workloads = 0;
    for (const char* name : {"idem-keys.json", "idem-middleware.json"}) {
        const json saved_run = json::parse(slurp(out() / name));  // kept alive for the loop below
        for (const auto& lab : saved_run.at("labs")) {
            ++workloads;
            // The counts of every trial as the run wrote them, summed here, not by relab's reporters.
            std::map<std::string, int> c;
            for (const auto& t : lab.at("trials"))
                for (const auto& [k, v] : t.at("idem").at("counts").items()) c[k] += v.get<int>();
            auto cell = [](int n) { return n > 0 ? fmt::format("**{}**", n) : std::to_string(n); };
            const std::string row = fmt::format(
                "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", lab.at("id").get<std::string>(),
                lab.at("trials").size(), c["orders"], cell(c["duplicates"]), c["created"], c["replays"],
                c["conflicts_409"], c["mismatches_422"], c["layer4_caught"], c["errors_5xx"], cell(c["leaks"]), c["sends"]);
            EXPECT_NE(md.find(row), std::string::npos) << row << md;
        }
    }
    EXPECT_EQ(workloads, 8u);
    // The article's lab results: hash in the key → a duplicate; no user in the key → a leak.
    EXPECT_NE(md.find("| `idem-key-hash-in-key` | 1 | 2 | **1** |"), std::string::npos) << md;
    EXPECT_NE(md.find("| `idem-key-no-user` | 1 | 1 | 0 | 1 | 1 | 0 | 0 | 0 | 0 | **1** |"), std::string::npos) << md;
    // MEMORY USAGE here beside the article's 192 bytes, and its projection.
    EXPECT_TRUE(std::regex_search(md, std::regex("\\| `idem-memory` \\| MEMORY USAGE idem:v1:7:8f3a1c92-4d5e-4f1a-9b2c-"
                                                 "3d4e5f6a7b8c \\| \\(integer\\) [0-9]+ \\| 192 \\(Redis 8\\.8\\) \\| ")))
        << md;
    EXPECT_NE(md.find("× 10,000 (10,000 orders/day, each key kept 24 h) | "), std::string::npos) << md;
}

TEST_F(ReportSimIdemTest, junit_xml_has_the_skip_and_counts_that_match) {
    const std::string xmllint = find_program({"xmllint"});
    ASSERT_FALSE(xmllint.empty()) << "xmllint is missing: apt-get install libxml2-utils (./run_labs.sh test does)";
    EXPECT_EQ(shell(fmt::format("{} --noout {} 2>&1", xmllint, (out() / "junit.xml").string())), 0);
    const auto root = relab::test::parse_xml(slurp(out() / "junit.xml"));
    const auto& suite = *root.all("testsuite").at(0);
    EXPECT_EQ(suite.attr("tests"), "12");
    EXPECT_EQ(suite.attr("failures"), "0");
    EXPECT_EQ(suite.attr("skipped"), "1");
    size_t skips = 0;
    for (const auto* c : suite.all("testcase"))
        for (const auto* skip : c->all("skipped")) {
            ++skips;
            EXPECT_EQ(c->attr("name"), "08d-cas-by-hand");
            EXPECT_EQ(c->attr("classname"), "sim.08d-cas");
            EXPECT_NE(skip->attr("message").find("scripted sessions run on the real backend only"), std::string::npos);
        }
    EXPECT_EQ(skips, 1u);
}

TEST_F(ReportSimIdemTest, headless_chromium_draws_a_lane_per_client_and_the_duplicate_in_red) {
    const std::string chromium = find_program({"chromium", "chromium-browser", "google-chrome"});
    ASSERT_FALSE(chromium.empty()) << "Chromium is missing: apt-get install chromium (./run_labs.sh test does)";
    const std::string flags = fmt::format("--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir={}",
                                          (s_dir / "chromium").string());
    const std::string browser = fmt::format("HOME={0} XDG_CONFIG_HOME={0}/config XDG_CACHE_HOME={0}/cache {1}",
                                            (s_dir / "chromium-home").string(), chromium);
    const std::string url = "file://" + (out() / "index.html").string();
    ASSERT_EQ(shell(fmt::format("{} {} --dump-dom {} >{} 2>{}", browser, flags, url, (s_dir / "dom.html").string(),
                                (s_dir / "chromium.err").string())),
              0)
        << slurp(s_dir / "chromium.err");
    const std::string dom = slurp(s_dir / "dom.html");

    // One lane per client (and the runner's) in every drawn trial of every idempotency workload.
    size_t lanes = 0, figures = 0, redis_cases = 0;
    for (const char* name : {"idem-keys.json", "idem-middleware.json", "idem-memory.json", "idem-race.json"})
        for (const auto& lab : saved(name).labs) {
            for (const auto& t : lab.trials) {  // three trials or fewer each: all drawn
                lanes += relab::idem_trial_timeline(t).lanes.size();
                ++figures;
            }
            redis_cases += lab.cases.size();
        }
    EXPECT_EQ(figures, 10u);  // key design 5 × 1, double click 3, mismatch 1, release 1
    // + S4a's trial 1 and its first wrong trial, when that is another.
    const bool first_wrong = saved("08c-lock.sim.json").labs.at(0).trials.at(0).wrong;
    EXPECT_EQ(count(dom, "<figure class=\"timeline\" data-trial="), figures + (first_wrong ? 1 : 2));
    EXPECT_EQ(count(dom, "<table class=\"steps\">"), redis_cases);
    EXPECT_EQ(count(dom, "<table class=\"counts\">"), 8u);
    // 08c-s4a beside the article's pooled runs: the S4a comparison, apart from the count tables.
    EXPECT_EQ(count(dom, "<table class=\"counts comparison\">"), 1u);
    EXPECT_GE(count(dom, "<rect class=\"bar request"), 2 * figures);
    EXPECT_EQ(count(dom, "<rect class=\"bar request duplicate\""), 1u);  // the hash in the key
    EXPECT_EQ(count(dom, "<rect class=\"bar request leak\""), 1u);       // no user in the key
    EXPECT_NE(dom.find("<svg class=\"ci\""), std::string::npos);
    size_t drawn_lanes = 0;
    for (size_t at = dom.find("<section class=\"lab"); at != std::string::npos; at = dom.find("<section class=\"lab", at + 1)) {
        const std::string sec = dom.substr(at, dom.find("</section>", at) - at);
        if (sec.find("id=\"lab-idem-") != std::string::npos) drawn_lanes += count(sec, "<g class=\"lane\" data-lane=");
    }
    // The Redis sessions draw a lane per session too.
    size_t session_lanes = 0;
    for (const char* name : {"idem-memory.json", "idem-race.json"})
        for (const auto& lab : saved(name).labs)
            for (const auto& c : lab.cases) session_lanes += relab::case_timeline(c).lanes.size();
    EXPECT_EQ(drawn_lanes, lanes + session_lanes);

    // The pixels of the key-design labs alone: the duplicate request is a wide red bar.
    fs::create_directories(s_dir / "keys");
    fs::copy_file(out() / "idem-keys.json", s_dir / "keys" / "idem-keys.json");
    ASSERT_EQ(shell(fmt::format("{} report {} >/dev/null 2>&1", RELAB_BINARY, (s_dir / "keys").string())), 0);
    const fs::path shot = s_dir / "keys.png";
    ASSERT_EQ(shell(fmt::format("{} {} --window-size=1200,4000 --screenshot={} file://{} >>{} 2>&1", browser, flags,
                                shot.string(), (s_dir / "keys" / "index.html").string(), (s_dir / "chromium.err").string())),
              0)
        << slurp(s_dir / "chromium.err");
    const relab::test::PngImage img = relab::test::decode_png(shot.string());
    size_t red = 0;
    for (uint32_t y = 0; y < img.height; ++y) {
        size_t run = 0;
        for (uint32_t x = 0; x < img.width; ++x) {
            const auto p = img.at(x, y);
            run = p.r > 190 && p.g < 70 && p.b < 70 ? run + 1 : 0;
            red = std::max(red, run);
        }
    }
    EXPECT_GT(red, 60u) << "no red duplicate bar in " << shot;
    if (const char* keep = std::getenv("RELAB_REPORT_SCREENSHOT")) fs::copy_file(shot, keep, fs::copy_options::overwrite_existing);
}

// A deliberately broken expectation, end to end on real servers: a copy of the shipped baseline
// that expects no wrong trial (its two consumers overwrite paid every time) breaks, and the broken
// lab reaches junit.xml as a <failure> and summary.md as broken, and fails `relab report`. Its JSON
// goes to the test's own folder only, never to RELAB_REPORTS_DIR (CI would show it as a failure).
TEST(ReportBrokenLabTest, a_broken_expectation_reaches_junit_and_summary_and_fails_relab_report) {
    const fs::path dir = fs::temp_directory_path() / fmt::format("relab-report-broken-test-{}", getpid());
    fs::remove_all(dir);
    // Removed however the test ends: a failed ASSERT returns early.
    const struct RemoveAll {
        fs::path p;
        ~RemoveAll() {
            std::error_code ec;
            fs::remove_all(p, ec);
        }
    } remove_dir{dir};
    fs::create_directories(dir / "out");
    fs::create_directories(dir / "tmp");
    json s = json::parse(slurp(fs::path(RELAB_SOURCE_DIR) / "scenarios" / "08a-baseline.json"), nullptr, true, true);
    s["id"] = "08a-expect-none";
    s["output"] = "08a-expect-none";
    s["expect"] = {{"wrong", "none"}};
    const fs::path copy = dir / "08a-expect-none.json";
    std::ofstream(copy) << s.dump(2);

    const int run = shell(fmt::format("TMPDIR={} {} run {} --runs 2 --quiet --json {} >{} 2>{}", (dir / "tmp").string(),
                                      RELAB_BINARY, copy.string(), (dir / "out" / "x.json").string(),
                                      (dir / "run.out").string(), (dir / "run.err").string()));
    const std::string run_err = slurp(dir / "run.err");
    EXPECT_EQ(run, 1) << run_err;
    EXPECT_NE(run_err.find("relab: 1 lab(s), 0 held, 1 broken, 0 skipped\n"), std::string::npos) << run_err;
    EXPECT_NE(run_err.find("  BROKEN 08a-expect-none: "), std::string::npos) << run_err;
    ASSERT_TRUE(fs::is_regular_file(dir / "out" / "x.json")) << run_err;

    const int report = shell(fmt::format("{} report {} >{} 2>{}", RELAB_BINARY, (dir / "out").string(),
                                         (dir / "report.out").string(), (dir / "report.err").string()));
    const std::string report_err = slurp(dir / "report.err");
    EXPECT_EQ(report, 1) << report_err;
    EXPECT_NE(report_err.find("relab report: 1 lab(s) from 1 file(s): 0 held, 1 broken, 0 skipped"), std::string::npos)
        << report_err;
    EXPECT_EQ(report_err.find("the file says"), std::string::npos) << report_err;  // stored and recomputed agree

    const auto root = relab::test::parse_xml(slurp(dir / "out" / "junit.xml"));
    const auto& suite = *root.all("testsuite").at(0);
    EXPECT_EQ(suite.attr("tests"), "1");
    EXPECT_EQ(suite.attr("failures"), "1");
    const auto cases = suite.all("testcase");
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0]->attr("name"), "08a-expect-none");
    EXPECT_EQ(cases[0]->attr("classname"), "08a-expect-none");
    const auto failures = cases[0]->all("failure");
    ASSERT_EQ(failures.size(), 1u);
    EXPECT_EQ(failures[0]->attr("message").rfind("expectation wrong = none broke", 0), 0u) << failures[0]->attr("message");
    // It carries the lab's text: its title and both trials ending created (the stale overwrite).
    EXPECT_EQ(failures[0]->text.rfind("### BUG: 1 stream, 1 group, 2 parallel consumers (2 processes); created 800 ms, "
                                      "paid 50 ms; plain UPDATE   (08a-expect-none.txt)\n",
                                      0),
              0u)
        << failures[0]->text;
    EXPECT_NE(failures[0]->text.find("final status per trial: created✕ created✕\n"), std::string::npos)
        << failures[0]->text;

    const std::string md = slurp(dir / "out" / "summary.md");
    EXPECT_EQ(md.rfind("## relab: 1 lab — 0 held, 1 broken, 0 skipped\n", 0), 0u) << md;
    const size_t row = md.find("| `08a-expect-none` | real | ");
    ASSERT_NE(row, std::string::npos) << md;
    EXPECT_NE(md.substr(row, md.find('\n', row) - row).find(" | 2/2 | wrong = none | ❌ **BROKEN** |"), std::string::npos)
        << md;
    EXPECT_NE(md.find("\n### Broken expectations\n\n- `08a-expect-none`: "), std::string::npos) << md;

    // Nothing of this deliberately broken lab went to the CI report.
    if (const char* reports = std::getenv("RELAB_REPORTS_DIR"); reports && *reports && fs::is_directory(reports)) {
        for (const auto& f : fs::directory_iterator(reports)) {
            EXPECT_EQ(slurp(f.path()).find("08a-expect-none"), std::string::npos) << f.path();
        }
    }
}

}  // namespace report_test
