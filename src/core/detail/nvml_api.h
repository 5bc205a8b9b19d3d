// The NVML functions trainbench calls, as function-pointer types in NVML's C ABI, so that no nvml.h
// is needed: libnvidia-ml.so.1 is opened at run time with dlopen (core/gpu_clock.cpp). A wrong type
// here would be undefined behaviour no test on a machine without a GPU can see, so
// tests/compile_checks/nvml_signatures.cpp checks every one against the toolkit's nvml.h
// (scripts/checks/cuda-compile-check.sh, wherever that header is installed).
#pragma once

namespace trainbench::detail::nvml {

// nvmlDevice_t is a pointer to an opaque struct; nvmlReturn_t and nvmlClockType_t are C enums, int-sized.
using Device = void*;
using Return = int;
using ClockType = int;

constexpr Return kSuccess = 0;     // NVML_SUCCESS
constexpr ClockType kClockSm = 1;  // NVML_CLOCK_SM

using InitFn = Return (*)();                                    // nvmlInit_v2
using ShutdownFn = Return (*)();                                // nvmlShutdown
using HandleByIndexFn = Return (*)(unsigned, Device*);          // nvmlDeviceGetHandleByIndex_v2
using HandleByPciBusIdFn = Return (*)(const char*, Device*);    // nvmlDeviceGetHandleByPciBusId_v2
using ClockFn = Return (*)(Device, ClockType, unsigned*);       // nvmlDeviceGetClockInfo, ...MaxClockInfo,
                                                                // ...DefaultApplicationsClock
using DriverVersionFn = Return (*)(char*, unsigned);            // nvmlSystemGetDriverVersion
using TotalEnergyFn = Return (*)(Device, unsigned long long*);  // nvmlDeviceGetTotalEnergyConsumption (mJ)

}  // namespace trainbench::detail::nvml
