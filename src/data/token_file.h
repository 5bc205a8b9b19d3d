// A flat binary file of token ids (uint16 as nanoGPT's .bin files, or uint32), memory-mapped: the
// kernel pages in only the windows a batch reads, so a file larger than RAM works. Every read of the
// mapping goes through read(), which survives the file being truncated under it.
#pragma once
#include <cstdint>
#include <functional>
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
  // Copies tokens [from, from + n) into `out`. Throws DataError when the file shrank under the
  // mapping since it was opened (a read past its new end raises SIGBUS; every read of the mapping is
  // guarded, so that becomes this error instead of the end of the process).
  void read(int64_t from, int64_t n, int64_t* out) const;

  struct BadToken {
    int64_t offset;  // in tokens
    int64_t value;
  };
  // The largest id in the file (reads the whole file once).
  int64_t largest_id() const;
  // The first id >= vocab (reads the whole file once); nullopt when every id is below it.
  std::optional<BadToken> first_at_or_above(int64_t vocab) const;
  // Throws DataError "<path>: token id V at offset O (byte B) is not below the vocabulary size N".
  void check_vocab(int64_t vocab) const;

 private:
  // Calls `visit(from, ids, n)` on the file's ids in order, chunk by chunk, until it returns false.
  void scan(const std::function<bool(int64_t, const int64_t*, int64_t)>& visit) const;

  std::string path_;
  int width_ = 2;
  void* base_ = nullptr;
  size_t bytes_ = 0;
  int64_t tokens_ = 0;
};

}  // namespace trainbench::data
