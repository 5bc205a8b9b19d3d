#include "runner/case.h"

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
[[noreturn]] void fail_at_column(const std::string& input, const std::string& token, size_t column, const std::string& why) {
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
  s += ":b" + std::to_string(batch) + ":" + precision + ":" + layout;
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

Case parse_case(const std::string& input) {
  std::vector<std::string> tok = split(input, ':');
  if (tok.size() < 2 || tok[0].empty()) fail(input, "", "expected MODEL:bBATCH:...:DEVICE");
  // Column (1-based) where each token starts, to point at an empty or repeated field.
  std::vector<size_t> column(tok.size());
  for (size_t i = 0, at = 1; i < tok.size(); at += tok[i].size() + 1, ++i) column[i] = at;
  Case c;
  c.model = tok[0];
  if (c.model.find_first_of("=,") != std::string::npos) fail(input, c.model, "is not a model name");

  // The device is last: "cpu", "cuda", or "cuda" followed by an index token.
  size_t end = tok.size();
  if (tok[end - 1].empty()) {
    fail_at_column(input, "", column[end - 1], "empty field after the last ':' (the device comes last)");
  }
  std::string dev = tok[end - 1];
  if (end >= 3 && all_digits(tok[end - 1]) && tok[end - 2] == "cuda") {
    dev = "cuda:" + tok[end - 1];
    end -= 2;
  } else {
    end -= 1;
  }
  try {
    c.device = parse_device(dev);
  } catch (const std::invalid_argument&) {
    fail(input, dev, "is not a device (cpu, cuda or cuda:N) — the device comes last");
  }

  // Each kind of field at most once: a second one (":b8:b16:", ":nchw:nhwc:", ":fwd:fwd:") is refused
  // where it stands, naming the first.
  std::map<std::string, size_t> seen;  // field kind -> its token index
  auto once = [&](const std::string& kind, size_t i) {
    auto [it, fresh] = seen.emplace(kind, i);
    if (!fresh) {
      fail_at_column(input, tok[i], column[i],
                     "repeats the " + kind + " (already '" + tok[it->second] + "' at column " +
                         std::to_string(column[it->second]) + ")");
    }
  };
  bool have_batch = false;
  for (size_t i = 1; i < end; ++i) {
    const std::string& t = tok[i];
    if (t.empty()) {
      fail_at_column(input, "", column[i], "empty field (two colons in a row)");
    }
    // Real data (data=PATH, data-dtype=uint32, loader=N) before workload parameters: these are not
    // parameters; PATH is percent-escaped as parameter values are.
    if (t.rfind("data=", 0) == 0) {
      once("data source", i);
      try {
        c.data = unescape_param_value(t.substr(5));
      } catch (const std::invalid_argument& e) {
        fail_at_column(input, t, column[i], std::string("has a bad escape: ") + e.what() + " (write '%' as %25)");
      }
      if (c.data.empty() || c.data == "synthetic") fail_at_column(input, t, column[i], "names no data path");
    } else if (t.rfind("data-dtype=", 0) == 0) {
      once("data dtype", i);
      c.data_dtype = t.substr(11);
      if (c.data_dtype != "uint16" && c.data_dtype != "uint32") {
        fail_at_column(input, t, column[i], "is not a token dtype (data-dtype=uint16 or data-dtype=uint32)");
      }
    } else if (t.rfind("transfer=", 0) == 0) {
      once("data transfer", i);
      c.data_transfer = t.substr(9);
      if (c.data_transfer != "float" && c.data_transfer != "uint8") {
        fail_at_column(input, t, column[i], "is not a data transfer (transfer=float or transfer=uint8)");
      }
    } else if (t.rfind("loader=", 0) == 0) {
      once("loader thread count", i);
      const std::string n = t.substr(7);
      if (!all_digits(n) || n.size() > 5 || std::stoi(n) < 1 || std::stoi(n) > static_cast<int>(kThreadCount.hi)) {
        fail_at_column(input, t, column[i], fmt::format("is not a loader thread count (loader=N with N between 1 and {})", kThreadCount.hi));
      }
      c.loader_threads = std::stoi(n);
    } else if (t.find('=') != std::string::npos) {
      if (i != 1) fail_at_column(input, t, column[i], "parameters must follow the model name");
      for (const std::string& kv : split(t, ',')) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size()) fail(input, kv, "is not key=value");
        std::string value;
        try {
          value = unescape_param_value(kv.substr(eq + 1));
        } catch (const std::invalid_argument& e) {
          fail(input, kv, std::string("has a bad escape: ") + e.what() + " (write '%' as %25)");
        }
        if (!c.params.emplace(kv.substr(0, eq), value).second) fail(input, kv, "repeats a parameter");
      }
    } else if (t[0] == 'b' && t.size() > 1 && std::isdigit(static_cast<unsigned char>(t[1]))) {
      once("batch", i);
      if (!all_digits(t.substr(1)) || std::stoll(t.substr(1)) <= 0) fail_at_column(input, t, column[i], "is not a batch (bN with N > 0)");
      c.batch = std::stoll(t.substr(1));
      have_batch = true;
    } else if (t[0] == 't' && t.size() > 1 && std::isdigit(static_cast<unsigned char>(t[1]))) {
      once("thread count", i);
      const std::string n = t.substr(1);
      if (!all_digits(n) || n.size() > 5 || std::stoi(n) < 1 || std::stoi(n) > static_cast<int>(kThreadCount.hi)) {
        fail_at_column(input, t, column[i], fmt::format("is not a thread count (tN with N between 1 and {})", kThreadCount.hi));
      }
      c.threads = std::stoi(n);
    } else if (contains(known_precisions(), t)) {
      once("precision", i);
      c.precision = t;
    } else if (contains(known_layouts(), t)) {
      once("layout", i);
      c.layout = t;
    } else if (contains(known_optimizers(), t)) {
      once("optimizer", i);
      c.optimizer = t;
    } else if (t == "fwd") {
      once("'fwd' flag", i);
      c.forward_only = true;
    } else {
      fail_at_column(input, t, column[i], "is not a batch (bN), precision, layout, optimizer, thread count (tN) or 'fwd'");
    }
  }
  if (!have_batch) fail(input, "", "no batch size (bN)");
  if (c.synthetic_data() && (seen.count("data dtype") || seen.count("loader thread count") || seen.count("data transfer"))) {
    fail(input, "", "data-dtype=, loader= and transfer= need a data=PATH");
  }
  return c;
}

}  // namespace trainbench
