// Runs a function with a thread-local observer on LibTorch's operator dispatch installed (the
// mechanism behind count_flops and `explain`'s layer collection). The observer and the state its
// callbacks read are removed again on return, also when the function throws.
#pragma once
#include <ATen/record_function.h>

#include <functional>

namespace trainbench::detail {

// `slot` (the thread_local pointer the callbacks read) points at `state` while `fn` runs.
template <class State>
void run_observed(State*& slot, State* state, at::RecordFunctionCallback callback, const std::function<void()>& fn) {
  struct Restore {
    State*& slot;
    State* previous;
    at::CallbackHandle handle;
    ~Restore() {
      at::removeCallback(handle);
      slot = previous;
    }
  };
  State* previous = slot;
  slot = state;
  Restore restore{slot, previous, at::addThreadLocalCallback(std::move(callback))};
  fn();
}

}  // namespace trainbench::detail
