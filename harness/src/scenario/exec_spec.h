// A role given as the user's own program (an "exec" role): a consumer, the producer, a dispatcher
// or the idempotency clients run as any program instead of relab's built-in role. relab starts it
// as it starts its own roles, passes the lab's settings in its environment (docs/your-code.md) and
// learns what it did from the servers (a trigger on the lab's table, the stream's PEL), and from an
// optional JSON-lines trace the program writes to a file descriptor relab passes.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace relab {

struct ExecSpec {
    // The program and its arguments, e.g. {"php", "examples/php/consumer.php"}: the first is looked
    // up on PATH; relative paths are the program's business, run in `dir`.
    std::vector<std::string> argv;
    // Added to the environment relab gives it (the example's switches: "WRITE", "CHECK", ...).
    std::map<std::string, std::string> env;
    // relab passes a trace descriptor (RELAB_TRACE_FD); false: the program is observed from the
    // servers only, as it would be without any help of its own.
    bool trace = true;
    // Where the program runs, relative to the scenario file; empty: the folder that holds the
    // scenario's top "scenarios" folder (the repository's root for the shipped examples).
    std::string dir;
    // Run once before the lab: exit 0 means the program can run here (its interpreter has the
    // modules it needs). Empty: only argv[0] is looked for.
    std::vector<std::string> check;
    // What to install when argv[0] or the check is missing: the skip reason names it.
    std::string install;
    bool operator==(const ExecSpec&) const = default;
};

// The programs of a lab, by the role they replace ("consumer", "producer", "dispatcher",
// "idem_client"); a role not listed is relab's own.
struct ExecRoles {
    std::map<std::string, ExecSpec> by_role;
    bool any() const { return !by_role.empty(); }
    const ExecSpec* of(const std::string& role) const {
        const auto it = by_role.find(role);
        return it == by_role.end() ? nullptr : &it->second;
    }
    bool operator==(const ExecRoles&) const = default;
};

// The JSON fields every role object may carry to be a program, as the loader reads them.
inline const std::vector<std::string>& exec_field_names() {
    static const std::vector<std::string> names = {"exec", "env", "trace", "dir", "check", "install"};
    return names;
}

}  // namespace relab
