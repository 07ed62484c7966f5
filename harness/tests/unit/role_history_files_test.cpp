// The roles' history files as RealControl reads them while a trial runs and at its end
// (backend_real/role_history_files.h), on files written by hand; no server needed.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_real/role_history_files.h"
#include "process/temp_dir.h"

namespace relab {
namespace role_history_files_test {

std::string line(int64_t t_ns, const std::string& actor) {
    return to_json(HistoryRecord{1, t_ns, actor, Op::start}).dump() + "\n";
}

void append(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << text;
}

std::vector<int64_t> times(const std::vector<HistoryRecord>& records) {
    std::vector<int64_t> out;
    for (const auto& r : records) out.push_back(r.t_ns);
    return out;
}

TEST(RoleHistoryFiles, PollReadsCompleteLinesOnceAndWaitsForAPartialOne) {
    TempDir dir("relab-history-files-");
    const std::string c1 = dir.path() + "/C1.jsonl", c2 = dir.path() + "/C2.jsonl";
    RoleHistoryFiles files;
    files.add(c1);
    files.add(c2);  // not written yet
    std::vector<HistoryRecord> out;
    files.poll(out);
    EXPECT_TRUE(out.empty());

    const std::string second = line(2, "C1");
    append(c1, line(1, "C1") + second.substr(0, 10));
    files.poll(out);
    EXPECT_EQ(times(out), std::vector<int64_t>{1});

    append(c1, second.substr(10) + "not json\n");
    append(c2, line(3, "C2"));
    out.clear();
    files.poll(out);
    EXPECT_EQ(times(out), (std::vector<int64_t>{2, 3}));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].actor, "C2");

    out.clear();
    files.poll(out);
    EXPECT_TRUE(out.empty());  // nothing new
}

TEST(RoleHistoryFiles, BytesCountsEveryFileAndReadAllAppendsEveryRecord) {
    TempDir dir("relab-history-files-");
    const std::string c1 = dir.path() + "/C1.jsonl", c2 = dir.path() + "/C2.jsonl";
    RoleHistoryFiles files;
    EXPECT_EQ(files.bytes(), 0);
    files.add(c1);
    files.add(c2);
    EXPECT_EQ(files.bytes(), 0);  // neither exists yet
    append(c1, line(1, "C1") + line(2, "C1"));
    append(c2, line(3, "C2"));
    const int64_t size = static_cast<int64_t>(line(1, "C1").size() * 2 + line(3, "C2").size());
    EXPECT_EQ(files.bytes(), size);

    std::vector<HistoryRecord> out{HistoryRecord{1, 0, "relab", Op::start}};
    files.read_all(out);
    EXPECT_EQ(times(out), (std::vector<int64_t>{0, 1, 2, 3}));
    std::vector<HistoryRecord> only;
    files.read_all(only);
    EXPECT_EQ(times(only), (std::vector<int64_t>{1, 2, 3}));
}

}  // namespace role_history_files_test
}  // namespace relab
