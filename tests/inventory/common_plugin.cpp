// The plugin of test_same_static: links the common static library whole.
/// Lets the test find which module an entry lives in.
extern "C" __attribute__((visibility("default"))) int inv_common_plugin_marker() { return 1; }
