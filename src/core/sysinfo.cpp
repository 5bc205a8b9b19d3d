// collect_system_info: reads the machine (/proc, uname, /etc/os-release), the LibTorch build
// (TORCH_VERSION, at::show_config, the BLAS mapped into this process) and the device.
#include "core/sysinfo.h"
#include "core/value_rules.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include <ATen/Version.h>
#include <torch/torch.h>
#include <torch/version.h>

#if defined(TRAINBENCH_WITH_CUDA) && !defined(TRAINBENCH_WITH_HIP)
#include <ATen/cuda/CUDAContext.h>
#include <torch/csrc/cuda/nccl.h>
#endif

#include "core/device.h"
#include "core/gpu_clock.h"

namespace trainbench {

namespace detail {

std::optional<std::string> version_after(const std::string& text, const std::string& label) {
  const std::regex re(label + R"(\s+v?([0-9]+(\.[0-9]+)*))");
  std::smatch m;
  if (std::regex_search(text, m, re)) return m[1].str();
  return std::nullopt;
}

std::optional<std::string> build_setting(const std::string& show_config, const std::string& key) {
  const std::regex re("[ ,]" + key + "=([^,\\s]+)");
  std::smatch m;
  if (std::regex_search(show_config, m, re)) return m[1].str();
  return std::nullopt;
}

std::string nccl_version_from_packed(uint64_t packed) {
  return std::to_string(packed >> 32) + "." + std::to_string((packed >> 16) & 0xffff) + "." +
         std::to_string(packed & 0xffff);
}

std::optional<std::string> gpu_runtime_from_config(const std::string& show_config) {
  if (auto v = version_after(show_config, "HIP Runtime")) return "HIP " + *v;
  if (auto v = version_after(show_config, "CUDA Runtime")) return "CUDA " + *v;
  return std::nullopt;
}

std::optional<std::string> onednn_version_from_config(const std::string& show_config) {
  // LibTorch 1.x says "Intel(R) MKL-DNN v2.6.3", 2.x says "Intel(R) oneDNN v3.1.1".
  if (auto v = version_after(show_config, "oneDNN")) return v;
  return version_after(show_config, "MKL-DNN");
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_cpu_blas(const std::string& path) {
  const std::string base = lower(basename_of(path));
  if (base.find("cublas") != std::string::npos || base.find("hipblas") != std::string::npos ||
      base.find("rocblas") != std::string::npos)
    return false;  // GPU BLAS: not what CPU matrix products run on
  return base.find("blas") != std::string::npos || base.rfind("libmkl_", 0) == 0;
}

}  // namespace

std::string blas_kind_of(const std::string& library_path) {
  const std::string p = lower(library_path);
  if (p.find("openblas") != std::string::npos) return "openblas";
  if (p.find("mkl") != std::string::npos) return "mkl";
  if (p.find("blis") != std::string::npos) return "blis";
  if (p.find("atlas") != std::string::npos) return "atlas";
  // Netlib's reference BLAS: Debian's /usr/lib/<triplet>/blas/libblas.so.3, or a bare libblas.so.3.
  if (basename_of(p).rfind("libblas.so", 0) == 0) return "reference";
  return "unknown";
}

std::optional<std::string> blas_library_from_maps(const std::string& maps) {
  std::istringstream in(maps);
  std::string line;
  std::optional<std::string> first, preferred;
  while (std::getline(in, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    const std::string deleted = " (deleted)";
    if (path.size() > deleted.size() && path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0)
      path.resize(path.size() - deleted.size());
    if (!is_cpu_blas(path)) continue;
    char real[PATH_MAX];
    if (realpath(path.c_str(), real) != nullptr) path = real;
    const std::string base = basename_of(path);
    if (!first) first = path;
    if (!preferred && (base.rfind("libblas.so", 0) == 0 || base.rfind("libmkl_rt", 0) == 0)) preferred = path;
  }
  return preferred ? preferred : first;
}

}  // namespace detail

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n\"");
  const auto e = s.find_last_not_of(" \t\r\n\"");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::string os_description() {
  std::string os;
  struct utsname u {};
  if (uname(&u) == 0) os = std::string(u.sysname) + " " + u.release;
  std::istringstream in(read_file("/etc/os-release"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      const std::string pretty = trim(line.substr(12));
      if (!pretty.empty()) os += os.empty() ? pretty : " (" + pretty + ")";
    }
  }
  return os.empty() ? "unknown" : os;
}

struct CpuInfo {
  std::string model = "unknown";
  std::optional<int> physical_cores;
};

CpuInfo cpu_info() {
  CpuInfo info;
  std::istringstream in(read_file("/proc/cpuinfo"));
  std::string line, physical_id;
  std::set<std::pair<std::string, std::string>> cores;
  bool have_model = false;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (key == "model name" && !have_model) {
      info.model = value;
      have_model = true;
    } else if (key == "physical id") {
      physical_id = value;
    } else if (key == "core id") {
      cores.emplace(physical_id, value);
    }
  }
  if (!cores.empty()) info.physical_cores = static_cast<int>(cores.size());
  return info;
}

int64_t mem_total_bytes() {
  std::istringstream in(read_file("/proc/meminfo"));
  std::string key;
  int64_t kib = 0;
  while (in >> key) {
    if (key == "MemTotal:") {
      in >> kib;
      return kib * 1024;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// The machine's name as results carry it: a character host_name_problem refuses (a space, a '/', a
// control: a name set by hand) becomes '_', so that a run's own file is always readable.
std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  std::string name = buf;
  for (char& ch : name) {
    if (!host_name_problem(std::string(1, ch)).empty()) ch = '_';
  }
  return name;
}

const char* build_kind() {
#if defined(TRAINBENCH_WITH_HIP)
  return "rocm";
#elif defined(TRAINBENCH_WITH_CUDA)
  return "cuda";
#else
  return "cpu";
#endif
}

}  // namespace

SystemInfo collect_system_info(const std::string& device) {
  SystemInfo c;
  c.hostname = host_name();
  c.os = os_description();
  const CpuInfo cpu = cpu_info();
  c.cpu_model = cpu.model;
  c.cpu_cores = static_cast<int>(std::thread::hardware_concurrency());
  c.cpu_physical_cores = cpu.physical_cores;
  c.memory_bytes = mem_total_bytes();
  c.libtorch_version = TORCH_VERSION;
  c.build = build_kind();

  // A small product so the BLAS is surely loaded before /proc/self/maps is read.
  {
    torch::NoGradGuard no_grad;
    const auto a = torch::ones({64, 64});
    (void)torch::mm(a, a).sum().item<float>();
  }
  const std::string config = at::show_config();
  c.onednn_version = detail::onednn_version_from_config(config);
  c.cuda_build_version = detail::build_setting(config, "CUDA_VERSION");
  // 2.x names it in the build settings; 1.x's GPU builds in a "CuDNN 8.9.2" line.
  c.cudnn_version = detail::build_setting(config, "CUDNN_VERSION");
  if (!c.cudnn_version) c.cudnn_version = detail::version_after(config, "CuDNN");
#if defined(TRAINBENCH_WITH_CUDA) && !defined(TRAINBENCH_WITH_HIP)
  c.nccl_version = detail::nccl_version_from_packed(torch::cuda::nccl::version());
#endif
  c.miopen_version = detail::version_after(config, "MIOpen");
  c.blas_library = detail::blas_library_from_maps(read_file("/proc/self/maps"));
  if (c.blas_library) {
    c.blas_kind = detail::blas_kind_of(*c.blas_library);
  } else {
    // Statically linked BLAS (e.g. MKL inside a pip LibTorch): only the build settings name it.
    static const std::regex re(R"(BLAS_INFO=([A-Za-z0-9_]+))");
    std::smatch m;
    if (std::regex_search(config, m, re) && m[1].str() != "generic") c.blas_kind = m[1].str();
  }

  if (is_gpu_device_text(device)) {
    c.device_name = device;
    c.gpu_count = static_cast<int>(torch::cuda::device_count());
    c.gpu_driver_version = nvidia_driver_version();
    c.gpu_runtime_version = detail::gpu_runtime_from_config(config);
#if defined(TRAINBENCH_WITH_CUDA) && !defined(TRAINBENCH_WITH_HIP)
    if (torch::cuda::is_available()) {
      const auto colon = device.find(':');
      const auto index =
          static_cast<c10::DeviceIndex>(colon == std::string::npos ? 0 : std::stoi(device.substr(colon + 1)));
      const auto* props = at::cuda::getDeviceProperties(index);
      c.device_name = props->name;
      c.device_memory_bytes = static_cast<int64_t>(props->totalGlobalMem);
      c.gpu_sm_count = props->multiProcessorCount;
      c.gpu_arch = "sm_" + std::to_string(props->major) + std::to_string(props->minor);
    }
#endif
  } else {
    c.device_name = c.cpu_model;
    c.device_memory_bytes = c.memory_bytes;
  }
  return c;
}

}  // namespace trainbench
