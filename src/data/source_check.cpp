#include "data/source_check.h"

#include <filesystem>
#include <map>
#include <mutex>

#include "data/data_error.h"
#include "data/image_folder.h"
#include "data/token_file.h"

namespace trainbench::data {

void check_data_source(const std::string& model, DataKind kind, const std::string& data,
                       const std::string& dtype, std::optional<int64_t> vocab) {
  if (data == "synthetic") return;
  if (kind == DataKind::none) throw DataError("--data " + data + ": " + model + " trains on synthetic data only");
  static std::mutex mu;
  static std::map<std::string, int64_t> largest_id;  // token files already read: their largest id
  static std::map<std::string, bool> folders;        // image folders already scanned
  std::lock_guard<std::mutex> lock(mu);
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(data, ec);
  if (kind == DataKind::images) {
    if (dtype != "uint16") {  // uint16 is the default: only another value was asked for
      throw DataError("--data " + data + ": --data-dtype " + dtype + " is for token files; " + model +
                      " trains on images");
    }
    if (!is_dir && std::filesystem::exists(data, ec)) {
      throw DataError("--data " + data + ": " + model + " trains on images: give a folder of class folders of JPEGs");
    }
    if (!folders.count(data)) {
      (void)scan_image_folder(data);  // throws naming the path
      folders[data] = true;
    }
    return;
  }
  if (is_dir) throw DataError("--data " + data + ": " + model + " trains on tokens: give a token file, not a folder");
  const std::string key = data + "|" + dtype;
  if (!largest_id.count(key)) {
    largest_id[key] = TokenFile(data, dtype).largest_id();
  }
  if (vocab && largest_id[key] >= *vocab) TokenFile(data, dtype).check_vocab(*vocab);  // finds the first bad one
}

}  // namespace trainbench::data
