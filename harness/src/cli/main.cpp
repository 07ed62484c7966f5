#include "cli/cli_main.h"

int main(int argc, char** argv) { return relab::cli_main(argc, argv); }
