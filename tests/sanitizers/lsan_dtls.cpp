// LeakSanitizer's check beside threads holding a dlopened module's dynamic
// TLS, under the ASAN_OPTIONS scripts/test gives the ASan suite. With GCC
// 12's runtime and __tls_get_addr intercepted (the default), a block 16 bytes
// past a page is taken for glibc 2.19's layout, a bogus range is read before
// it, and LSan's tracer dies: "Tracer caught signal 11 ... LeakSanitizer has
// encountered a fatal error", exit 1, every run. That happened by chance in
// CI's opencl_backend (PoCL's and LLVM's TLS); scripts/test sets
// intercept_tls_get_addr=0, and this check must pass under it.
// Usage: lsan_dtls MODULE
#include <sanitizer/lsan_interface.h>

#include <dlfcn.h>
#include <pthread.h>

#include <cstdint>
#include <cstdio>

namespace {

char* (*touch)() = nullptr;
pthread_barrier_t gate;
int page_offset_16 = 0;

void* worker(void*) {
  char* mine = touch();  // this thread's dynamic TLS block of the module
  if (reinterpret_cast<std::uintptr_t>(mine) % 4096 == 16) __atomic_add_fetch(&page_offset_16, 1, __ATOMIC_RELAXED);
  pthread_barrier_wait(&gate);  // alive while the check runs
  pthread_barrier_wait(&gate);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lsan_dtls MODULE\n");
    return 2;
  }
  void* module = dlopen(argv[1], RTLD_NOW);
  if (module == nullptr) {
    std::fprintf(stderr, "lsan_dtls: %s\n", dlerror());
    return 2;
  }
  touch = reinterpret_cast<char* (*)()>(dlsym(module, "roster_test_dtls_touch"));
  if (touch == nullptr) return 2;
  constexpr int threads = 8;
  pthread_t t[threads];
  pthread_barrier_init(&gate, nullptr, threads + 1);
  for (auto& th : t) pthread_create(&th, nullptr, worker, nullptr);
  pthread_barrier_wait(&gate);
  std::printf("lsan_dtls: %d of %d threads' blocks 16 bytes past a page\n", page_offset_16, threads);
  std::fflush(stdout);
  __lsan_do_leak_check();  // dies here when the runtime misreads the blocks
  pthread_barrier_wait(&gate);
  for (auto& th : t) pthread_join(th, nullptr);
  std::printf("lsan_dtls: the leak check ran beside them\n");
  return 0;
}
