#include "backend_real/program_observer.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "clients/pg_client.h"
#include "roles/event.h"

namespace relab {

namespace {

using SteadyClock = std::chrono::steady_clock;

Nanos steady_now() { return std::chrono::duration_cast<Nanos>(SteadyClock::now().time_since_epoch()); }

// Wall-clock time (PostgreSQL's clock_timestamp(), a stream entry's ID) on relab's steady clock: the
// servers are on this machine, so one offset taken once serves the trial.
int64_t wall_minus_steady_ns() {
    const auto wall = std::chrono::system_clock::now().time_since_epoch();
    return std::chrono::duration_cast<Nanos>(wall).count() - steady_now().count();
}

// The trigger and its log. The function names the schema, so a program whose own search_path
// differs still logs where relab reads; a rolled-back write takes its log row with it.
std::vector<std::string> write_log_sql(const std::string& schema) {
    const std::string log = "\"" + schema + "\".relab_write_log";
    const std::string now = "(extract(epoch from clock_timestamp()) * 1000000)::bigint";
    return {
        "DROP TABLE IF EXISTS " + log,
        "CREATE TABLE " + log + " (seq bigserial PRIMARY KEY, at_us bigint NOT NULL, actor text NOT NULL, "
                                "order_id bigint, status text, version bigint, affected int NOT NULL, statement text)",
        "CREATE OR REPLACE FUNCTION relab_log_row() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN INSERT INTO " + log +
            " (at_us, actor, order_id, status, version, affected, statement) VALUES (" + now +
            ", current_setting('application_name'), NEW.id, NEW.status, NEW.version, 1, current_query()); RETURN NULL; "
            "END $f$",
        "CREATE OR REPLACE FUNCTION relab_log_statement() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN IF NOT EXISTS "
        "(SELECT 1 FROM relab_changed) THEN INSERT INTO " + log +
            " (at_us, actor, affected, statement) VALUES (" + now +
            ", current_setting('application_name'), 0, current_query()); END IF; RETURN NULL; END $f$",
        "DROP TRIGGER IF EXISTS relab_log_row ON tmp_orders",
        "DROP TRIGGER IF EXISTS relab_log_statement ON tmp_orders",
        "CREATE TRIGGER relab_log_row AFTER INSERT OR UPDATE ON tmp_orders FOR EACH ROW EXECUTE FUNCTION relab_log_row()",
        "CREATE TRIGGER relab_log_statement AFTER UPDATE ON tmp_orders REFERENCING NEW TABLE AS relab_changed FOR EACH "
        "STATEMENT EXECUTE FUNCTION relab_log_statement()",
    };
}

}  // namespace

// An entry of the PEL as the last look saw it.
struct Held {
    std::string owner;
    int64_t deliveries = 0;
};

struct TraceFile {
    std::string actor;
    std::string path;
    size_t offset = 0;
    int line = 0;
};

namespace {

// Every op's name, for a trace line's error.
std::string known_ops() {
    std::string out;
    for (const auto& o : k_ops) out += (out.empty() ? "" : " ") + std::string(o.name);
    return out;
}


// The lab's event an observed row write is of: the order's event of that status, the one of the
// written version when several share it.
std::optional<Event> lab_event_of(const Scenario& s, int64_t order, const std::string& status, std::optional<int64_t> v) {
    std::optional<Event> found;
    const StreamLab* flow = s.flow_if();
    if (!flow) return found;  // only a stream lab's writes are of its events
    for (const auto& e : flow->events) {
        if (e.order != order || e.type != status) continue;
        if (!found || (v && e.version == *v)) found = Event{e.order, e.type, e.version};
    }
    return found;
}

// Each observed write gets the entry and event its actor had last received (a statement that
// changed no row is known only that way); a row write keeps the order and status it wrote.
void attribute_writes(const Scenario& s, std::vector<HistoryRecord>& history) {
    std::map<std::string, std::pair<std::string, Event>> last;  // actor -> its last receive
    for (auto& r : history) {
        if (r.op == Op::receive) {
            if (const auto ev = record_event(r)) last[r.actor] = {std::string(record_entry(r)), Event{ev->order, std::string(ev->type), ev->v}};
            continue;
        }
        if (r.op != Op::write || r.data.value("seen_by", "") != "trigger") continue;
        const auto it = last.find(r.actor);
        const bool row = r.data.value("affected", 0) > 0;
        std::optional<Event> ev;
        std::string entry;
        if (it != last.end() && (!row || (it->second.second.order == r.data.value("order", int64_t{-1}) &&
                                          it->second.second.type == r.data.value("status", "")))) {
            entry = it->second.first;
            ev = it->second.second;
        } else if (row) {
            const auto v = r.data.contains("version") ? std::optional<int64_t>(r.data["version"].get<int64_t>()) : std::nullopt;
            ev = lab_event_of(s, r.data.value("order", int64_t{-1}), r.data.value("status", ""), v);
        }
        if (!ev) continue;
        if (!row) r.data["status"] = ev->type;
        r.data.erase("order");
        r = HistoryRecord{r.trial, r.t_ns, r.actor, r.op, std::move(r.data), entry, ev};
    }
}

// A program producer's publishes: the stream's entries, each at its ID's time.
std::vector<HistoryRecord> stream_publishes(RedisClient& redis, const std::string& key, int64_t wall_offset_ns) {
    std::vector<HistoryRecord> out;
    const auto r = redis.call({"XRANGE", key, "-", "+"});
    for (const auto& entry : r.elements) {
        StreamEntry e{entry.elements.at(0).str, {}, 0};
        const auto& flat = entry.elements.at(1).elements;
        for (size_t i = 0; i + 1 < flat.size(); i += 2) e.fields.push_back({flat[i].str, flat[i + 1].str});
        std::optional<Event> ev;
        try {
            ev = event_from_entry(e);
        } catch (const std::runtime_error&) {
        }
        const int64_t ms = std::stoll(e.id.substr(0, e.id.find('-')));
        out.push_back(HistoryRecord{0, ms * 1'000'000 - wall_offset_ns, "producer", Op::publish,
                                    {{"result", "ok"}, {"attempt", 1}, {"seen_by", "stream"}}, e.id, ev});
    }
    return out;
}
}  // namespace

struct ProgramObserver::Impl {
    const Scenario& s;
    std::string prefix;
    std::set<std::string> programs;
    int64_t wall_offset_ns = wall_minus_steady_ns();
    std::unique_ptr<PgEndpoint> pg;
    std::string schema;
    std::map<std::string, Held> held;          // entry -> its program owner
    std::map<std::string, std::optional<Event>> events;  // entry -> its event, read once
    std::vector<HistoryRecord> pel, traced;   // every record seen, by source
    std::vector<HistoryRecord> fresh;          // since new_records()
    std::vector<TraceFile> traces;
    std::vector<std::string> trace_errors;

    Impl(const Scenario& sc, std::string p, std::set<std::string> progs)
        : s(sc), prefix(std::move(p)), programs(std::move(progs)) {}

    std::string stream_key() const { return prefix + s.flow().stream.key; }

    std::optional<Event> event_of(RedisClient& redis, const std::string& id) {
        const auto it = events.find(id);
        if (it != events.end()) return it->second;
        std::optional<Event> ev;
        const auto r = redis.call({"XRANGE", stream_key(), id, id});
        if (!r.elements.empty()) {
            StreamEntry e{id, {}, 0};
            const auto& flat = r.elements[0].elements.at(1).elements;
            for (size_t i = 0; i + 1 < flat.size(); i += 2) e.fields.push_back({flat[i].str, flat[i + 1].str});
            try {
                ev = event_from_entry(e);
            } catch (const std::runtime_error&) {
            }
        }
        events[id] = ev;
        return ev;
    }

    void seen(HistoryRecord r, std::vector<HistoryRecord>& into) {
        fresh.push_back(r);
        into.push_back(std::move(r));
    }

    void delivered(RedisClient& redis, const std::string& id, const std::string& owner, int64_t idle_ms,
                   int64_t deliveries, const char* via) {
        nlohmann::json d = {{"deliveries", deliveries}, {"via", via}, {"seen_by", "pel"}};
        const Nanos at = steady_now() - std::chrono::milliseconds(idle_ms);
        seen(HistoryRecord{0, at.count(), owner, Op::receive, std::move(d), id, event_of(redis, id)}, pel);
    }

    void poll(RedisClient& redis) {
        const auto reply = redis.call({"XPENDING", stream_key(), s.flow().stream.group, "-", "+", "100000"});
        std::set<std::string> now_held;
        for (const auto& row : reply.elements) {
            if (row.elements.size() < 4) continue;
            const std::string& id = row.elements[0].str;
            const std::string& owner = row.elements[1].str;
            const int64_t idle = row.elements[2].integer, count = row.elements[3].integer;
            const auto it = held.find(id);
            if (!programs.count(owner)) {
                if (it != held.end()) held.erase(it);  // claimed by one of relab's own roles: it records that
                continue;
            }
            now_held.insert(id);
            if (it != held.end() && it->second.owner == owner && it->second.deliveries == count) continue;
            const char* via = count == 1 ? "new" : (it != held.end() && it->second.owner != owner) ? "claim" : "pending";
            if (it == held.end() && count > 1) via = "claim";
            delivered(redis, id, owner, idle, count, via);
            held[id] = Held{owner, count};
        }
        for (auto it = held.begin(); it != held.end();) {
            if (now_held.count(it->first)) {
                ++it;
                continue;
            }
            seen(HistoryRecord{0, steady_now().count(), it->second.owner, Op::ack, {{"seen_by", "pel"}}, it->first,
                               event_of(redis, it->first)},
                 pel);
            it = held.erase(it);
        }
    }

    void read_traces() {
        for (auto& t : traces) {
            std::ifstream in(t.path, std::ios::binary);
            if (!in) continue;
            in.seekg(static_cast<std::streamoff>(t.offset));
            std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            const size_t end = chunk.rfind('\n');
            if (end == std::string::npos) continue;
            t.offset += end + 1;
            size_t from = 0;
            while (from <= end) {
                const size_t nl = chunk.find('\n', from);
                ++t.line;
                const std::string line = chunk.substr(from, nl - from);
                from = nl + 1;
                if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
                trace_line(t, line);
            }
        }
    }

    // The write log's rows of the programs' connections, as write records (order and status kept
    // in data until attribute_writes() names the event).
    std::vector<HistoryRecord> logged_writes() {
        std::vector<HistoryRecord> out;
        if (!pg) return out;
        PgSession session(*pg, schema);
        const auto rows = session.exec("SELECT at_us, actor, coalesce(order_id, -1), coalesce(status, ''), "
                                       "coalesce(version, -1), affected, coalesce(statement, '') FROM relab_write_log "
                                       "ORDER BY seq").rows;
        for (const auto& row : rows) {
            if (!programs.count(row[1])) continue;  // relab's own roles record their writes themselves
            nlohmann::json d = {{"affected", std::stoll(row[5])}, {"sql", row[6]}, {"seen_by", "trigger"}};
            if (std::stoll(row[5]) > 0) {
                d["order"] = std::stoll(row[2]);
                d["status"] = row[3];
                d["version"] = std::stoll(row[4]);
            }
            out.push_back(HistoryRecord{0, std::stoll(row[0]) * 1000 - wall_offset_ns, row[1], Op::write, std::move(d)});
        }
        return out;
    }

    // Per actor, receives and acks from its trace when it traced them, else from the PEL; writes
    // from the trigger when there is one; anything else from the trace.
    std::vector<HistoryRecord> merged(std::vector<HistoryRecord> writes) {
        std::set<std::pair<std::string, Op>> traced_ops;
        for (const auto& r : traced) traced_ops.insert({r.actor, r.op});
        // A traced receive has the program's own instant; the delivery count only the PEL knows.
        for (auto& r : traced) {
            if (r.op != Op::receive || r.data.contains("deliveries")) continue;
            for (const auto& p : pel)
                if (p.op == Op::receive && p.actor == r.actor && record_entry(p) == record_entry(r))
                    r.data["deliveries"] = p.data.value("deliveries", 0);
        }
        std::vector<HistoryRecord> out;
        for (auto& r : pel)
            if (!traced_ops.count({r.actor, r.op})) out.push_back(std::move(r));
        for (auto& r : traced)
            if (!(pg && r.op == Op::write)) out.push_back(std::move(r));
        for (auto& r : writes) out.push_back(std::move(r));
        std::stable_sort(out.begin(), out.end(), [](const HistoryRecord& a, const HistoryRecord& b) { return a.t_ns < b.t_ns; });
        return out;
    }

    void trace_line(const TraceFile& t, const std::string& line) {
        auto j = nlohmann::json::parse(line, nullptr, false);
        auto fail = [&](const std::string& why) {
            if (trace_errors.size() < 3)
                trace_errors.push_back(fmt::format("{} line {}: {}: {}", t.actor, t.line, why, line.substr(0, 200)));
        };
        if (!j.is_object()) return fail("not a JSON object");
        if (!j.contains("op") || !j["op"].is_string()) return fail("no \"op\"");
        if (j.contains("t_ns") && !j["t_ns"].is_number_integer()) return fail("\"t_ns\" is not an integer");
        const int64_t t_ns = j.contains("t_ns") ? j["t_ns"].get<int64_t>() : steady_now().count();
        nlohmann::json r = {{"t_ns", t_ns}, {"actor", t.actor}, {"op", j["op"]}};
        const auto op = op_named(j["op"].get<std::string>());
        if (!op) return fail("unknown op (known ops: " + known_ops() + ")");
        // Only the fields the op's row lists (history_op.h): what the checker and reports read.
        const std::string fields = " " + std::string(op_info(*op).fields) + " ";
        for (const auto& [k, v] : j.items())
            if (fields.find(" " + k + " ") != std::string::npos) r[k] = v;
        r["seen_by"] = "trace";
        seen(history_record_from_json(r), traced);
    }
};

ProgramObserver::ProgramObserver(const Scenario& s, std::string prefix, std::set<std::string> programs)
    : m(std::make_unique<Impl>(s, std::move(prefix), std::move(programs))) {}

ProgramObserver::~ProgramObserver() {
    if (!m->pg) return;
    try {
        PgSession pg(*m->pg, m->schema);
        pg.exec("DROP TRIGGER IF EXISTS relab_log_row ON tmp_orders");
        pg.exec("DROP TRIGGER IF EXISTS relab_log_statement ON tmp_orders");
        pg.exec("DROP TABLE IF EXISTS relab_write_log");
    } catch (...) {
        // a lab's own PostgreSQL already gone: its tables went with it
    }
}

void ProgramObserver::install_write_log(const PgEndpoint& pg, const std::string& schema) {
    if (m->pg) return;
    PgSession session(pg, schema);
    for (const auto& sql : write_log_sql(schema)) session.exec(sql);
    m->pg = std::make_unique<PgEndpoint>(pg);
    m->schema = schema;
}

void ProgramObserver::watch_trace(const std::string& actor, const std::string& path) {
    for (const auto& t : m->traces)
        if (t.path == path) return;
    m->traces.push_back(TraceFile{actor, path});
}

void ProgramObserver::poll_stream(RedisClient& redis) {
    if (has_stream(m->s.kind) && m->s.exec.of("consumer")) m->poll(redis);
}

void ProgramObserver::new_records(std::vector<HistoryRecord>& out) {
    m->read_traces();
    for (auto& r : m->fresh) out.push_back(std::move(r));
    m->fresh.clear();
}

std::vector<HistoryRecord> ProgramObserver::records(RedisClient& redis) {
    if (has_stream(m->s.kind) && m->s.exec.of("consumer")) m->poll(redis);
    m->read_traces();
    m->fresh.clear();
    if (!m->trace_errors.empty()) {
        std::string list;
        for (const auto& e : m->trace_errors) list += "\n  " + e;
        throw HarnessError("a program's trace (RELAB_TRACE_FD) has lines that are not history records; each line is "
                           "one JSON object with an \"op\" of history_op.h (docs/your-code.md):" + list);
    }
    std::vector<HistoryRecord> writes = m->logged_writes();
    if (has_stream(m->s.kind) && m->s.exec.of("producer"))
        for (auto& r : stream_publishes(redis, m->stream_key(), m->wall_offset_ns)) writes.push_back(std::move(r));
    std::vector<HistoryRecord> out = m->merged(std::move(writes));
    attribute_writes(m->s, out);
    return out;
}

}  // namespace relab
