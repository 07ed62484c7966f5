#include "backend_real/role_processes.h"

#include <signal.h>

#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "backend_real/program_roles.h"
#include "engine/timeouts.h"
#include "ports/seeded_rng.h"
#include "process/program_role.h"
#include "process/proc_stat.h"
#include "servers/lab_redis.h"

namespace relab {

namespace {

using RoleClock = std::chrono::steady_clock;

}  // namespace

RoleProcesses::RoleProcesses(const RealControl::Env& env, RoleLinkProxies& links, LabConnections& connections)
    : m_env(env), m_links(links), m_connections(connections) {
    std::set<std::string> programs;
    for (const auto& r : trial_roles(env.s))
        if (env.s.exec.of(r.role)) programs.insert(r.actor);
    if (!programs.empty()) m_observer = std::make_unique<ProgramObserver>(env.s, env.prefix, programs);
}

void RoleProcesses::add(const RoleLaunch& launch, RoleConfig config) {
    m_roles.push_back(Role{launch, std::move(config)});
    // A program producer waits for the start barrier (program_barrier).
    if (launch.role == "producer" && m_env.s.exec.of("producer")) return;
    spawn(m_roles.back());
}

void RoleProcesses::started(std::vector<HistoryRecord>& records) {
    for (auto& r : m_roles)
        if (r.process) r.process->started();
    program_barrier(records);
}

void RoleProcesses::open_ahead() {
    if (m_asked_ahead) return;
    m_asked_ahead = true;
    // Roles forked ahead connect to the servers themselves, around the link proxies; nor on the
    // user's Sentinel, whose primary (the run's Redis) the lab shuts down.
    if (!m_env.spawner || m_env.own_pg || m_roles.empty() || !m_links.empty() || (m_env.own && m_env.own->user()))
        return;
    const std::string key = role_ahead_key(m_roles.front().config);
    int count = 0;
    for (const auto& r : m_roles) count += role_ahead_key(r.config) == key ? 1 : 0;
    m_env.spawner->open_ahead(key, count, &m_env.run_redis);
}

void RoleProcesses::draining() {
    if (!m_draining_since) m_draining_since = RoleClock::now();
    if (RoleClock::now() - *m_draining_since >= k_ahead_after) open_ahead();
}

RoleProcesses::Role& RoleProcesses::role(const std::string& actor) {
    for (auto& r : m_roles)
        if (r.launch.actor == actor) return r;
    throw std::logic_error("no role " + actor + " in this trial");
}

std::vector<std::string> RoleProcesses::actors() const {
    std::vector<std::string> out;
    for (const auto& r : m_roles) out.push_back(r.launch.actor);
    return out;
}

void RoleProcesses::spawn(Role& r) {
    // Derived at every spawn, so a restart's new seed reaches the process; the proxies are the actor's own.
    const RoleConfig launched = m_links.through(r.config);
    // Each incarnation its own stderr file, so a restart keeps the first one's last words.
    r.stderr_path = r.incarnation == 1 ? fmt::format("{}/{}.err", m_env.dir, r.launch.actor)
                                       : fmt::format("{}/{}.{}.err", m_env.dir, r.launch.actor, r.incarnation);
    if (const ExecSpec* e = program_of(r)) {
        const std::string trace = fmt::format("{}/{}.trace", m_env.dir, r.launch.actor);
        if (r.launch.role == "consumer" && has_stream(m_env.s.kind))
            m_observer->install_write_log(r.config.pg, r.config.schema);
        if (e->trace) m_observer->watch_trace(r.launch.actor, trace);
        r.process = start_program_role(m_env.s, launched, *e, m_env.dir, r.stderr_path, trace);
        return;
    }
    r.process = spawn_role_process(m_env.spawner, m_env.relab_exe, launched, m_env.dir, r.stderr_path);
}

std::string RoleProcesses::why_not_reading(const std::string& actor) {
    Role& r = role(actor);
    if (r.process->running()) return "running, but not blocked in XREADGROUP on a connection of that name";
    return fmt::format("exited with status {}: {}", r.process->exit_code().value_or(-1), tail_of_file(r.stderr_path, 500));
}

void RoleProcesses::program_barrier(std::vector<HistoryRecord>& records) {
    if (!m_observer || !has_stream(m_env.s.kind)) return;
    const bool program_producer = m_env.s.exec.of("producer") != nullptr;
    if (!m_env.s.exec.of("consumer") && !program_producer) return;
    // relab's own producer waits for the readers itself and publishes at once: once it did, the
    // consumers are busy with jobs and no longer all blocked, and the barrier is behind us.
    const std::string stream = m_env.prefix + m_env.s.flow().stream.key;
    const auto published = [&] {
        // A program that exited before it read: said now, not at the barrier's timeout.
        for (auto& r : m_roles)
            if (r.process && program_of(r) && !r.process->running())
                throw std::runtime_error(fmt::format(
                    "{} of {} (the program `{}`) exited with status {} before it read the group{}", r.launch.actor,
                    m_env.s.id, program_text(program_of(r)->argv), r.process->exit_code().value_or(-1),
                    tail_of_file(r.stderr_path, 500).empty() ? "" : ": " + tail_of_file(r.stderr_path, 500)));
        return !program_producer && m_connections.admin().call({"XLEN", stream}).integer > 0;
    };
    wait_for_readers(m_connections.admin(), m_env.s, m_env.prefix,
                     [this](const std::string& a) { return why_not_reading(a); }, published);
    if (!program_producer) return;
    for (auto& r : m_roles) {
        if (r.process) continue;
        records.push_back(HistoryRecord{0, RoleClock::now().time_since_epoch().count(), "relab", Op::start});
        spawn(r);
        r.process->started();
    }
}

void RoleProcesses::wait_for_state(Role& r, char state, const char* signal) {
    const auto deadline = RoleClock::now() + timeouts::kSignalTakesEffect;
    for (;;) {
        const auto s = proc_stat(r.process->pid());
        if (s && s->state == state) return;
        if (RoleClock::now() > deadline)
            throw std::runtime_error(fmt::format("{} (pid {}) not stopped {} ms after {}", r.launch.actor,
                                                 r.process->pid(), timeouts::kSignalTakesEffect.count(), signal));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

bool RoleProcesses::finished(const std::string& actor) {
    Role& r = role(actor);
    return r.killed || !r.process->running();
}

void RoleProcesses::kill(const std::string& actor) {
    Role& r = role(actor);
    r.process->signal(SIGKILL);
    if (!r.process->wait_for(timeouts::kSignalTakesEffect))
        throw std::runtime_error(fmt::format("{} (pid {}) did not die within {} ms of SIGKILL", actor, r.process->pid(),
                                             timeouts::kSignalTakesEffect.count()));
    r.killed = true;
    r.paused = false;
}

void RoleProcesses::stop_or_continue(const std::string& actor, bool stop) {
    Role& r = role(actor);
    r.process->signal(stop ? SIGSTOP : SIGCONT);
    r.paused = stop;
    if (stop) wait_for_state(r, 'T', "SIGSTOP");
}

bool RoleProcesses::paused(const std::string& actor) { return role(actor).paused; }

void RoleProcesses::restart(const std::string& actor) {
    Role& r = role(actor);
    if (!finished(actor)) throw std::logic_error(actor + " is still running");
    ++r.incarnation;
    // A new process draws its own randomness, as the simulator's restarted fiber does.
    r.config.seed = derive_seed(r.config.seed, fmt::format("restart:{}:{}", actor, r.incarnation));
    r.killed = false;
    spawn(r);
    r.process->started();
}

void RoleProcesses::check(bool stop_raised) {
    for (auto& r : m_roles) {
        if (r.killed || r.process->running()) continue;
        const auto code = r.process->exit_code();
        if (!code || *code == 0) continue;
        // Not a fault the lab scheduled: the trial has no outcome, and the run none for this lab.
        const std::string how = *code > 128 && *code < 160
                                    ? fmt::format("was killed by signal {} ({}) from outside relab", *code - 128,
                                                  ::strsignal(*code - 128))
                                    : fmt::format("exited with status {}", *code);
        const std::string tail = tail_of_file(r.stderr_path);
        const ExecSpec* e = program_of(r);
        // The runner names the lab and trial and makes it a HarnessError.
        throw std::runtime_error(fmt::format("role {}{} {}, which no fault of the lab did{}{}", r.launch.actor,
                                             e ? " (the program `" + program_text(e->argv) + "`)" : "", how,
                                             tail.empty() ? "" : ": ", tail));
    }
    for (auto& r : m_roles) {
        const ExecSpec* e = program_of(r);
        if (!e || r.killed || stop_raised || r.launch.role != "consumer" || r.process->running()) continue;
        throw std::runtime_error(fmt::format(
            "consumer {} (the program `{}`) exited with status 0 before the trial's end: a consumer reads until "
            "$RELAB_STOP_KEY is set and its read comes back empty (docs/your-code.md){}",
            r.launch.actor, program_text(e->argv), tail_of_file(r.stderr_path, 500).empty() ? "" : ": " + tail_of_file(r.stderr_path, 500)));
    }
}

void RoleProcesses::wake_for_trial_end() {
    for (auto& r : m_roles)
        if (!r.killed && !r.paused && r.process->running()) r.process->wake_for_trial_end();
}

void RoleProcesses::program_outputs(std::vector<HistoryRecord>& out, int64_t at_ns) const {
    for (const auto& r : m_roles)
        if (program_of(r))
            for (auto& o : program_output_records(r.launch.actor, m_env.dir + "/" + r.launch.actor + ".out",
                                                  r.stderr_path, at_ns))
                out.push_back(std::move(o));
}

}  // namespace relab
