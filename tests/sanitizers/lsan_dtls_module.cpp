// A module opened with dlopen whose thread_local data is 8 bytes: each
// thread's block of it is a dynamic TLS block that ASan's malloc places
// 16 bytes past a page, the placement that GCC 12's runtime misreads
// (lsan_dtls.cpp).
extern "C" __attribute__((visibility("default"))) char* roster_test_dtls_touch() {
  static thread_local char eight[8];
  eight[0] = 1;
  return eight;
}
