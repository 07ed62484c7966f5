// docker-compose.yml is validated by docker-compose itself (`config` needs no Docker engine): the
// articles' server versions, published on loopback only.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace docker_compose_test {

namespace fs = std::filesystem;

struct Result {
    int exit_code = -1;
    std::string out;
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

class DockerComposeTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(std::system("command -v docker-compose >/dev/null 2>&1"), 0)
            << "docker-compose is missing: apt-get install docker-compose (./run_labs.sh test does)";
        m_dir = fs::temp_directory_path() / fmt::format("relab-compose-test-{}", getpid());
        fs::create_directories(m_dir);
    }
    void TearDown() override { fs::remove_all(m_dir); }

    // `docker-compose config` on a file; DOCKER_HOST points nowhere, to prove no engine is needed.
    Result config(const fs::path& file) {
        const auto out = m_dir / "config.out";
        const int status = std::system(fmt::format("cd {} && DOCKER_HOST=unix:///nonexistent docker-compose -f {} config "
                                                   ">{} 2>&1",
                                                   m_dir.string(), file.string(), out.string())
                                           .c_str());
        return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out)};
    }

    fs::path m_dir;
};

const fs::path k_compose = fs::path(RELAB_SOURCE_DIR) / "docker-compose.yml";

TEST_F(DockerComposeTest, the_file_is_valid_and_pins_redis_8_and_postgres_18_on_loopback) {
    const Result r = config(k_compose);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(image: redis:8(\.[0-9]+)*\n)"))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(image: postgres:18(\.[0-9]+)*\n)"))) << r.out;
    // Every published port is bound to 127.0.0.1, and there are two of them.
    const std::regex port(R"(\n\s*- (\S+:)?[0-9]+:[0-9]+(/tcp)?\n)");
    size_t published = 0;
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), port); it != std::sregex_iterator(); ++it) {
        ++published;
        EXPECT_EQ((*it)[1].str(), "127.0.0.1:") << (*it)[0];
    }
    EXPECT_EQ(published, 2u) << r.out;
    // The README's URLs match the published ports.
    const std::string readme = slurp(fs::path(RELAB_SOURCE_DIR) / "README.md");
    EXPECT_NE(r.out.find("127.0.0.1:16379:6379"), std::string::npos);
    EXPECT_NE(r.out.find("127.0.0.1:15432:5432"), std::string::npos);
    EXPECT_NE(readme.find("--redis-url redis://127.0.0.1:16379"), std::string::npos);
    EXPECT_NE(readme.find("--pg-url postgresql://relab:relab@127.0.0.1:15432/relab"), std::string::npos);
}

TEST_F(DockerComposeTest, the_validation_rejects_a_broken_file) {
    std::string text = slurp(k_compose);
    ASSERT_FALSE(text.empty());
    const auto at = text.find("services:");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 9, "servicez:");  // an unknown top-level key
    std::ofstream(m_dir / "broken.yml") << text;
    const Result r = config(m_dir / "broken.yml");
    EXPECT_NE(r.exit_code, 0) << r.out;
}

}  // namespace docker_compose_test
