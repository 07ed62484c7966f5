#include "families/redis_session.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <regex>
#include <set>
#include <stdexcept>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "process/child_process.h"

namespace relab {

namespace {

const std::regex k_pad{R"(\{pad:([0-9]{1,9})\})"};

std::string to_upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

bool plain_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_:./-{}*@#+=,").find(c) != std::string_view::npos;
}

std::string quote_for_shell(const std::string& s) {
    if (!s.empty() && std::all_of(s.begin(), s.end(), plain_char)) return s;
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

void strip(RedisReply& r, const std::string& prefix) {
    if (!prefix.empty())
        for (size_t pos; (pos = r.str.find(prefix)) != std::string::npos;) r.str.erase(pos, prefix.size());
    for (auto& e : r.elements) strip(e, prefix);
}

// A string reply may be expected by its value or by redis-cli's quoted form.
bool reply_matches(const RedisReply& reply, const std::string& expected) {
    if (reply.to_string() == expected) return true;
    return reply.type == RedisReply::Type::string && reply.str == expected;
}

// What redis-cli prints for argv against the endpoint (its default, non-raw output, as in the
// article's transcripts), without the trailing newline. The password goes in REDISCLI_AUTH, never
// on the command line.
std::string run_redis_cli(const RedisEndpoint& ep, const std::vector<std::string>& argv) {
    if (!find_on_path("redis-cli"))
        throw EnvironmentError("redis-cli is not on PATH: install it (apt-get install -y redis-tools) to run a step "
                               "with \"via\": \"redis-cli\"");
    char path[] = "/tmp/relab-redis-cli-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) throw EnvironmentError(std::string("cannot create a temp file for redis-cli's output in /tmp: ") + std::strerror(errno));
    close(fd);
    struct Remove {
        const char* p;
        ~Remove() { std::remove(p); }
    } remove{path};
    ChildOptions o;
    o.exe = "redis-cli";
    o.args = {"-h", ep.host, "-p", std::to_string(ep.port), "-n", std::to_string(ep.db), "--no-raw"};
    o.args.insert(o.args.end(), argv.begin(), argv.end());
    o.stdout_path = path;
    o.stderr_path = path;
    if (!ep.password.empty()) o.env["REDISCLI_AUTH"] = ep.password;
    ChildProcess cli(o);
    if (!cli.wait_for(std::chrono::seconds(10))) {
        cli.terminate();
        throw EnvironmentError("redis-cli did not answer within 10 s: is the server reachable?");
    }
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::string out = text.str();
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    if (cli.exit_code().value_or(-1) != 0 && out.empty())
        throw EnvironmentError(fmt::format("redis-cli exited with status {} and printed nothing", cli.exit_code().value_or(-1)));
    return out;
}

// A step run through redis-cli: its printed output against the step's expectations.
std::string check_cli_output(const RedisStep& step, const std::string& printed) {
    static const std::string error_mark = "(error) ";
    const bool is_error = printed.rfind(error_mark, 0) == 0;
    if (step.expect_error) {
        if (!is_error || printed.compare(error_mark.size(), step.expect_error->size(), *step.expect_error) != 0)
            return fmt::format("expected redis-cli to print an error starting with {}, it printed {}", *step.expect_error, printed);
        return {};
    }
    if (is_error) return "unexpected error: " + printed.substr(error_mark.size());
    if (step.expect_reply && printed != *step.expect_reply)
        return fmt::format("expected redis-cli to print {}, it printed {}", *step.expect_reply, printed);
    if (step.expect_min || step.expect_max) {
        static const std::string int_mark = "(integer) ";
        if (printed.rfind(int_mark, 0) != 0) return "expected an integer reply, redis-cli printed " + printed;
        const int64_t n = std::stoll(printed.substr(int_mark.size()));
        if (step.expect_min && n < *step.expect_min) return fmt::format("expected at least {}, got {}", *step.expect_min, n);
        if (step.expect_max && n > *step.expect_max) return fmt::format("expected at most {}, got {}", *step.expect_max, n);
    }
    return {};
}

}  // namespace

std::string expand_pads(const std::string& arg) {
    std::string out;
    auto begin = std::sregex_iterator(arg.begin(), arg.end(), k_pad);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
        out.append(arg, last, static_cast<size_t>(it->position()) - last);
        out.append(std::stoul((*it)[1].str()), 'x');
        last = static_cast<size_t>(it->position() + it->length());
    }
    out.append(arg, last, std::string::npos);
    return out;
}

std::string display_arg(const std::string& arg) {
    std::smatch m;
    if (!std::regex_search(arg, m, k_pad)) return quote_for_shell(arg);
    // The pad's text is not shown; the rest of the argument is, quoted as a whole.
    std::string shown = std::regex_replace(arg, k_pad, "<$1 bytes of x>");
    return quote_for_shell(shown);
}

std::string display_command(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) out += (out.empty() ? "" : " ") + display_arg(a);
    return out;
}

std::vector<size_t> key_positions(const std::vector<std::string>& argv, const std::vector<std::string>& keys) {
    std::vector<size_t> out;
    size_t from = 1;
    for (const auto& key : keys) {
        size_t i = from;
        while (i < argv.size() && argv[i] != key) ++i;
        if (i == argv.size())
            throw std::runtime_error(fmt::format("COMMAND GETKEYS named key '{}' that is not an argument of {}", key,
                                                 display_command(argv)));
        out.push_back(i);
        from = i + 1;
    }
    return out;
}

RedisReply without_prefix(RedisReply r, const std::string& prefix) {
    strip(r, prefix);
    return r;
}

std::string check_redis_reply(const RedisStep& step, const RedisReply& reply) {
    if (step.expect_error) {
        if (!reply.is_error()) return fmt::format("expected an error starting with {}, got {}", *step.expect_error, reply.to_string());
        if (reply.str.rfind(*step.expect_error, 0) != 0)
            return fmt::format("expected an error starting with {}, got {}", *step.expect_error, reply.str);
        return {};
    }
    if (reply.is_error()) return "unexpected error: " + reply.str;
    if (step.expect_reply && !reply_matches(reply, *step.expect_reply))
        return fmt::format("expected {}, got {}", *step.expect_reply, reply.to_string());
    if (step.expect_min || step.expect_max) {
        if (reply.type != RedisReply::Type::integer) return "expected an integer reply, got " + reply.to_string();
        if (step.expect_min && reply.integer < *step.expect_min)
            return fmt::format("expected at least {}, got {}", *step.expect_min, reply.integer);
        if (step.expect_max && reply.integer > *step.expect_max)
            return fmt::format("expected at most {}, got {}", *step.expect_max, reply.integer);
    }
    return {};
}

struct RedisSession::Impl {
    RedisSessionTarget target;
    RedisClient client;
    std::set<std::string> touched;  // real key names

    explicit Impl(const RedisSessionTarget& t) : target(t), client(t.endpoint) {}

    // Refuses what could touch data outside the case: a server-wide (@dangerous) command on a
    // server relab did not start.
    std::string refusal(const std::vector<std::string>& argv) {
        if (target.own_server) return {};
        RedisReply info = client.command({"COMMAND", "INFO", argv[0]});
        if (info.type != RedisReply::Type::array || info.elements.empty() || info.elements[0].is_nil())
            return "unknown command " + argv[0];
        const auto& doc = info.elements[0].elements;
        if (doc.size() > 6)
            for (const auto& cat : doc[6].elements)
                if (cat.str == "@dangerous")
                    return fmt::format("{} is a server-wide command (@dangerous); relab runs it only on a server it "
                                       "started itself, not on {}",
                                       to_upper(argv[0]), target.endpoint.display());
        return {};
    }

    std::vector<std::string> namespaced(const std::vector<std::string>& argv) {
        std::vector<std::string> getkeys = {"COMMAND", "GETKEYS"};
        getkeys.insert(getkeys.end(), argv.begin(), argv.end());
        RedisReply keys = client.command(getkeys);
        // An error here means the command takes no keys (or is malformed, which the command
        // itself will then report).
        if (keys.is_error() || keys.type != RedisReply::Type::array) return argv;
        std::vector<std::string> names;
        for (const auto& k : keys.elements) names.push_back(k.str);
        std::vector<std::string> out = argv;
        for (size_t i : key_positions(argv, names)) {
            out[i] = target.prefix + argv[i];
            touched.insert(out[i]);
        }
        return out;
    }
};

RedisSession::RedisSession(const RedisSessionTarget& t) : m_impl(std::make_unique<Impl>(t)) {}
RedisSession::~RedisSession() = default;

void RedisSession::remove_touched_keys() noexcept {
    try {
        for (const auto& key : m_impl->touched) m_impl->client.command({"DEL", key});
    } catch (...) {
        // The server went away: nothing left to remove.
    }
}

StepOutcome RedisSession::run(const std::string& session, const RedisStep& step) {
    StepOutcome out;
    out.session = session;
    out.redis = true;
    out.sql = display_command(step.argv);
    std::vector<std::string> argv;
    for (const auto& a : step.argv) argv.push_back(expand_pads(a));
    const auto started = std::chrono::steady_clock::now();
    try {
        if (std::string why = m_impl->refusal(argv); !why.empty()) {
            out.error = why;
            out.ok = false;
            out.failure = why;
            return out;
        }
        if (step.via_redis_cli) {
            out.sql = "redis-cli " + out.sql;
            std::string printed = run_redis_cli(m_impl->target.endpoint, m_impl->namespaced(argv));
            out.duration_us =
                std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count();
            if (const auto& prefix = m_impl->target.prefix; !prefix.empty())
                for (size_t pos; (pos = printed.find(prefix)) != std::string::npos;) printed.erase(pos, prefix.size());
            if (printed.rfind("(error) ", 0) == 0)
                out.error = printed.substr(8);
            else
                out.tag = printed;
            out.failure = check_cli_output(step, printed);
            out.ok = out.failure.empty();
            return out;
        }
        RedisReply reply = without_prefix(m_impl->client.command(m_impl->namespaced(argv)), m_impl->target.prefix);
        out.duration_us =
            std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count();
        if (reply.is_error())
            out.error = reply.str;
        else
            out.tag = reply.to_string();
        out.failure = check_redis_reply(step, reply);
    } catch (const EnvironmentError&) {
        throw;  // redis-cli missing or silent: the step cannot be judged, the run is an error
    } catch (const std::exception& e) {
        out.error = e.what();
        out.failure = std::string("unexpected error: ") + e.what();
    }
    out.ok = out.failure.empty();
    return out;
}

}  // namespace relab
