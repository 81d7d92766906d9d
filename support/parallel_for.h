// A tiny std::thread helper for the references: splits [0, count) into contiguous chunks.
#pragma once

#include <cstdint>
#include <functional>

namespace tcjit {

// Threads the references use: std::thread::hardware_concurrency(), at least 1, or the value of
// the environment variable TCJIT_REFERENCE_THREADS when it is a positive number.
int reference_thread_count();

// Calls body(begin, end) on disjoint chunks covering [0, count), each at least `min_chunk` long
// (except the last), on up to reference_thread_count() threads (the calling thread included).
// Runs inline when one thread is enough. The first exception a chunk throws is rethrown here after
// every thread has finished.
void parallel_for(int64_t count, int64_t min_chunk,
                  const std::function<void(int64_t begin, int64_t end)> &body);

} // namespace tcjit
