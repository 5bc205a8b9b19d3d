// SHA-256 (FIPS 180-4), so a result names exactly which model file ran without a crypto library.
// Not for security: a content fingerprint only.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace trainbench {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  // The digest as 64 lower-case hex digits; the object is spent afterwards.
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string sha256_hex(const std::string& bytes);

// A file's size and SHA-256. Throws std::runtime_error naming the file when it cannot be read.
struct FileDigest {
  int64_t bytes = 0;
  std::string sha256;
};
FileDigest digest_file(const std::string& path);

}  // namespace trainbench
