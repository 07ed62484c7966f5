#include "clients/endpoint.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace relab {

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// Decodes %XX escapes; nullopt on a malformed one.
std::optional<std::string> percent_decode(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out.push_back(s[i]);
            continue;
        }
        int hi = i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
        int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) return std::nullopt;
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

struct UrlParts {
    std::string user;
    std::string password;
    std::string host;
    int port = 0;
    std::string path;  // after the '/' following host[:port], decoded
};

// scheme://[user[:password]@]host[:port][/path]; percent-escapes decoded in user and password.
UrlParts split_url(const std::string& url, const std::vector<std::string>& schemes, int default_port,
                   const std::string& expected) {
    auto fail = [&](const std::string& why) -> EnvironmentError {
        return EnvironmentError("bad URL " + mask_url(url) + ": " + why + " (expected " + expected + ")");
    };
    auto decode = [&](const std::string& s) {
        auto decoded = percent_decode(s);
        if (!decoded) throw fail("bad percent-escape");
        return *decoded;
    };

    auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) throw fail("no scheme");
    std::string scheme = url.substr(0, scheme_end);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::find(schemes.begin(), schemes.end(), scheme) == schemes.end())
        throw fail("unsupported scheme '" + scheme + "'");
    std::string rest = url.substr(scheme_end + 3);

    UrlParts parts;
    // The last '@' ends the user info, so an unescaped '@' in a password still works.
    if (auto at = rest.rfind('@'); at != std::string::npos) {
        std::string userinfo = rest.substr(0, at);
        rest = rest.substr(at + 1);
        auto colon = userinfo.find(':');
        parts.user = decode(userinfo.substr(0, colon));
        if (colon != std::string::npos) parts.password = decode(userinfo.substr(colon + 1));
    }
    auto host_end = rest.find_first_of("/?#");
    std::string hostport = rest.substr(0, host_end);
    std::string tail = host_end == std::string::npos ? "" : rest.substr(host_end);
    if (!tail.empty() && tail[0] != '/') throw fail("query parameters are not supported");
    if (!tail.empty()) parts.path = tail.substr(1);
    if (parts.path.find_first_of("?#") != std::string::npos)
        throw fail("query parameters are not supported");
    parts.path = decode(parts.path);

    std::string port_text;
    if (!hostport.empty() && hostport[0] == '[') {
        auto close = hostport.find(']');
        if (close == std::string::npos) throw fail("unclosed '[' in the host");
        parts.host = hostport.substr(1, close - 1);
        std::string after = hostport.substr(close + 1);
        if (!after.empty()) {
            if (after[0] != ':') throw fail("junk after the host");
            port_text = after.substr(1);
        }
    } else {
        auto colon = hostport.find(':');
        parts.host = hostport.substr(0, colon);
        if (colon != std::string::npos) port_text = hostport.substr(colon + 1);
    }
    if (parts.host.empty()) throw fail("no host");
    parts.port = default_port;
    if (!port_text.empty()) {
        bool digits = port_text.size() <= 5 &&
                      std::all_of(port_text.begin(), port_text.end(),
                                  [](unsigned char c) { return std::isdigit(c); });
        int port = digits ? std::stoi(port_text) : 0;
        if (port < 1 || port > 65535) throw fail("bad port '" + port_text + "'");
        parts.port = port;
    }
    return parts;
}

std::string host_for_url(const std::string& host) {
    return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

std::string quote_conninfo(const std::string& value) {
    std::string out = "'";
    for (char c : value) {
        if (c == '\\' || c == '\'') out.push_back('\\');
        out.push_back(c);
    }
    return out + "'";
}

}  // namespace

std::string mask_url(const std::string& url) {
    auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) return url.find('@') == std::string::npos ? url : "(URL hidden)";
    auto at = url.rfind('@');
    if (at == std::string::npos || at < scheme_end) return url;
    return url.substr(0, scheme_end + 3) + "***" + url.substr(at);
}

std::string RedisEndpoint::display() const {
    return "redis://" + std::string(password.empty() ? "" : ":***@") + host_for_url(host) + ":" +
           std::to_string(port) + "/" + std::to_string(db);
}

std::string PgEndpoint::conninfo() const {
    std::string out;
    auto add = [&](const char* key, const std::string& value) {
        if (value.empty()) return;
        if (!out.empty()) out += ' ';
        out += std::string(key) + "=" + quote_conninfo(value);
    };
    add("host", host);
    add("port", port > 0 ? std::to_string(port) : "");
    add("user", user);
    add("password", password);
    add("dbname", dbname);
    return out;
}

std::string PgEndpoint::display() const {
    std::string userinfo = user;
    if (!password.empty()) userinfo += ":***";
    if (!userinfo.empty()) userinfo += "@";
    return "postgresql://" + userinfo + host_for_url(host) + ":" + std::to_string(port) + "/" + dbname;
}

RedisEndpoint parse_redis_url(const std::string& url) {
    const std::string expected = "redis://[:password@]host[:port][/db]";
    UrlParts parts = split_url(url, {"redis"}, 6379, expected);
    if (!parts.user.empty() && parts.user != "default")
        throw EnvironmentError("bad URL " + mask_url(url) +
                               ": ACL user names other than 'default' are not supported (expected " +
                               expected + ")");
    RedisEndpoint ep;
    ep.host = parts.host;
    ep.port = parts.port;
    ep.password = parts.password;
    if (!parts.path.empty()) {
        bool digits = parts.path.size() <= 4 && std::all_of(parts.path.begin(), parts.path.end(),
                                                            [](unsigned char c) { return std::isdigit(c); });
        if (!digits)
            throw EnvironmentError("bad URL " + mask_url(url) + ": the path must be a database number (expected " +
                                   expected + ")");
        ep.db = std::stoi(parts.path);
    }
    return ep;
}

namespace {

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> out;
    size_t from = 0;
    for (;;) {
        const size_t comma = text.find(',', from);
        out.push_back(text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
        if (comma == std::string::npos) return out;
        from = comma + 1;
    }
}

// "host" or "[v6]" without a port gets the default one; "host:port" and "[v6]:port" keep theirs.
std::string with_port(const std::string& host, int port) {
    const bool has_port = host.back() == ']' ? false : host.find(':') != std::string::npos;
    return has_port ? host : host + ":" + std::to_string(port);
}

}  // namespace

RedisUrl parse_redis_topology_url(const std::string& url) {
    const size_t scheme_end = url.find("://");
    std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
    std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    RedisUrl out;
    if (scheme != "redis+sentinel" && scheme != "redis+cluster") {
        out.single = parse_redis_url(url);
        out.password = out.single.password;
        out.db = out.single.db;
        return out;
    }
    const bool sentinel = scheme == "redis+sentinel";
    out.kind = sentinel ? RedisUrl::Kind::sentinel : RedisUrl::Kind::cluster;
    const std::string expected = sentinel ? "redis+sentinel://[:password@]host:port[,host:port...]/master-name[/db]"
                                          : "redis+cluster://[:password@]host:port[,host:port...]";
    auto fail = [&](const std::string& why) {
        return EnvironmentError("bad URL " + mask_url(url) + ": " + why + " (expected " + expected + ")");
    };
    const std::string rest = url.substr(scheme_end + 3);
    const size_t path_at = rest.find('/');
    std::string authority = rest.substr(0, path_at);
    const std::string path = path_at == std::string::npos ? "" : rest.substr(path_at + 1);
    std::string userinfo;
    if (const size_t at = authority.rfind('@'); at != std::string::npos) {
        userinfo = authority.substr(0, at + 1);
        authority = authority.substr(at + 1);
    }
    // Each host through the single-instance parser: the same checks of hosts, ports and passwords.
    for (const std::string& host : split_commas(authority)) {
        if (host.empty()) throw fail("an empty host in the list");
        RedisEndpoint ep;
        try {
            ep = parse_redis_url("redis://" + userinfo + with_port(host, sentinel ? 26379 : 6379));
        } catch (const EnvironmentError&) {
            throw fail("bad host '" + host + "'");
        }
        out.password = ep.password;
        if (sentinel) ep.password.clear();  // the sentinels are asked without the data servers' password
        out.nodes.push_back(ep);
    }
    const size_t slash = path.find('/');
    const std::string db = slash == std::string::npos ? (sentinel ? "" : path) : path.substr(slash + 1);
    if (sentinel) out.master_name = path.substr(0, slash);
    if (sentinel && out.master_name.empty()) throw fail("no master name");
    if (!sentinel && slash != std::string::npos) throw fail("a cluster has no path but its database 0");
    if (!db.empty() && (db.size() > 4 || !std::all_of(db.begin(), db.end(), [](unsigned char c) { return std::isdigit(c); })))
        throw fail("the database must be a number");
    out.db = db.empty() ? 0 : std::stoi(db);
    if (!sentinel && out.db != 0) throw fail("a Redis Cluster has database 0 only");
    return out;
}

PgEndpoint parse_pg_url(const std::string& url) {
    const std::string expected = "postgresql://[user[:password]@]host[:port]/dbname";
    UrlParts parts = split_url(url, {"postgresql", "postgres"}, 5432, expected);
    if (parts.path.empty() || parts.path.find('/') != std::string::npos)
        throw EnvironmentError("bad URL " + mask_url(url) + ": it must name one database (expected " + expected + ")");
    PgEndpoint ep;
    ep.host = parts.host;
    ep.port = parts.port;
    ep.user = parts.user;
    ep.password = parts.password;
    ep.dbname = parts.path;
    return ep;
}

}  // namespace relab
