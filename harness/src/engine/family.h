// A lab family as one row of hooks: how its trials run, how long they may take, why a backend
// cannot run it, how its data is prepared and read back, and what the lab adds after its trials.
// Each backend has one trial loop (engine/trial_loop.h) and reads everything family-specific from
// here; families/families.cpp holds the rows. A new family is a new row, not a new loop.
//
// The report layer renders a saved JSON report without the engine, so a family's report section is
// the report layer's row for the same LabKind (each reporter's family_sections.cpp), not a hook here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/outcome.h"
#include "engine/trial_store.h"
#include "ports/control.h"
#include "roles/roles.h"
#include "scenario/scenario.h"

namespace relab {

class ProbeLab;  // families/probe.h: a lab whose trial the real backend runs whole
struct ProbeEnv;

struct LabFamily {
    LabKind kind;
    const char* name;
    // The trials a lab plans to run: its `runs`, or --runs/--trials; a session lab's cases.
    int (*planned_trials)(const Scenario& s, std::optional<int> override_runs);
    // The longest a trial may run, from its supervisor's start (virtual or real time).
    Nanos (*budget)(const Scenario& s);
    // Why the simulator, or real servers of this version, cannot run the lab; nullopt: they can.
    std::optional<std::string> (*sim_skip_reason)(const Scenario& s);
    std::optional<std::string> (*real_skip_reason)(const Scenario& s, const std::string& redis_version);

    // Role families: a trial is the lab's roles under a supervisor on the Control port.
    std::vector<RoleLaunch> (*roles)(const Scenario& s) = nullptr;
    void (*prepare)(const Scenario& s, TrialStore& store) = nullptr;
    // Runs the trial to its end; returns the origin history times count from, or nullopt for the
    // last `start` record's time.
    std::optional<Nanos> (*supervise)(const Scenario& s, const std::vector<RoleLaunch>& roles, Control& c) = nullptr;
    // The trial's outcome from its history (times from the origin) and its final state.
    TrialOutcome (*finish)(const Scenario& s, int trial, uint64_t seed, std::vector<HistoryRecord> history,
                           TrialStore& store) = nullptr;

    // Probe families: the real backend opens the lab once and runs each trial through it.
    std::unique_ptr<ProbeLab> (*open_probe)(const Scenario& s, ProbeEnv& env) = nullptr;

    // After the last trial: figures of the whole lab (the idempotency labs' measurements). May be null.
    void (*after_trials)(LabResult& lab) = nullptr;

    bool has_roles() const { return roles != nullptr; }
};

// The row of `kind` (families/families.cpp).
const LabFamily& family_of(LabKind kind);
// Every row, in LabKind order.
const std::vector<LabFamily>& lab_families();

}  // namespace relab
