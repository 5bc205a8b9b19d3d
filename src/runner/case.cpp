#include "runner/case.h"

#include <algorithm>
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

[[noreturn]] void fail(const std::string& input, const std::string& token, const std::string& why) {
  // Point at the bad token under the quoted input.
  const auto pos = input.find(token);
  std::string msg = "bad case descriptor '" + input + "': ";
  msg += token.empty() ? why : "'" + token + "' " + why;
  if (pos != std::string::npos && !token.empty()) {
    msg += " (at column " + std::to_string(pos + 1) + ")";
  }
  throw DescriptorError(msg);
}

}  // namespace

std::string Case::descriptor() const {
  std::string s = model;
  if (!params.empty()) {
    s += ':';
    bool first = true;
    for (const auto& [k, v] : params) {
      if (!first) s += ',';
      s += k + "=" + v;
      first = false;
    }
  }
  s += ":b" + std::to_string(batch) + ":" + precision + ":" + layout;
  if (optimizer != "sgd") s += ":" + optimizer;
  if (threads > 0) s += ":t" + std::to_string(threads);
  if (forward_only) s += ":fwd";
  s += ":" + device.str();
  return s;
}

Case parse_case(const std::string& input) {
  std::vector<std::string> tok = split(input, ':');
  if (tok.size() < 2 || tok[0].empty()) fail(input, "", "expected MODEL:bBATCH:...:DEVICE");
  Case c;
  c.model = tok[0];
  if (c.model.find_first_of("=,") != std::string::npos) fail(input, c.model, "is not a model name");

  // The device is last: "cpu", "cuda", or "cuda" followed by an index token.
  size_t end = tok.size();
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

  bool have_batch = false;
  for (size_t i = 1; i < end; ++i) {
    const std::string& t = tok[i];
    if (t.empty()) fail(input, "", "empty field (two colons in a row)");
    if (t.find('=') != std::string::npos) {
      if (i != 1) fail(input, t, "parameters must follow the model name");
      for (const std::string& kv : split(t, ',')) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size()) fail(input, kv, "is not key=value");
        if (!c.params.emplace(kv.substr(0, eq), kv.substr(eq + 1)).second) fail(input, kv, "repeats a parameter");
      }
    } else if (t[0] == 'b' && t.size() > 1 && std::isdigit(static_cast<unsigned char>(t[1]))) {
      if (!all_digits(t.substr(1)) || std::stoll(t.substr(1)) <= 0) fail(input, t, "is not a batch (bN with N > 0)");
      c.batch = std::stoll(t.substr(1));
      have_batch = true;
    } else if (t[0] == 't' && t.size() > 1 && std::isdigit(static_cast<unsigned char>(t[1]))) {
      if (!all_digits(t.substr(1)) || std::stoi(t.substr(1)) <= 0) fail(input, t, "is not a thread count (tN, N > 0)");
      c.threads = std::stoi(t.substr(1));
    } else if (contains(known_precisions(), t)) {
      c.precision = t;
    } else if (contains(known_layouts(), t)) {
      c.layout = t;
    } else if (contains(known_optimizers(), t)) {
      c.optimizer = t;
    } else if (t == "fwd") {
      c.forward_only = true;
    } else {
      fail(input, t, "is not a batch (bN), precision, layout, optimizer, thread count (tN) or 'fwd'");
    }
  }
  if (!have_batch) fail(input, "", "no batch size (bN)");
  return c;
}

}  // namespace trainbench
