// roster-info: see what a node has, and measure it.

#include "info.hpp"

int main(int argc, char** argv) { return roster::info::main(argc, argv); }
