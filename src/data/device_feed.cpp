#include "data/device_feed.h"

#include <c10/core/impl/VirtualGuardImpl.h>

#include <chrono>
#include <stdexcept>

#include "data/augment.h"

namespace trainbench::data {

torch::Tensor normalize_pixels(const torch::Tensor& pixels, at::ScalarType dtype) {
  float gain[3], bias[3];
  imagenet_gain_bias(gain, bias);
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(pixels.device());
  const torch::Tensor g = torch::tensor(std::vector<float>(gain, gain + 3), opts).view({1, 3, 1, 1});
  const torch::Tensor b = torch::tensor(std::vector<float>(bias, bias + 3), opts).view({1, 3, 1, 1});
  // In fp32 as the host path computes (p * gain, then + bias), then to the case's dtype as the host path
  // converts; in place on the float copy, which keeps the batch's memory format.
  torch::Tensor x = pixels.to(torch::kFloat);
  x.mul_(g).add_(b);
  return dtype == torch::kFloat ? x : x.to(dtype);
}

DeviceFeed::DeviceFeed(torch::Device device, bool normalize_uint8, at::ScalarType dtype)
    : device_(device), normalize_uint8_(normalize_uint8), dtype_(dtype), gpu_(!device.is_cpu()) {
  if (gpu_) {
    c10::impl::VirtualGuardImpl impl(device_.type());
    copy_stream_ = impl.getStreamFromGlobalPool(device_, /*isHighPriority=*/false);
    copied_.emplace(device_.type());
  }
}

DeviceFeed::~DeviceFeed() {
  // A copy still in flight reads the host batch: let it end before the batch is freed.
  if (gpu_ && pending_) {
    c10::impl::VirtualGuardImpl impl(device_.type());
    impl.synchronizeStream(*copy_stream_);
  }
}

void DeviceFeed::start(Batch b) {
  if (pending_) throw std::logic_error("DeviceFeed::start: a batch is already in flight");
  if (!gpu_) {
    pending_ = b.tensors;
    return;
  }
  c10::impl::VirtualGuardImpl impl(device_.type());
  // The copy goes on the side stream; the compute stream is left as it was for the step.
  const c10::Stream compute = impl.exchangeStream(*copy_stream_);
  std::vector<torch::Tensor> out;
  out.reserve(b.tensors.size());
  for (const auto& t : b.tensors) out.push_back(t.to(device_, /*non_blocking=*/t.is_pinned()));
  copied_->record(*copy_stream_);
  impl.exchangeStream(compute);
  host_ = std::move(b);
  pending_ = std::move(out);
}

std::vector<torch::Tensor> DeviceFeed::finish(double& copy_wait_s) {
  if (!pending_) throw std::logic_error("DeviceFeed::finish: no batch in flight");
  std::vector<torch::Tensor> out = std::move(*pending_);
  pending_.reset();
  copy_wait_s = 0.0;
  if (gpu_) {
    c10::impl::VirtualGuardImpl impl(device_.type());
    // What is left of the copy now (the previous step has been synchronized) is what the step would
    // wait for: the host waits it out so it can be measured, and the compute stream is ordered after it.
    const auto t0 = std::chrono::steady_clock::now();
    impl.synchronizeStream(*copy_stream_);
    copy_wait_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const c10::Stream compute = impl.getStream(device_);
    copied_->block(compute);
    // The tensors were allocated on the side stream: the caching allocator must not reuse their memory
    // until the compute stream is done with them.
    for (const auto& t : out) impl.recordDataPtrOnStream(t.storage().data_ptr(), compute);
    host_.reset();
  }
  if (normalize_uint8_ && !out.empty()) out[0] = normalize_pixels(out[0], dtype_);
  return out;
}

}  // namespace trainbench::data
