// The in-process cache in front of binary lookups. Readers share a std::shared_mutex, so
// concurrent cache hits do not serialize; only misses and writes take it exclusively.
#pragma once

#include "kernels_db/binary_store.h"
#include "kernels_db/records.h"

#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>

namespace tcjit::kernels_db {

class LookupCache {
public:
  std::shared_ptr<const BinaryRecord> find(const BinaryQuery &query) const;
  void insert(const BinaryQuery &query, std::shared_ptr<const BinaryRecord> binary);
  void clear();
  size_t size() const;

private:
  static std::string cache_key(const BinaryQuery &query);

  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const BinaryRecord>> entries_;
};

} // namespace tcjit::kernels_db
