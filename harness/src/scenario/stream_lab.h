// A stream lab's own data ("kind": "workload" without "idem"): its stream, workload, consumers and
// publishers, each section described in stream_spec.h, publish_spec.h and workload_spec.h. A
// Scenario of kind stream holds one (Scenario::flow()); no other kind has any of it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fault/fault_spec.h"
#include "scenario/publish_spec.h"
#include "scenario/stream_spec.h"
#include "scenario/workload_spec.h"

namespace relab {

// Another arrangement of the lab's workload (the lab's file with `patch` applied), run just before
// the lab on the same backend and servers: the throughput its "throughput_ratio" is measured against.
struct BesideSpec {
    std::string name;    // "s1"
    std::string change;  // what the patch turns, in words: "the same workload in one stream"
    nlohmann::json patch = nlohmann::json::array();
};

struct StreamLab {
    StreamSpec stream;
    std::vector<OrderSpec> orders;
    std::vector<EventSpec> events;
    std::map<std::string, int64_t> job_cost_ms;  // per event type; a type not listed costs 0
    int consumers = 2;
    WriteSpec write;
    LockSpec lock;
    BufferSpec buffer;             // P3: the consumer's reorder buffer
    FanoutSpec fanout;             // S3: each consumer is a reader and its workers
    ProducerSpec producer;
    DispatcherSpec dispatcher;
    ShardSpec shard;               // S2: a router over N streams, a consumer per shard
    std::optional<GenerateSpec> generate;  // the workload as the file generates it (orders and events hold it expanded)
    LoadSpec load;                 // a generated workload's arrival and job costs (the load labs)
    SoakSpec soak;                 // a soak lab: its deadline, its group read at the end
    // How the text report prints a trial's stream: "list" (id type (v=1), ...) or "xrange"
    // (XRANGE orders - + : id type(v=1)  ...), as the article's producer-side labs print it.
    std::string stream_line = "list";
    // The report prints the lab's throughput (jobs written per second of the trial): S3 beside S1.
    // On by default in a lab with fanout.
    bool show_throughput = false;
    RecoverySpec recovery;         // how consumers get back entries left pending
    std::optional<BesideSpec> beside;  // the arrangement to compare its throughput with
};

// Every stream a lab reads: its one stream, or each shard's.
std::vector<std::string> lab_stream_keys(const StreamSpec& stream, const ShardSpec& shard);

// The rows tmp_orders holds before a trial: every order but the absent ones.
std::vector<OrderRow> initial_order_rows(const StreamLab& f);
// Whether the lab's events carry amounts (P4's labs): its reports then show each row's amount.
bool carries_amounts(const StreamLab& f);

// When the lab's last event is due, in ms from the trial's origin (0 without events).
int64_t last_event_ms(const StreamLab& f);
// A soak lab's deadline, in ms from the trial's origin: its last event's time + drain_ms.
int64_t soak_deadline_ms(const StreamLab& f);

}  // namespace relab
