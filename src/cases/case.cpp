#include "cases/case.h"

#include "core/value_rules.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <sstream>
#include <vector>

namespace trainbench {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 12 && s.find_first_not_of("0123456789") == std::string::npos;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

// Points at the bad token under the quoted input: `column` is 1-based; 0 leaves the column out.
[[noreturn]] void fail_at_column(const std::string& input, const std::string& token, size_t column,
                                 const std::string& why) {
  std::string msg = "bad case descriptor '" + input + "': ";
  msg += token.empty() ? why : "'" + token + "' " + why;
  if (column > 0) msg += " (at column " + std::to_string(column) + ")";
  throw DescriptorError(msg);
}

[[noreturn]] void fail(const std::string& input, const std::string& token, const std::string& why) {
  const auto pos = token.empty() ? std::string::npos : input.find(token);
  fail_at_column(input, token, pos == std::string::npos ? 0 : pos + 1, why);
}

}  // namespace

std::string escape_param_value(const std::string& value) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const char ch : value) {
    const auto u = static_cast<unsigned char>(ch);
    if (u == '%' || u == ':' || u == ',' || u == '=' || u == ' ' || u < 0x20 || u == 0x7f) {
      out += '%';
      out += hex[u >> 4];
      out += hex[u & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string unescape_param_value(const std::string& text) {
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) throw std::invalid_argument("'%' not followed by two hex digits");
    const int hi = digit(text[i + 1]), lo = digit(text[i + 2]);
    if (hi < 0 || lo < 0) throw std::invalid_argument("'%' not followed by two hex digits");
    // A NUL would cut a path or a name where it is used as a C string.
    if (hi == 0 && lo == 0) throw std::invalid_argument("'%00' (a NUL byte) is not allowed");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string Case::descriptor() const {
  std::string s = model;
  if (!params.empty()) {
    s += ':';
    bool first = true;
    for (const auto& [k, v] : params) {
      if (!first) s += ',';
      s += k + "=" + escape_param_value(v);
      first = false;
    }
  }
  s += ":b" + std::to_string(batch) + ":" + precision.str() + ":" + to_string(layout);
  if (optimizer != "sgd") s += ":" + optimizer;
  if (threads > 0) s += ":t" + std::to_string(threads);
  if (!synthetic_data()) {
    s += ":data=" + escape_param_value(data);
    if (data_dtype != "uint16") s += ":data-dtype=" + data_dtype;
    if (loader_threads > 0) s += ":loader=" + std::to_string(loader_threads);
    if (data_transfer != "float") s += ":transfer=" + data_transfer;
  }
  if (forward_only) s += ":fwd";
  s += ":" + device.str();
  return s;
}

namespace {

// parse_case's steps over one descriptor: split at ':', take the device from the end, read each
// field between the model and the device, then the checks that need every field.
class CaseParser {
 public:
  explicit CaseParser(const std::string& input) : input_(input), tok_(split(input, ':')), column_(tok_.size()) {
    // Column (1-based) where each token starts, to point at an empty or repeated field.
    for (size_t i = 0, at = 1; i < tok_.size(); at += tok_[i].size() + 1, ++i) column_[i] = at;
  }

  Case parse() {
    if (tok_.size() < 2 || tok_[0].empty()) fail(input_, "", "expected MODEL:bBATCH:...:DEVICE");
    c_.model = tok_[0];
    if (c_.model.find_first_of("=,") != std::string::npos) fail(input_, c_.model, "is not a model name");
    const size_t end = read_device();
    for (size_t i = 1; i < end; ++i) read_field(i);
    check_complete();
    return c_;
  }

 private:
  [[noreturn]] void fail_token(size_t i, const std::string& why) const {
    fail_at_column(input_, tok_[i], column_[i], why);
  }

  // Each kind of field at most once: a second one (":b8:b16:", ":nchw:nhwc:", ":fwd:fwd:") is refused
  // where it stands, naming the first.
  void once(const std::string& kind, size_t i) {
    auto [it, fresh] = seen_.emplace(kind, i);
    if (!fresh) {
      fail_token(i, "repeats the " + kind + " (already '" + tok_[it->second] + "' at column " +
                        std::to_string(column_[it->second]) + ")");
    }
  }

  // The device is last: a device kind's name, or an indexed kind's name followed by an index token.
  // Returns the index of the device's first token.
  size_t read_device() {
    size_t end = tok_.size();
    if (tok_[end - 1].empty()) {
      fail_at_column(input_, "", column_[end - 1], "empty field after the last ':' (the device comes last)");
    }
    std::string dev = tok_[end - 1];
    const DeviceTextKind* indexed = end >= 3 ? device_text_kind_of(tok_[end - 2]) : nullptr;
    if (indexed != nullptr && indexed->indexed && all_digits(tok_[end - 1])) {
      dev = tok_[end - 2] + ":" + tok_[end - 1];
      end -= 2;
    } else {
      end -= 1;
    }
    try {
      c_.device = parse_device(dev);
    } catch (const std::invalid_argument&) {
      fail(input_, dev, "is not a device (" + device_choices() + ") — the device comes last");
    }
    return end;
  }

  void read_field(size_t i) {
    const std::string& t = tok_[i];
    if (t.empty()) fail_at_column(input_, "", column_[i], "empty field (two colons in a row)");
    // Real data (data=PATH, data-dtype=uint32, loader=N) before workload parameters: these are not
    // parameters; PATH is percent-escaped as parameter values are.
    if (read_data_field(i)) return;
    if (t.find('=') != std::string::npos) {
      read_params(i);
    } else if (t[0] == 'b' && t.size() > 1 && std::isdigit(static_cast<unsigned char>(t[1]))) {
      once("batch", i);
      if (!all_digits(t.substr(1)) || std::stoll(t.substr(1)) <= 0) fail_token(i, "is not a batch (bN with N > 0)");
      c_.batch = std::stoll(t.substr(1));
      have_batch_ = true;
    } else if (t[0] == 't' && t.size() > 1 && std::isdigit(static_cast<unsigned char>(t[1]))) {
      once("thread count", i);
      c_.threads = thread_count(i, t.substr(1), "is not a thread count (tN with N between 1 and {})");
    } else if (!read_word(i)) {
      fail_token(i, "is not a batch (bN), precision, layout, optimizer, thread count (tN) or 'fwd'");
    }
  }

  // A thread count between 1 and kThreadCount's upper bound, else `why` (with the bound in its {}).
  int thread_count(size_t i, const std::string& n, const char* why) const {
    if (!all_digits(n) || n.size() > 5 || std::stoi(n) < 1 || std::stoi(n) > static_cast<int>(kThreadCount.hi)) {
      fail_token(i, fmt::format(fmt::runtime(why), kThreadCount.hi));
    }
    return std::stoi(n);
  }

  // data=PATH, data-dtype=, transfer=, loader=; false for any other field.
  bool read_data_field(size_t i) {
    const std::string& t = tok_[i];
    if (t.rfind("data=", 0) == 0) {
      once("data source", i);
      try {
        c_.data = unescape_param_value(t.substr(5));
      } catch (const std::invalid_argument& e) {
        fail_token(i, std::string("has a bad escape: ") + e.what() + " (write '%' as %25)");
      }
      if (c_.data.empty() || c_.data == "synthetic") fail_token(i, "names no data path");
    } else if (t.rfind("data-dtype=", 0) == 0) {
      once("data dtype", i);
      c_.data_dtype = t.substr(11);
      if (c_.data_dtype != "uint16" && c_.data_dtype != "uint32") {
        fail_token(i, "is not a token dtype (data-dtype=uint16 or data-dtype=uint32)");
      }
    } else if (t.rfind("transfer=", 0) == 0) {
      once("data transfer", i);
      c_.data_transfer = t.substr(9);
      if (c_.data_transfer != "float" && c_.data_transfer != "uint8") {
        fail_token(i, "is not a data transfer (transfer=float or transfer=uint8)");
      }
    } else if (t.rfind("loader=", 0) == 0) {
      once("loader thread count", i);
      c_.loader_threads =
          thread_count(i, t.substr(7), "is not a loader thread count (loader=N with N between 1 and {})");
    } else {
      return false;
    }
    return true;
  }

  // key=value[,key=value...] right after the model name; values are percent-escaped.
  void read_params(size_t i) {
    if (i != 1) fail_token(i, "parameters must follow the model name");
    for (const std::string& kv : split(tok_[i], ',')) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size()) fail(input_, kv, "is not key=value");
      std::string value;
      try {
        value = unescape_param_value(kv.substr(eq + 1));
      } catch (const std::invalid_argument& e) {
        fail(input_, kv, std::string("has a bad escape: ") + e.what() + " (write '%' as %25)");
      }
      if (!c_.params.emplace(kv.substr(0, eq), value).second) fail(input_, kv, "repeats a parameter");
    }
  }

  // A precision, layout, optimizer or the 'fwd' flag; false for any other word.
  bool read_word(size_t i) {
    const std::string& t = tok_[i];
    if (is_precision(t)) {
      once("precision", i);
      c_.precision = parse_precision(t);
    } else if (is_layout(t)) {
      once("layout", i);
      c_.layout = parse_layout(t);
    } else if (contains(known_optimizers(), t)) {
      once("optimizer", i);
      c_.optimizer = t;
    } else if (t == "fwd") {
      once("'fwd' flag", i);
      c_.forward_only = true;
    } else {
      return false;
    }
    return true;
  }

  void check_complete() const {
    if (!have_batch_) fail(input_, "", "no batch size (bN)");
    const bool data_fields =
        seen_.count("data dtype") || seen_.count("loader thread count") || seen_.count("data transfer");
    if (c_.synthetic_data() && data_fields) fail(input_, "", "data-dtype=, loader= and transfer= need a data=PATH");
  }

  const std::string& input_;
  std::vector<std::string> tok_;
  std::vector<size_t> column_;
  std::map<std::string, size_t> seen_;  // field kind -> its token index
  Case c_;
  bool have_batch_ = false;
};

}  // namespace

Case parse_case(const std::string& input) { return CaseParser(input).parse(); }

const std::vector<std::string>& known_optimizers() {
  static const std::vector<std::string> v = {"sgd", "momentum", "adam", "adamw"};
  return v;
}

}  // namespace trainbench
