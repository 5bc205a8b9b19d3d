// An ImageFolder, as torchvision's: one sub-folder per class under the root, class names sorted, each
// class's images found recursively and sorted by path; label = the class's index. JPEG and PNG files
// (.jpg / .jpeg / .png in any case). Only the names are listed here: the images are read while training.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trainbench::data {

struct ImageFolder {
  std::string root;
  std::vector<std::string> classes;  // sorted
  std::vector<std::string> files;    // by class, then path
  std::vector<int64_t> labels;       // files[i]'s class index
};

// True for a name ending in .jpg or .jpeg, any case.
bool is_jpeg_name(const std::string& name);
// True for a name ending in .jpg, .jpeg or .png, any case: the files an image folder lists.
bool is_image_name(const std::string& name);

// Throws DataError naming the path: missing, not a folder, no class folders, or no image at all.
ImageFolder scan_image_folder(const std::string& root);

}  // namespace trainbench::data
