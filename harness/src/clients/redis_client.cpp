#include "clients/redis_client.h"

#include <hiredis/hiredis.h>
#include <poll.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "util/interrupt.h"
#include "clients/hiredis_handles.h"

namespace relab {

const char* const kCompareAndDeleteScript =
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else return 0 end";

namespace {

using ContextPtr = RedisContextPtr;
using ReplyPtr = RedisReplyPtr;

std::string to_upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}


// The key a command works on, for error messages; empty for commands without one.
std::string command_key(const std::vector<std::string>& argv) {
    if (argv.size() < 2) return {};
    std::string cmd = to_upper(argv[0]);
    if (cmd == "XREAD" || cmd == "XREADGROUP") {
        for (size_t i = 1; i + 1 < argv.size(); ++i)
            if (to_upper(argv[i]) == "STREAMS") return argv[i + 1];
        return {};
    }
    if (cmd == "EVAL" || cmd == "EVALSHA" || cmd == "FCALL")
        return argv.size() >= 4 && argv[2] != "0" ? argv[3] : std::string();
    if (cmd == "XGROUP" || cmd == "XINFO" || cmd == "OBJECT" || cmd == "MEMORY")
        return argv.size() >= 3 ? argv[2] : std::string();
    static const char* const keyless[] = {"AUTH",  "SELECT", "PING",   "INFO",  "CLIENT", "COMMAND", "CONFIG",
                                          "SCAN",  "SCRIPT", "DEBUG",  "ECHO",  "HELLO",  "FLUSHALL",
                                          "FLUSHDB", "DBSIZE", "MULTI", "EXEC", "WAIT",   "FUNCTION"};
    for (const char* k : keyless)
        if (cmd == k) return {};
    return argv[1];
}

timeval to_timeval(std::chrono::milliseconds d) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(d.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((d.count() % 1000) * 1000);
    return tv;
}

// hiredis writes with write(2), not send(MSG_NOSIGNAL): without this a server that went away kills
// the process with SIGPIPE instead of giving an error. A handler someone installed is kept.
void ignore_sigpipe_once() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction old {};
        if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) std::signal(SIGPIPE, SIG_IGN);
    });
}

// The one place hiredis error codes become words. hiredis 0.14 reports a socket timeout as an I/O
// error with strerror(EAGAIN).
std::string describe_context_error(const redisContext* c, std::chrono::milliseconds timeout) {
    if (!c) return "cannot allocate a hiredis context";
    std::string errstr = c->errstr;
    switch (c->err) {
        case REDIS_ERR_IO:
            if (errstr == std::strerror(EAGAIN) || errstr == std::strerror(EWOULDBLOCK))
                return fmt::format("timed out: no reply within {} ms", timeout.count());
            return "I/O error: " + errstr;
        case REDIS_ERR_EOF:
            return "server closed the connection";
        case REDIS_ERR_PROTOCOL:
            return "protocol error: " + errstr;
        case REDIS_ERR_OOM:
            return "out of memory: " + errstr;
        default:
            return errstr.empty() ? std::string("unknown hiredis error") : errstr;
    }
}

RedisReply copy_reply(const redisReply* r) {
    RedisReply out;
    if (!r) return out;
    switch (r->type) {
        case REDIS_REPLY_STATUS:
            out.type = RedisReply::Type::status;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ERROR:
            out.type = RedisReply::Type::error;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_STRING:
            out.type = RedisReply::Type::string;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_INTEGER:
            out.type = RedisReply::Type::integer;
            out.integer = r->integer;
            break;
        case REDIS_REPLY_ARRAY:
            out.type = RedisReply::Type::array;
            out.elements.reserve(r->elements);
            for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(copy_reply(r->element[i]));
            break;
        default:
            out.type = RedisReply::Type::nil;
    }
    return out;
}

// Like redis-cli's sdscatrepr.
std::string quote_like_redis_cli(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '"': out += "\\\""; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\a': out += "\\a"; break;
            case '\b': out += "\\b"; break;
            default:
                if (std::isprint(c))
                    out += static_cast<char>(c);
                else
                    out += fmt::format("\\x{:02x}", c);
        }
    }
    return out + "\"";
}

// redis-cli's TTY format: every element ends with a newline; nested arrays are indented under
// their index.
void format_reply(const RedisReply& r, const std::string& prefix, std::string& out) {
    switch (r.type) {
        case RedisReply::Type::nil: out += "(nil)\n"; return;
        case RedisReply::Type::status: out += r.str + "\n"; return;
        case RedisReply::Type::error: out += "(error) " + r.str + "\n"; return;
        case RedisReply::Type::integer: out += fmt::format("(integer) {}\n", r.integer); return;
        case RedisReply::Type::string: out += quote_like_redis_cli(r.str) + "\n"; return;
        case RedisReply::Type::array: break;
    }
    if (r.elements.empty()) {
        out += "(empty array)\n";
        return;
    }
    size_t width = std::to_string(r.elements.size()).size();
    std::string child_prefix = prefix + std::string(width + 2, ' ');
    for (size_t i = 0; i < r.elements.size(); ++i) {
        // The first index goes on the line the caller already started.
        if (i > 0) out += prefix;
        out += fmt::format("{:>{}}) ", i + 1, width);
        format_reply(r.elements[i], child_prefix, out);
    }
}

bool version_at_least(const std::string& version, int major, int minor) {
    int parts[2] = {0, 0};
    const char* p = version.data();
    const char* end = p + version.size();
    for (int& part : parts) {
        auto [next, ec] = std::from_chars(p, end, part);
        if (ec != std::errc()) break;
        p = next;
        if (p < end && *p == '.') ++p;
    }
    return parts[0] != major ? parts[0] > major : parts[1] >= minor;
}

std::string escape_glob(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// CLIENT SETNAME refuses spaces and newlines.
std::string client_name_safe(const std::string& s) {
    std::string out = s;
    for (char& c : out)
        if (!std::isgraph(static_cast<unsigned char>(c))) c = '_';
    return out;
}

[[noreturn]] void throw_unexpected(const std::vector<std::string>& argv, const RedisReply& r) {
    throw RedisError(abbreviate_command(argv), command_key(argv), "unexpected reply: " + r.to_string(),
                     KvError::Kind::unexpected);
}

std::vector<StreamEntry> parse_entries(const RedisReply& entries, const std::vector<std::string>& argv) {
    std::vector<StreamEntry> out;
    if (entries.is_nil()) return out;
    if (entries.type != RedisReply::Type::array) throw_unexpected(argv, entries);
    for (const RedisReply& e : entries.elements) {
        if (e.type != RedisReply::Type::array || e.elements.size() != 2) throw_unexpected(argv, entries);
        StreamEntry entry;
        entry.id = e.elements[0].str;
        // Fields are nil for a pending entry that was deleted meanwhile.
        const RedisReply& fields = e.elements[1];
        for (size_t i = 0; i + 1 < fields.elements.size(); i += 2)
            entry.fields.emplace_back(fields.elements[i].str, fields.elements[i + 1].str);
        out.push_back(std::move(entry));
    }
    return out;
}

// XREADGROUP's reply (nil, or [[stream, entries]...]) as the entries of every stream in it.
std::vector<StreamEntry> parse_xreadgroup(const RedisReply& r, const std::vector<std::string>& argv) {
    if (r.is_nil()) return {};
    if (r.type != RedisReply::Type::array) throw_unexpected(argv, r);
    std::vector<StreamEntry> out;
    for (const RedisReply& per_stream : r.elements) {
        if (per_stream.type != RedisReply::Type::array || per_stream.elements.size() != 2) throw_unexpected(argv, r);
        for (StreamEntry& e : parse_entries(per_stream.elements[1], argv)) out.push_back(std::move(e));
    }
    return out;
}

// Puts the client's socket timeout back when a blocking call is over, however it ended.
class TimeoutRestore {
public:
    TimeoutRestore(RedisClient& c, std::chrono::milliseconds old) : m_client(c), m_old(old) {}
    ~TimeoutRestore() {
        try {
            m_client.set_timeout(m_old);
        } catch (...) {
            // The connection is already broken; the call's own error says so.
        }
    }
    TimeoutRestore(const TimeoutRestore&) = delete;
    TimeoutRestore& operator=(const TimeoutRestore&) = delete;

private:
    RedisClient& m_client;
    std::chrono::milliseconds m_old;
};

}  // namespace

std::string abbreviate_command(const std::vector<std::string>& argv) {
    constexpr size_t max_args = 8;
    constexpr size_t max_arg_len = 120;  // long enough for a namespaced key
    std::string out;
    bool secret = !argv.empty() && to_upper(argv[0]) == "AUTH";
    for (size_t i = 0; i < argv.size(); ++i) {
        if (i == max_args) {
            out += fmt::format(" ...({} more)", argv.size() - i);
            break;
        }
        if (i > 0) out += ' ';
        const std::string& arg = argv[i];
        if (secret && i > 0) {
            out += "***";
            continue;
        }
        out += arg.size() > max_arg_len ? arg.substr(0, max_arg_len - 3) + "..." : arg;
        std::string up = to_upper(arg);
        if (i > 0 && (up == "AUTH" || up == "AUTH2" || up == "REQUIREPASS" || up == "MASTERAUTH")) secret = true;
    }
    return out;
}

RedisError::RedisError(std::string command, std::string key, std::string message, Kind kind)
    : KvError(kind, key.empty() || command.find(key) != std::string::npos
                        ? fmt::format("redis {}: {}", command, message)
                        : fmt::format("redis {} (key {}): {}", command, key, message)),
      m_command(std::move(command)),
      m_key(std::move(key)),
      m_message(std::move(message)) {}

bool exists_reply(const RedisReply& r, const std::vector<std::string>& argv) {
    if (r.type == RedisReply::Type::integer) return r.integer > 0;
    throw RedisError(abbreviate_command(argv), command_key(argv),
                     (r.is_error() ? "error reply where EXISTS's count was expected (relab cannot tell whether the "
                                     "key exists): "
                                   : "unexpected reply: ") +
                         r.to_string(),
                     KvError::Kind::unexpected);
}

bool is_oom_error(const RedisReply& r) { return r.is_error() && starts_with(r.str, "OOM "); }

std::string RedisReply::to_string() const {
    std::string out;
    format_reply(*this, "", out);
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

struct RedisClient::Impl {
    RedisEndpoint ep;
    std::chrono::milliseconds timeout{0};
    ContextPtr ctx;
    std::string failure;  // why the connection is unusable; empty while it works

    [[noreturn]] void fail(const std::vector<std::string>& argv) {
        failure = describe_context_error(ctx.get(), timeout) + " (" + ep.display() + ")";
        throw RedisConnectionError(abbreviate_command(argv), command_key(argv), failure);
    }

    void check_usable(const std::vector<std::string>& argv) const {
        if (!failure.empty())
            throw RedisConnectionError(abbreviate_command(argv), command_key(argv),
                                       "connection unusable after an earlier failure: " + failure);
    }

    void append(const std::vector<std::string>& argv) {
        std::vector<const char*> ptrs;
        std::vector<size_t> lens;
        ptrs.reserve(argv.size());
        lens.reserve(argv.size());
        for (const auto& a : argv) {
            ptrs.push_back(a.data());
            lens.push_back(a.size());
        }
        if (redisAppendCommandArgv(ctx.get(), static_cast<int>(argv.size()), ptrs.data(), lens.data()) != REDIS_OK)
            fail(argv);
    }

    RedisReply read_reply(const std::vector<std::string>& argv) {
        void* raw = nullptr;
        if (redisGetReply(ctx.get(), &raw) != REDIS_OK) fail(argv);
        ReplyPtr reply(static_cast<redisReply*>(raw));
        if (!reply) fail(argv);
        return copy_reply(reply.get());
    }
};

namespace {

// RedisClient::open_ahead's connection, until a RedisClient takes it.
struct ConnectionAhead {
    std::mutex mu;
    std::unique_ptr<RedisClient> client;
};

ConnectionAhead& connection_ahead() {
    static ConnectionAhead c;
    return c;
}

bool same_endpoint(const RedisEndpoint& a, const RedisEndpoint& b) {
    return a.host == b.host && a.port == b.port && a.password == b.password && a.db == b.db;
}

}  // namespace

void RedisClient::open_ahead(const RedisEndpoint& ep) {
    auto client = std::make_unique<RedisClient>(ep);
    ConnectionAhead& c = connection_ahead();
    std::lock_guard<std::mutex> lock(c.mu);
    c.client = std::move(client);
}

std::unique_ptr<RedisClient::Impl> RedisClient::take_ahead(const RedisEndpoint& ep) {
    ConnectionAhead& c = connection_ahead();
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.client || !same_endpoint(c.client->endpoint(), ep)) return nullptr;
    std::unique_ptr<Impl> kept = std::move(c.client->m_impl);
    c.client.reset();
    pollfd p{kept->ctx->fd, POLLIN, 0};
    if (p.fd < 0 || ::poll(&p, 1, 0) != 0) return nullptr;  // closed by the server, or unusable
    return kept;
}

RedisClient::RedisClient(const RedisEndpoint& ep, std::chrono::milliseconds timeout) : m_impl(take_ahead(ep)) {
    ignore_sigpipe_once();
    if (m_impl) {
        set_timeout(timeout);
        return;
    }
    m_impl = std::make_unique<Impl>();
    m_impl->ep = ep;
    m_impl->timeout = timeout;
    const std::vector<std::string> connect_argv = {"CONNECT"};
    // A zero timeout means "wait forever"; hiredis would read a zero connect timeout as "give up now".
    m_impl->ctx.reset(timeout.count() > 0 ? redisConnectWithTimeout(ep.host.c_str(), ep.port, to_timeval(timeout))
                                          : redisConnect(ep.host.c_str(), ep.port));
    if (!m_impl->ctx || m_impl->ctx->err) m_impl->fail(connect_argv);
    if (timeout.count() > 0 && redisSetTimeout(m_impl->ctx.get(), to_timeval(timeout)) != REDIS_OK)
        m_impl->fail(connect_argv);
    auto setup = [&](const std::vector<std::string>& argv, const char* what) {
        RedisReply r = command(argv);
        if (r.is_error()) {
            m_impl->failure = fmt::format("{}: {} ({})", what, r.str, ep.display());
            throw RedisConnectionError(abbreviate_command(argv), "", m_impl->failure);
        }
    };
    if (!ep.password.empty()) setup({"AUTH", ep.password}, "authentication failed");
    if (ep.db != 0) setup({"SELECT", std::to_string(ep.db)}, "cannot select the database");
}

RedisClient::~RedisClient() = default;

RedisReply RedisClient::command(const std::vector<std::string>& argv) {
    m_impl->check_usable(argv);
    m_impl->append(argv);
    return m_impl->read_reply(argv);
}

RedisReply RedisClient::call(const std::vector<std::string>& argv) {
    RedisReply r = command(argv);
    if (r.is_error()) throw RedisError(abbreviate_command(argv), command_key(argv), r.str);
    return r;
}

std::vector<RedisReply> RedisClient::pipeline(const std::vector<std::vector<std::string>>& commands) {
    std::vector<RedisReply> replies;
    if (commands.empty()) return replies;
    m_impl->check_usable(commands.front());
    for (const auto& argv : commands) m_impl->append(argv);
    replies.reserve(commands.size());
    for (const auto& argv : commands) replies.push_back(m_impl->read_reply(argv));
    return replies;
}

void RedisClient::set_timeout(std::chrono::milliseconds timeout) {
    m_impl->timeout = timeout;
    if (!m_impl->failure.empty()) return;
    if (redisSetTimeout(m_impl->ctx.get(), to_timeval(timeout)) != REDIS_OK)
        m_impl->fail({"SET-TIMEOUT", std::to_string(timeout.count())});
}

std::chrono::milliseconds RedisClient::timeout() const { return m_impl->timeout; }

const RedisEndpoint& RedisClient::endpoint() const { return m_impl->ep; }

std::map<std::string, std::string> parse_info(const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto colon = line.find(':');
        if (colon != std::string::npos && line[0] != '#') out[line.substr(0, colon)] = line.substr(colon + 1);
    }
    return out;
}

std::map<std::string, std::string> info_section(RedisClient& c, const std::string& section) {
    return parse_info(c.call({"INFO", section}).str);
}

RedisFeatures detect_redis_features(RedisClient& c) {
    RedisFeatures f;
    const auto server = info_section(c, "server");
    if (auto it = server.find("redis_version"); it != server.end()) f.version = it->second;
    RedisReply delex = c.command({"COMMAND", "INFO", "DELEX"});
    f.delex = delex.type == RedisReply::Type::array && !delex.elements.empty() && !delex.elements[0].is_nil();
    f.xadd_idmp = version_at_least(f.version, 8, 6);
    return f;
}

void delete_keys_with_prefix(RedisClient& c, const std::string& prefix) {
    if (prefix.empty()) throw RedisError("SCAN", "", "refusing to delete keys under an empty prefix", KvError::Kind::unexpected);
    const std::string pattern = escape_glob(prefix) + "*";
    std::string cursor = "0";
    do {
        RedisReply r = c.call({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
        if (r.type != RedisReply::Type::array || r.elements.size() != 2) throw_unexpected({"SCAN", cursor}, r);
        cursor = r.elements[0].str;
        std::vector<std::string> unlink = {"UNLINK"};
        for (const RedisReply& key : r.elements[1].elements)
            if (starts_with(key.str, prefix)) unlink.push_back(key.str);
        if (unlink.size() <= 1) continue;
        // A cluster node refuses keys of several slots in one command (CROSSSLOT): one UNLINK each.
        const bool cluster_node = info_section(c, "cluster")["cluster_enabled"] == "1";
        if (!cluster_node) {
            c.call(unlink);
            continue;
        }
        std::vector<std::vector<std::string>> each;
        for (size_t i = 1; i < unlink.size(); ++i) each.push_back({"UNLINK", unlink[i]});
        for (const RedisReply& reply : c.pipeline(each))
            if (reply.is_error()) throw_unexpected(each.front(), reply);
    } while (cursor != "0");
}

RealStream::RealStream(RedisClient& c, RedisNamespace ns, std::string barrier_prefix)
    : m_client(c), m_ns(std::move(ns)), m_barrier_prefix(std::move(barrier_prefix)) {}

std::string RealStream::xadd_idmp(const std::string& stream, const Fields& fields, const std::string& producer_id,
                                  const std::string& iid) {
    const std::string key = m_ns.key(stream);
    std::vector<std::string> argv = {"XADD", key, "IDMP", producer_id, iid, "*"};
    for (const auto& [name, value] : fields) {
        argv.push_back(name);
        argv.push_back(value);
    }
    RedisReply reply = m_client.command(argv);
    if (reply.is_error()) throw RedisError(abbreviate_command(argv), key, reply.str);
    if (reply.type != RedisReply::Type::string) throw_unexpected(argv, reply);
    return reply.str;
}

std::vector<std::string> RealStream::xadd(const std::string& stream, const std::vector<Fields>& batch) {
    const std::string key = m_ns.key(stream);
    std::vector<std::vector<std::string>> commands;
    commands.reserve(batch.size());
    for (const Fields& fields : batch) {
        std::vector<std::string> argv = {"XADD", key, "*"};
        for (const auto& [name, value] : fields) {
            argv.push_back(name);
            argv.push_back(value);
        }
        commands.push_back(std::move(argv));
    }
    std::vector<RedisReply> replies = m_client.pipeline(commands);
    std::vector<std::string> ids;
    ids.reserve(replies.size());
    for (size_t i = 0; i < replies.size(); ++i) {
        if (replies[i].is_error()) throw RedisError(abbreviate_command(commands[i]), key, replies[i].str);
        if (replies[i].type != RedisReply::Type::string) throw_unexpected(commands[i], replies[i]);
        ids.push_back(replies[i].str);
    }
    return ids;
}

std::vector<StreamEntry> RealStream::xreadgroup(const std::string& group, const std::string& consumer,
                                                const std::string& stream, int count, Millis block) {
    // The barrier finds readers by connection name, so the name is set before the first read.
    std::string name = client_name_safe(m_barrier_prefix + consumer);
    if (name != m_client_name) {
        m_client.call({"CLIENT", "SETNAME", name});
        m_client_name = name;
    }
    // hiredis 0.14 gives up on a reply that takes longer than the socket timeout and then refuses
    // every further call, so the timeout must outlast the BLOCK.
    const Millis old_timeout = m_client.timeout();
    const Millis needed = block.count() == 0 ? Millis(0) : block + Millis(2000);
    std::optional<TimeoutRestore> restore;
    if (old_timeout.count() > 0 && (needed.count() == 0 || needed > old_timeout)) {
        restore.emplace(m_client, old_timeout);
        m_client.set_timeout(needed);
    }
    const std::string key = m_ns.key(stream);
    std::vector<std::string> argv = {"XREADGROUP",           "GROUP", group, consumer, "COUNT",
                                     std::to_string(count),  "BLOCK", std::to_string(block.count()),
                                     "STREAMS",              key,     ">"};
    std::vector<StreamEntry> out = parse_xreadgroup(m_client.call(argv), argv);
    for (StreamEntry& e : out) e.deliveries = 1;  // a new entry: its first delivery
    return out;
}

void RealStream::fill_deliveries(const std::string& key, const std::string& group, std::vector<StreamEntry>& entries) {
    if (entries.empty()) return;
    std::vector<std::string> argv = {"XPENDING", key, group, entries.front().id, entries.back().id,
                                     std::to_string(entries.size() + 64)};
    const RedisReply r = m_client.call(argv);
    if (r.type != RedisReply::Type::array) throw_unexpected(argv, r);
    std::map<std::string, int64_t> counts;
    for (const RedisReply& item : r.elements) {
        if (item.type != RedisReply::Type::array || item.elements.size() != 4) throw_unexpected(argv, r);
        counts[item.elements[0].str] = item.elements[3].integer;
    }
    for (StreamEntry& e : entries) {
        auto it = counts.find(e.id);
        e.deliveries = it == counts.end() ? 0 : it->second;
    }
}

std::vector<StreamEntry> RealStream::xreadgroup_pending(const std::string& group, const std::string& consumer,
                                                        const std::string& stream, int count, const std::string& after) {
    const std::string key = m_ns.key(stream);
    std::vector<std::string> argv = {"XREADGROUP", "GROUP", group, consumer, "COUNT", std::to_string(count),
                                     "STREAMS", key, after};
    // An entry deleted from the stream meanwhile comes back with no fields.
    std::vector<StreamEntry> out = parse_xreadgroup(m_client.call(argv), argv);
    fill_deliveries(key, group, out);
    return out;
}

Stream::AutoClaimed RealStream::xautoclaim(const std::string& stream, const std::string& group,
                                           const std::string& consumer, Millis min_idle, const std::string& start,
                                           int count) {
    const std::string key = m_ns.key(stream);
    std::vector<std::string> argv = {"XAUTOCLAIM", key, group, consumer, std::to_string(min_idle.count()), start,
                                     "COUNT", std::to_string(count)};
    const RedisReply r = m_client.call(argv);
    if (r.type != RedisReply::Type::array || r.elements.size() < 2) throw_unexpected(argv, r);
    AutoClaimed out;
    out.next = r.elements[0].str;
    out.claimed = parse_entries(r.elements[1], argv);
    if (r.elements.size() > 2)
        for (const RedisReply& id : r.elements[2].elements) out.deleted.push_back(id.str);
    fill_deliveries(key, group, out.claimed);
    return out;
}

bool RealStream::create_group(const std::string& stream, const std::string& group, const std::string& start) {
    const std::vector<std::string> argv = {"XGROUP", "CREATE", m_ns.key(stream), group, start, "MKSTREAM"};
    const RedisReply r = m_client.command(argv);
    if (r.is_error()) {
        if (r.str.rfind("BUSYGROUP", 0) == 0) return false;
        throw RedisError(abbreviate_command(argv), m_ns.key(stream), r.str);
    }
    return true;
}

void RealStream::xack(const std::string& stream, const std::string& group, const std::string& id) {
    m_client.call({"XACK", m_ns.key(stream), group, id});
}

void RealStream::xack_all(const std::string& stream, const std::string& group, const std::vector<std::string>& ids) {
    std::vector<std::string> argv = {"XACK", m_ns.key(stream), group};
    argv.insert(argv.end(), ids.begin(), ids.end());
    m_client.call(argv);
}

std::vector<StreamEntry> RealStream::xrange(const std::string& stream) {
    std::vector<std::string> argv = {"XRANGE", m_ns.key(stream), "-", "+"};
    return parse_entries(m_client.call(argv), argv);
}

int RealStream::blocked_readers() {
    RedisReply list = m_client.call({"CLIENT", "LIST"});
    int blocked = 0;
    std::istringstream lines(list.str);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream fields(line);
        bool ours = false, reading = false, is_blocked = false;
        for (std::string field; fields >> field;) {
            if (starts_with(field, "name=")) ours = starts_with(field.substr(5), m_barrier_prefix);
            else if (field == "cmd=xreadgroup") reading = true;
            else if (starts_with(field, "flags=")) is_blocked = field.find('b', 6) != std::string::npos;
        }
        if (ours && reading && is_blocked) ++blocked;
    }
    return blocked;
}

bool RealStream::group_drained(const std::string& stream, const std::string& group) {
    const std::string key = m_ns.key(stream);
    if (m_client.call({"EXISTS", key}).integer == 0) return true;
    const RedisReply last = m_client.call({"XREVRANGE", key, "+", "-", "COUNT", "1"});
    const RedisReply groups = m_client.call({"XINFO", "GROUPS", key});
    for (const RedisReply& g : groups.elements) {
        const RedisReply* name = nullptr;
        const RedisReply* pending = nullptr;
        const RedisReply* delivered = nullptr;
        for (size_t i = 0; i + 1 < g.elements.size(); i += 2) {
            const std::string& f = g.elements[i].str;
            if (f == "name") name = &g.elements[i + 1];
            else if (f == "pending") pending = &g.elements[i + 1];
            else if (f == "last-delivered-id") delivered = &g.elements[i + 1];
        }
        if (!name || name->str != group) continue;
        if (!pending || pending->integer != 0) return false;
        return last.elements.empty() ||
               (delivered && !last.elements[0].elements.empty() && delivered->str == last.elements[0].elements[0].str);
    }
    return false;  // no such group (yet): not drained
}

void RealStream::wait_readers_blocked(int readers, Millis timeout) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        throw_if_interrupted();
        const int blocked = blocked_readers();
        if (blocked >= readers) return;
        auto waited = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - start);
        if (waited >= timeout)
            throw RedisError("wait_readers_blocked", m_barrier_prefix,
                             fmt::format("only {} of {} readers blocked after {} ms", blocked, readers, waited.count()),
                             KvError::Kind::unexpected);
        std::this_thread::sleep_for(Millis(1));
    }
}

RealKv::RealKv(RedisClient& c, RedisNamespace ns, bool use_delex)
    : m_client(c), m_ns(std::move(ns)), m_use_delex(use_delex) {}

bool RealKv::set_nx_px(const std::string& key, const std::string& value, Millis ttl) {
    std::vector<std::string> argv = {"SET", m_ns.key(key), value, "NX", "PX", std::to_string(ttl.count())};
    RedisReply r = m_client.call(argv);
    if (r.is_nil()) return false;
    if (r.type == RedisReply::Type::status && r.str == "OK") return true;
    throw_unexpected(argv, r);
}

int64_t RealKv::delete_if_equals(const std::string& key, const std::string& token) {
    std::vector<std::string> argv = m_use_delex
                                        ? std::vector<std::string>{"DELEX", m_ns.key(key), "IFEQ", token}
                                        : std::vector<std::string>{"EVAL", kCompareAndDeleteScript, "1", m_ns.key(key), token};
    RedisReply r = m_client.call(argv);
    if (r.type != RedisReply::Type::integer) throw_unexpected(argv, r);
    return r.integer;
}

std::string RealKv::delete_if_equals_method() const {
    return m_use_delex ? "DELEX IFEQ" : "compare-and-delete Lua script";
}

std::vector<std::string> set_option_args(const KvSetOptions& o) {
    std::vector<std::string> args;
    if (o.condition == KvSetOptions::Condition::nx) args.push_back("NX");
    if (o.condition == KvSetOptions::Condition::xx) args.push_back("XX");
    if (o.get) args.push_back("GET");
    if (o.keepttl) {
        args.push_back("KEEPTTL");
    } else if (o.ttl.count() > 0) {
        const bool seconds = o.ttl.count() % 1000 == 0;
        args.push_back(seconds ? "EX" : "PX");
        args.push_back(std::to_string(seconds ? o.ttl.count() / 1000 : o.ttl.count()));
    }
    return args;
}

KvSetResult RealKv::set(const std::string& key, const std::string& value, const KvSetOptions& o) {
    std::vector<std::string> argv = {"SET", m_ns.key(key), value};
    for (auto& a : set_option_args(o)) argv.push_back(std::move(a));
    RedisReply r = m_client.call(argv);
    KvSetResult out;
    if (o.get) {
        if (r.type == RedisReply::Type::string)
            out.previous = r.str;
        else if (!r.is_nil())
            throw_unexpected(argv, r);
        // With GET the reply is the old value, so whether SET wrote follows from the condition.
        switch (o.condition) {
            case KvSetOptions::Condition::always: out.written = true; break;
            case KvSetOptions::Condition::nx: out.written = !out.previous; break;
            case KvSetOptions::Condition::xx: out.written = out.previous.has_value(); break;
        }
        return out;
    }
    if (r.is_nil()) return out;
    if (r.type != RedisReply::Type::status || r.str != "OK") throw_unexpected(argv, r);
    out.written = true;
    return out;
}

std::optional<std::string> RealKv::get(const std::string& key) {
    std::vector<std::string> argv = {"GET", m_ns.key(key)};
    RedisReply r = m_client.call(argv);
    if (r.is_nil()) return std::nullopt;
    if (r.type != RedisReply::Type::string) throw_unexpected(argv, r);
    return r.str;
}

int64_t RealKv::del(const std::string& key) {
    std::vector<std::string> argv = {"DEL", m_ns.key(key)};
    RedisReply r = m_client.call(argv);
    if (r.type != RedisReply::Type::integer) throw_unexpected(argv, r);
    return r.integer;
}

int64_t RealKv::wait_replicas(int64_t replicas, Millis timeout) {
    std::vector<std::string> argv = {"WAIT", std::to_string(replicas), std::to_string(timeout.count())};
    // WAIT blocks up to its timeout: the socket must outlast it.
    const Millis old_timeout = m_client.timeout();
    std::optional<TimeoutRestore> restore;
    if (old_timeout.count() > 0 && timeout + Millis(2000) > old_timeout) {
        restore.emplace(m_client, old_timeout);
        m_client.set_timeout(timeout + Millis(2000));
    }
    RedisReply r = m_client.call(argv);
    if (r.type != RedisReply::Type::integer) throw_unexpected(argv, r);
    return r.integer;
}

bool RealKv::exists(const std::string& key) {
    std::vector<std::string> argv = {"EXISTS", m_ns.key(key)};
    return exists_reply(m_client.call(argv), argv);
}

}  // namespace relab
