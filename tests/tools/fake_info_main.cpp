// roster-info with the tools suite's test backends linked in.
#include "info.hpp"

int main(int argc, char** argv) { return roster::info::main(argc, argv); }
