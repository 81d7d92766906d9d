#include "support/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tcjit {

int reference_thread_count() {
  if (const char *text = std::getenv("TCJIT_REFERENCE_THREADS")) {
    const long requested = std::strtol(text, nullptr, 10);
    if (requested > 0)
      return static_cast<int>(std::min<long>(requested, 1024));
  }
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : static_cast<int>(hardware);
}

void parallel_for(int64_t count, int64_t min_chunk,
                  const std::function<void(int64_t begin, int64_t end)> &body) {
  if (count <= 0)
    return;
  min_chunk = std::max<int64_t>(min_chunk, 1);
  const int64_t useful_threads = (count + min_chunk - 1) / min_chunk;
  const int64_t threads = std::min<int64_t>(reference_thread_count(), useful_threads);
  if (threads <= 1) {
    body(0, count);
    return;
  }
  // A few chunks per thread balance uneven work; chunks are handed out in order.
  const int64_t chunk = std::max(min_chunk, (count + threads * 4 - 1) / (threads * 4));
  std::atomic<int64_t> next{0};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (;;) {
      const int64_t begin = next.fetch_add(chunk);
      if (begin >= count)
        return;
      try {
        body(begin, std::min(begin + chunk, count));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error)
          first_error = std::current_exception();
        next.store(count); // stop handing out work
        return;
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<size_t>(threads - 1));
  for (int64_t i = 1; i < threads; ++i)
    helpers.emplace_back(worker);
  worker();
  for (std::thread &t : helpers)
    t.join();
  if (first_error)
    std::rethrow_exception(first_error);
}

} // namespace tcjit
