// A role given as the user's own program (an "exec" role): a consumer, the producer, a dispatcher
// or the idempotency clients run as any program instead of relab's built-in role. relab starts it
// as it starts its own roles, passes the lab's settings in its environment (docs/your-code.md) and
// learns what it did from the servers (a trigger on the lab's table, the stream's PEL), and from an
// optional JSON-lines trace the program writes to a file descriptor relab passes.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "describe/describe.h"

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

namespace desc {

template <>
struct Described<ExecSpec> {
    static constexpr std::string_view doc = "A role given as your own program (docs/your-code.md).";
    static constexpr auto fields = std::tuple{
        field("exec", &ExecSpec::argv,
              "The role as your own program instead of relab's (docs/your-code.md): the program and its arguments, the "
              "first looked up on PATH.")
            .must()
            .at_least_items(1),
        field("env", &ExecSpec::env, "Variables added to the program's environment (not RELAB_*, which are relab's).")
            .may_be_empty(),
        field("trace", &ExecSpec::trace,
              "relab passes a descriptor for the program's JSON-lines trace (RELAB_TRACE_FD); false: observed from the "
              "servers only."),
        field("dir", &ExecSpec::dir,
              "Where the program runs, relative to the scenario file; default: the folder holding the top scenarios "
              "folder."),
        field("check", &ExecSpec::check,
              "Run once before the lab: exit 0 means the program can run here; else the lab is skipped.")
            .at_least_items(1),
        field("install", &ExecSpec::install,
              "What to install when the program or its check is missing: the skip reason names it."),
    };
    static void check(const Object& o, ExecSpec& e);
};

}  // namespace desc

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
    static const std::vector<std::string> names = desc::keys<ExecSpec>();
    return names;
}

}  // namespace relab
