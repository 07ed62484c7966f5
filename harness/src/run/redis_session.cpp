#include "run/redis_session.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <regex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

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
        RedisReply reply = without_prefix(m_impl->client.command(m_impl->namespaced(argv)), m_impl->target.prefix);
        out.duration_us =
            std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count();
        if (reply.is_error())
            out.error = reply.str;
        else
            out.tag = reply.to_string();
        out.failure = check_redis_reply(step, reply);
    } catch (const std::exception& e) {
        out.error = e.what();
        out.failure = std::string("unexpected error: ") + e.what();
    }
    out.ok = out.failure.empty();
    return out;
}

}  // namespace relab
