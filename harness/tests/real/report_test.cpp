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
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../unit/xml_tree.h"
#include "png_image.h"
#include "report/lab_summary.h"
#include "report/reporter.h"
#include "report/timeline.h"

namespace {

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

    const relab::RunReport run = saved_run();
    const auto root = relab::test::parse_xml(slurp(out() / "junit.xml"));
    const auto suites = root.all("testsuite");
    ASSERT_EQ(suites.size(), 1u);
    EXPECT_EQ(suites[0]->attr("tests"), std::to_string(run.labs.size()));
    EXPECT_EQ(suites[0]->attr("failures"), "0");
    EXPECT_EQ(suites[0]->attr("skipped"), "0");
    const auto cases = suites[0]->all("testcase");
    ASSERT_EQ(cases.size(), run.labs.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        EXPECT_EQ(cases[i]->attr("name"), run.labs[i].scenario.id);
        EXPECT_EQ(cases[i]->attr("classname"), run.labs[i].scenario.output);
        EXPECT_TRUE(cases[i]->all("failure").empty());
    }
}

TEST_F(ReportTest, summary_md_lists_every_lab_with_documented_beside_measured) {
    const std::string md = slurp(out() / "summary.md");
    const relab::RunReport run = saved_run();
    ASSERT_EQ(run.labs.size(), 3u);
    for (const auto& lab : run.labs) {
        const size_t row = md.find("| `" + lab.scenario.id + "` |");
        ASSERT_NE(row, std::string::npos) << lab.scenario.id << "\n" << md;
        const std::string line = md.substr(row, md.find('\n', row) - row);
        EXPECT_NE(line.find(" | " + relab::measured_text(lab) + " | "), std::string::npos) << line;
        if (lab.scenario.documented.wrong) {
            EXPECT_NE(line.find(fmt::format(" | {}/{}", *lab.scenario.documented.wrong, *lab.scenario.documented.of)),
                      std::string::npos)
                << line;
        }
        EXPECT_NE(line.find("✅ held"), std::string::npos) << line;
    }
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
            lanes += relab::trial_timeline(t, lab.scenario.orders.size() > 1).lanes.size();
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

}  // namespace
