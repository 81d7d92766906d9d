#include "kernels_db/lookup_cache.h"

#include <mutex>

namespace tcjit::kernels_db {

std::string LookupCache::cache_key(const BinaryQuery &query) {
  // Fields joined by a separator that cannot occur in them (\x1f); a lookup without a config is
  // marked apart from one with an empty config.
  std::string key;
  key.reserve(query.problem_key.size() + query.arch.size() + query.toolkit_version.size() +
              query.compiler_version.size() + (query.config_json ? query.config_json->size() : 0) +
              8);
  key += query.problem_key;
  key += '\x1f';
  key += query.arch;
  key += '\x1f';
  key += query.toolkit_version;
  key += '\x1f';
  key += query.compiler_version;
  key += '\x1f';
  if (query.config_json) {
    key += 'c';
    key += *query.config_json;
  } else {
    // The fastest config depends on which results are judged plausible.
    key += '*';
    key += query.rules.tuner_format ? std::to_string(*query.rules.tuner_format) : "-";
    key += query.rules.now_ms ? "t" : "-";
  }
  if (query.kernel_identity) { // another identity finds another binary, trusted or not
    key += '\x1f';
    key += 'i';
    key += *query.kernel_identity;
  }
  return key;
}

std::shared_ptr<const BinaryRecord> LookupCache::find(const BinaryQuery &query) const {
  const std::string key = cache_key(query);
  std::shared_lock lock(mutex_);
  const auto it = entries_.find(key);
  return it != entries_.end() ? it->second : nullptr;
}

void LookupCache::insert(const BinaryQuery &query, std::shared_ptr<const BinaryRecord> binary) {
  std::string key = cache_key(query);
  std::unique_lock lock(mutex_);
  entries_.insert_or_assign(std::move(key), std::move(binary));
}

void LookupCache::clear() {
  std::unique_lock lock(mutex_);
  entries_.clear();
}

size_t LookupCache::size() const {
  std::shared_lock lock(mutex_);
  return entries_.size();
}

} // namespace tcjit::kernels_db
