#include "data/image_folder.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "data/data_error.h"

namespace fs = std::filesystem;

namespace trainbench::data {

namespace {

std::string lower_extension(const std::string& name) {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return "";
  std::string ext = name.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}

// Whether the directory link `link` points at a folder that contains it, or at itself.
bool links_upward(const fs::path& link) {
  std::error_code ec;
  const fs::path target = fs::canonical(link, ec);
  if (ec) return true;  // a dangling or looping link: nothing to enter
  const fs::path here = fs::canonical(link.parent_path(), ec);
  if (ec) return true;
  auto t = target.begin(), h = here.begin();
  for (; t != target.end() && h != here.end(); ++t, ++h) {
    if (*t != *h) return false;
  }
  return t == target.end();  // every part of the target starts the link's own folder
}

}  // namespace

bool is_jpeg_name(const std::string& name) {
  const std::string ext = lower_extension(name);
  return ext == "jpg" || ext == "jpeg";
}

bool is_image_name(const std::string& name) { return is_jpeg_name(name) || lower_extension(name) == "png"; }

// What a path that is not a folder is, in a user's words.
static std::string file_kind(const fs::file_status& st) {
  switch (st.type()) {
    case fs::file_type::regular:
      return "a file";
    case fs::file_type::fifo:
      return "a FIFO (named pipe)";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::block:
    case fs::file_type::character:
      return "a device";
    default:
      return "not a file";
  }
}

ImageFolder scan_image_folder(const std::string& root) {
  std::error_code ec;
  const auto st = fs::status(root, ec);
  if (ec || !fs::exists(st)) throw DataError("--data " + root + ": no such file or folder");
  if (!fs::is_directory(st)) throw DataError("--data " + root + ": " + file_kind(st) + ", not a folder");
  ImageFolder f;
  f.root = root;
  for (const auto& e : fs::directory_iterator(root, fs::directory_options::follow_directory_symlink, ec)) {
    std::error_code entry_ec;  // an entry that cannot be followed (a link loop, a dangling link) is no class
    if (e.is_directory(entry_ec)) f.classes.push_back(e.path().filename().string());
  }
  if (ec) throw DataError("--data " + root + ": " + ec.message());
  std::sort(f.classes.begin(), f.classes.end());
  if (f.classes.empty()) {
    throw DataError("--data " + root + ": no class folders (ImageFolder layout: ROOT/CLASS/IMAGE.jpg)");
  }
  for (size_t c = 0; c < f.classes.size(); ++c) {
    std::vector<std::string> found;
    const fs::path dir = fs::path(root) / f.classes[c];
    for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::follow_directory_symlink, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      std::error_code entry_ec;  // an entry that cannot be read is no image; it never ends the scan
      // A link to a folder that holds it (or to itself) would be followed forever: it is not entered.
      if (it->is_symlink(entry_ec) && it->is_directory(entry_ec) && links_upward(it->path())) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(entry_ec) && is_image_name(it->path().filename().string()))
        found.push_back(it->path().string());
    }
    if (ec) throw DataError("--data " + dir.string() + ": " + ec.message());
    // torchvision's ImageFolder refuses a class without a file too: its label would never be trained.
    if (found.empty()) throw DataError("--data " + dir.string() + ": a class folder with no .jpg, .jpeg or .png file");
    std::sort(found.begin(), found.end());
    for (auto& p : found) {
      f.files.push_back(std::move(p));
      f.labels.push_back(static_cast<int64_t>(c));
    }
  }
  if (f.files.empty()) throw DataError("--data " + root + ": no .jpg, .jpeg or .png files in its class folders");
  return f;
}

}  // namespace trainbench::data
