// A password given in a URL on relab's command line (--redis-url redis://:pw@…) is visible to every
// user of the machine in /proc/<pid>/cmdline and `ps` while relab runs, and in the argv its forks
// inherit before they exec. main() overwrites it in place, first thing, after taking its own copy.
#pragma once

namespace relab {

// Replaces, in place, every character of the password in each argument that holds a URL with
// user info (scheme://user:password@host…, also --flag=scheme://…) by '*'. Lengths stay as they
// are (the kernel's view of argv is a fixed block of memory). Returns how many were hidden.
int hide_url_passwords(int argc, char** argv);

}  // namespace relab
