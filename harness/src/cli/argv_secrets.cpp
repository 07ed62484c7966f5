#include "cli/argv_secrets.h"

#include <cstring>
#include <string_view>

namespace relab {

int hide_url_passwords(int argc, char** argv) {
    int hidden = 0;
    for (int i = 1; i < argc; ++i) {
        char* arg = argv[i];
        for (char* scheme_end = std::strstr(arg, "://"); scheme_end; scheme_end = std::strstr(scheme_end + 3, "://")) {
            char* user_info = scheme_end + 3;
            // The authority ends at the first '/', '?' or '#'; the user info at its last '@'
            // (an unescaped '@' in a password still works, as parse_redis_url reads it).
            const size_t authority_len = std::strcspn(user_info, "/?#");
            const std::string_view authority(user_info, authority_len);
            const size_t at = authority.rfind('@');
            if (at == std::string_view::npos) continue;
            const size_t colon = authority.substr(0, at).find(':');
            if (colon == std::string_view::npos || colon + 1 == at) continue;
            for (size_t k = colon + 1; k < at; ++k) user_info[k] = '*';
            ++hidden;
        }
    }
    return hidden;
}

}  // namespace relab
