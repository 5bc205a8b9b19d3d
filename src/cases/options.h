// What a case asks of a workload, without LibTorch: the settings a sweep can vary. workloads/workload.h
// builds a Workload from them; a case (cases/case.h) is these plus how it runs.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/device_text.h"
#include "core/layout.h"
#include "core/precision_text.h"

namespace trainbench {

// What a case asks of a workload: the settings a sweep can vary.
struct WorkloadOptions {
  std::string model;
  std::map<std::string, std::string> params;  // workload parameters (`--set key=value`)
  int64_t batch = 0;
  // fp32 | fp16 | bf16 (automatic mixed precision; fp16 with dynamic loss scaling) |
  // fp16-pure | bf16-pure (the whole model, its buffers and float inputs in that type); parsed once,
  // from a descriptor or a sweep (core/precision_text.h)
  Precision precision;
  Layout layout = Layout::nchw;   // nchw | nhwc (channels-last)
  std::string optimizer = "sgd";  // sgd | momentum | adam | adamw
  bool forward_only = false;      // inference only: no backward, no optimizer
  DeviceSpec device;
  // >= 0: the synthetic batch is drawn after seeding the RNG with this (data-parallel ranks each draw
  // their own batch while the model, built first from the same seed, is the same). -1: not reseeded.
  int64_t data_seed = -1;
  // Input data: "synthetic" (one batch drawn on the device before timing) or a path (src/data): a
  // folder of JPEGs in ImageFolder layout, or a flat file of token ids of `data_dtype` (uint16 | uint32).
  // loader_threads 0: the default (data/loader.h, default_loader_threads).
  std::string data = "synthetic";
  int loader_threads = 0;
  std::string data_dtype = "uint16";
  // Images only: how a batch travels to the device. "float": normalized on the host, in the case's dtype
  // (torchvision's DataLoader); "uint8": the cropped pixels as bytes (a quarter of the bytes to copy),
  // normalized on the device (DALI's choice). The same numbers within uint8 rounding.
  std::string data_transfer = "float";
  bool synthetic_data() const { return data == "synthetic"; }
};

const std::vector<std::string>& known_optimizers();

}  // namespace trainbench
