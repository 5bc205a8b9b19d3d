// A flat binary file of token ids (uint16 as nanoGPT's .bin files, or uint32), memory-mapped: the
// kernel pages in only the windows a batch reads, so a file larger than RAM works.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace trainbench::data {

// uint16 | uint32; anything else throws DataError.
int token_width(const std::string& dtype);

class TokenFile {
 public:
  // Throws DataError naming the path: missing, not a regular file, empty, or a size that is not a whole
  // number of tokens.
  TokenFile(const std::string& path, const std::string& dtype);
  ~TokenFile();
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  const std::string& path() const { return path_; }
  int64_t size() const { return tokens_; }  // tokens
  int width() const { return width_; }      // bytes per token
  int64_t at(int64_t i) const {
    return width_ == 2 ? static_cast<const uint16_t*>(base_)[i] : static_cast<const uint32_t*>(base_)[i];
  }

  struct BadToken {
    int64_t offset;  // in tokens
    int64_t value;
  };
  // The first id >= vocab (reads the whole file once); nullopt when every id is below it.
  std::optional<BadToken> first_at_or_above(int64_t vocab) const;
  // Throws DataError "<path>: token id V at offset O (byte B) is not below the vocabulary size N".
  void check_vocab(int64_t vocab) const;

 private:
  std::string path_;
  int width_ = 2;
  void* base_ = nullptr;
  size_t bytes_ = 0;
  int64_t tokens_ = 0;
};

}  // namespace trainbench::data
