// The program whose start-up inventory_startup times: main returns at once.
// Built twice, with 10,000 generated entries linked whole and with none;
// both link libroster (the call below is never made, it keeps the library).
#include <roster/inventory.hpp>

int main(int argc, char**) { return argc > 99 ? static_cast<int>(roster::inventory_collections()) : 0; }
