#include "process/program_role.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "process/child_process.h"

namespace relab {

namespace {

class ProgramRole : public RoleProcess {
public:
    explicit ProgramRole(const ChildOptions& o) : m_child(o) {}
    int pid() const override { return m_child.pid(); }
    bool running() override { return m_child.running(); }
    bool wait_for(std::chrono::milliseconds d) override { return m_child.wait_for(d); }
    std::optional<int> exit_code() const override { return m_child.exit_code(); }
    // The whole group: an interpreter's children (a shell wrapper, a worker it forks) share the
    // role's fate, as a container's processes share a `docker kill`.
    void signal(int sig) noexcept override {
        if (m_child.exit_code()) return;
        if (::kill(-m_child.pid(), sig) != 0) m_child.signal(sig);
    }

private:
    ChildProcess m_child;
};

}  // namespace

std::string program_text(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        const bool plain = !a.empty() && a.find_first_of(" \t\"'$\\") == std::string::npos;
        out += plain ? a : "'" + a + "'";
    }
    return out;
}

std::unique_ptr<RoleProcess> spawn_program_role(const ProgramStart& start) {
    if (start.argv.empty()) throw EnvironmentError("an exec role without a program");
    ChildOptions o;
    o.exe = start.argv[0];
    o.args.assign(start.argv.begin() + 1, start.argv.end());
    o.env = start.env;
    o.working_dir = start.dir;
    o.stdout_path = start.stdout_path;
    o.stderr_path = start.stderr_path;
    o.own_process_group = true;
    int trace = -1;
    if (!start.trace_path.empty()) {
        trace = ::open(start.trace_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (trace < 0)
            throw EnvironmentError("cannot open the trace file " + start.trace_path + ": " + std::strerror(errno));
        o.fd3 = trace;
    }
    struct CloseTrace {
        int fd;
        ~CloseTrace() {
            if (fd >= 0) ::close(fd);
        }
    } close_trace{trace};
    try {
        return std::make_unique<ProgramRole>(o);
    } catch (const EnvironmentError& e) {
        throw EnvironmentError(program_text(start.argv) + ": " + e.what());
    }
}

}  // namespace relab
