// The last leg of the input pipeline: a loader's batch onto the device the step runs on. On a GPU the
// copy of the next batch runs on a side stream from pinned host memory while the current step computes
// (one batch ahead, as DALI's and Lightning's prefetchers), and the compute stream waits on an event
// for it; the host measures what of the copy was left when the step needed it. A uint8 image batch is
// normalized there, on the device (DALI's choice: a quarter of the bytes cross the bus). On the CPU the
// batch is already where it is used: nothing is copied and nothing is waited for. Built only on the
// device-generic c10 interfaces (VirtualGuardImpl, Stream, Event), so it compiles in a CPU LibTorch.
#pragma once
#include <torch/torch.h>

#include <c10/core/Event.h>
#include <c10/core/Stream.h>

#include <memory>
#include <optional>
#include <vector>

#include "data/loader.h"

namespace trainbench::data {

// (uint8 pixels, the crop's values 0..255) -> ImageNet-normalized `dtype`: p * gain + bias per channel,
// the same gain and bias as crop_resize_normalize (augment.h), on whatever device `pixels` lives.
// Keeps the memory format (NCHW or channels-last).
torch::Tensor normalize_pixels(const torch::Tensor& pixels, at::ScalarType dtype);

class DeviceFeed {
 public:
  // `normalize_uint8`: the first tensor of each batch is uint8 pixels, to become `dtype` on the device.
  DeviceFeed(torch::Device device, bool normalize_uint8, at::ScalarType dtype);
  ~DeviceFeed();
  DeviceFeed(const DeviceFeed&) = delete;
  DeviceFeed& operator=(const DeviceFeed&) = delete;

  // Starts moving `b` to the device (GPU: asynchronously on the side stream). One batch at a time.
  void start(Batch b);
  bool pending() const { return pending_.has_value(); }
  // The started batch, on the device and ready for the compute stream; `copy_wait_s` receives the
  // seconds the host waited for the rest of its copy (0 on the CPU).
  std::vector<torch::Tensor> finish(double& copy_wait_s);

 private:
  torch::Device device_;
  bool normalize_uint8_;
  at::ScalarType dtype_;
  bool gpu_;
  std::optional<c10::Stream> copy_stream_;
  std::optional<c10::Event> copied_;
  std::optional<Batch> host_;                          // the host batch whose copy is in flight (kept alive)
  std::optional<std::vector<torch::Tensor>> pending_;  // its device tensors
};

}  // namespace trainbench::data
