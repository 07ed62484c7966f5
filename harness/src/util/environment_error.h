// The error of a machine or a server relab cannot work with, apart from relab's own bugs
// (std::logic_error) and a lab's broken expectations.
#pragma once

#include <stdexcept>

namespace relab {

// The machine lacks something relab needs, or a server did not come up. The message says what to
// do (install a package, free a port, check a URL). Maps to exit status 2.
class EnvironmentError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace relab
