// Replays a fuzz target's seed corpus and its regression inputs (inputs that
// once crashed it, kept after the fix) in the normal test suite: every file
// in the folders the environment variable ROSTER_FUZZ_INPUTS names
// (';'-separated) goes through the target's LLVMFuzzerTestOneInput, built
// here without libFuzzer. A failed check aborts the process, which fails the
// test. Compiled once and linked whole into each target's replay program.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::filesystem::path> inputs() {
  std::vector<std::filesystem::path> out;
  const char* env = std::getenv("ROSTER_FUZZ_INPUTS");
  const std::string folders = env != nullptr ? env : "";
  std::size_t start = 0;
  while (start <= folders.size()) {
    const std::size_t end = std::min(folders.find(';', start), folders.size());
    const std::filesystem::path dir = folders.substr(start, end - start);
    std::error_code ec;
    if (!dir.empty() && std::filesystem::is_directory(dir, ec))
      for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.is_regular_file() && e.path().filename().string().front() != '.') out.push_back(e.path());
    start = end + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(fuzz_replay, every_seed_and_regression_input_passes) {
  const auto files = inputs();
  ASSERT_FALSE(files.empty()) << "no inputs in ROSTER_FUZZ_INPUTS='" << (std::getenv("ROSTER_FUZZ_INPUTS") ? std::getenv("ROSTER_FUZZ_INPUTS") : "") << "'";
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    std::ifstream in(f, std::ios::binary);
    ASSERT_TRUE(in.good());
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0);
  }
  std::printf("replayed %zu inputs\n", files.size());
}

}  // namespace
