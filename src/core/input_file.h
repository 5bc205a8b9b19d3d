// Files a user names as inputs (results files, journals, suite files): anything that is not a regular
// file is refused at once. Opening a FIFO for reading would block until a writer came, a device such as
// /dev/zero never ends, and a directory reads as nothing; each says so in one line instead.
#pragma once
#include <string>

namespace trainbench {

// "" for a regular file; else "no such file", "is a directory", "is not a regular file (a FIFO)", ...
// Never blocks.
std::string input_file_problem(const std::string& path);

// The whole file. Throws std::runtime_error "<path>: <problem>" (input_file_problem's words, or the
// reason it could not be read). Never blocks on a FIFO: it is refused before it is read.
std::string read_input_file(const std::string& path);

// True when `a` and `b` name the same file (the same inode when both exist, else the same path once
// made absolute and normalised): an output that would overwrite an input.
bool same_file(const std::string& a, const std::string& b);

}  // namespace trainbench
