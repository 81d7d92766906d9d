// The per-user secret that marks a stored binary as built by this user's tcjit: 32 random bytes in
// $TCJIT_KEY_FILE, else $XDG_CONFIG_HOME/tcjit/cache.key, else ~/.config/tcjit/cache.key, created
// on first need (mode 0600). A binary's MAC is HMAC-SHA256 under this key over everything that
// decides what runs (binary_mac); a row without a valid MAC is foreign (docs/kernels_db.md,
// "Threat model").
#pragma once

#include "kernels_db/records.h"

#include <filesystem>
#include <optional>
#include <string>

namespace tcjit::kernels_db {

inline constexpr size_t kTrustKeyBytes = 32;

// Where the key is kept; nullopt when no variable names a place ($HOME unset too).
std::optional<std::filesystem::path> trust_key_path();

struct TrustKey {
  std::string bytes;   // kTrustKeyBytes bytes; empty when no key is available
  std::string warning; // why there is none (a sentence naming the file), when that is not normal
};

// Reads the key at `path`, creating it first when it does not exist (written to a temporary file
// of mode 0600 and linked into place, so two processes racing end up with one key; the parent
// directory is created with mode 0700). A key file that is not a regular file owned by this user,
// is readable or writable by group or others, or does not hold kTrustKeyBytes bytes is refused:
// no key, with a warning. Never throws.
TrustKey load_or_create_trust_key(const std::filesystem::path &path);
// The key at trust_key_path(), as above.
TrustKey load_or_create_trust_key();

// HMAC-SHA256 under `key`, as 64 lowercase hex digits, over a length-prefixed encoding of the
// binary's stored key (kernel identity, arch, toolkit and compiler versions), PTX, cubin, resources
// and compile options. Not the problem or config: one binary serves every problem of its identity.
std::string binary_mac(const std::string &key, const BinaryRecord &binary);

// Constant-time comparison of two MACs (false when the lengths differ).
bool same_mac(const std::string &a, const std::string &b);

} // namespace tcjit::kernels_db
