// Compiled only by scripts/checks/cuda-compile-check.sh, and only where the CUDA toolkit has nvml.h: every
// NVML function type in core/detail/nvml_api.h must be the ABI of nvml.h's declaration. nvml.h's enums
// (nvmlReturn_t, nvmlClockType_t) count as int when they are int-sized, and its opaque device handle
// (a pointer to struct nvmlDevice_st) as void*; anything else must match exactly.
#include <nvml.h>

#include <type_traits>

#include "core/detail/nvml_api.h"

namespace {

namespace nvml = trainbench::detail::nvml;

template <class T, class = void>
struct Abi {
  using type = T;
};
template <class T>
struct Abi<T, std::enable_if_t<std::is_enum_v<T>>> {
  static_assert(sizeof(T) == sizeof(int), "an NVML enum that is not int-sized");
  using type = int;
};
template <class T>
struct Abi<T*, std::enable_if_t<std::is_class_v<T>>> {
  using type = void*;  // nvmlDevice_t
};
template <class T>
struct Abi<T*, std::enable_if_t<!std::is_class_v<T>>> {
  using type = typename Abi<T>::type*;
};

template <class F>
struct AbiFn;
template <class R, class... A>
struct AbiFn<R (*)(A...)> {
  using type = typename Abi<R>::type (*)(typename Abi<A>::type...);
};

template <class Declared, class Ours>
constexpr bool same_abi = std::is_same_v<typename AbiFn<Declared>::type, Ours>;

#define TRAINBENCH_CHECK_NVML(function, ours) \
  static_assert(same_abi<decltype(&function), ours>, #function " does not have the type " #ours " of nvml_api.h")

TRAINBENCH_CHECK_NVML(nvmlInit_v2, nvml::InitFn);
TRAINBENCH_CHECK_NVML(nvmlShutdown, nvml::ShutdownFn);
TRAINBENCH_CHECK_NVML(nvmlDeviceGetHandleByIndex_v2, nvml::HandleByIndexFn);
TRAINBENCH_CHECK_NVML(nvmlDeviceGetHandleByPciBusId_v2, nvml::HandleByPciBusIdFn);
TRAINBENCH_CHECK_NVML(nvmlDeviceGetClockInfo, nvml::ClockFn);
TRAINBENCH_CHECK_NVML(nvmlDeviceGetMaxClockInfo, nvml::ClockFn);
TRAINBENCH_CHECK_NVML(nvmlDeviceGetDefaultApplicationsClock, nvml::ClockFn);
TRAINBENCH_CHECK_NVML(nvmlSystemGetDriverVersion, nvml::DriverVersionFn);
TRAINBENCH_CHECK_NVML(nvmlDeviceGetTotalEnergyConsumption, nvml::TotalEnergyFn);

static_assert(nvml::kSuccess == NVML_SUCCESS, "NVML_SUCCESS");
static_assert(nvml::kClockSm == NVML_CLOCK_SM, "NVML_CLOCK_SM");
static_assert(std::is_same_v<nvmlDevice_t, nvmlDevice_st*>, "nvmlDevice_t is no longer a struct pointer");

}  // namespace
