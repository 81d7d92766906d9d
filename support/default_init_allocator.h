// An allocator under which std::vector<T>(n) and resize(n) leave trivially constructible elements
// uninitialized (default-initialized, not value-initialized): for large buffers that worker
// threads fill, so that no thread zeroes them (and touches every fresh page) alone first.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace tcjit::support {

template <typename T> class DefaultInitAllocator : public std::allocator<T> {
public:
  using value_type = T;
  template <typename U> struct rebind { using other = DefaultInitAllocator<U>; };

  DefaultInitAllocator() noexcept = default;
  template <typename U> DefaultInitAllocator(const DefaultInitAllocator<U> &) noexcept {}

  template <typename U> void construct(U *p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void *>(p)) U;
  }
  template <typename U, typename... Args> void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }
};

} // namespace tcjit::support
