// Bad input data (a missing or empty folder, a token id beyond the vocabulary): one line naming the
// path, raised before anything runs. The CLI exits 2 on it, as on any other bad input.
#pragma once
#include <stdexcept>

namespace trainbench {

class DataError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace trainbench
