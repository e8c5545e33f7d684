// A plugin whose start-up code ends the process, as a broken or hostile one
// may: it carries the mark of a roster plugin, so roster opens it, and its
// constructor aborts inside dlopen. ROSTER_TRACE must have named the file
// before (hostile_plugins: PluginIsNamedBeforeItsStartUpCodeRuns).
#include <roster/detail/base/plugin_note.hpp>

#include <cstdlib>

ROSTER_IMPL_PLUGIN_NOTE(roster_abort_plugin_note);

namespace {
[[gnu::constructor]] void end_the_process() { std::abort(); }
}  // namespace
