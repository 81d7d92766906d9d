// Readable, stable names for value-parameterised tests (INSTANTIATE_TEST_SUITE_P's name
// generator): a spec line or config as a valid gtest name, letters, digits and '_' only.
// "gemm m=33 n=17 a=f16:col beta=-1.5" -> "gemm_m_33_n_17_a_f16_col_beta_m1p5".
#pragma once

#include <cctype>
#include <string>
#include <string_view>

namespace tcjit::test {

inline std::string test_name(std::string_view text) {
  auto digit = [&](size_t i) {
    return i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += c;
    } else if (c == '.' && i > 0 && digit(i - 1) && digit(i + 1)) {
      out += 'p'; // 0.05 -> 0p05
    } else if (c == '-' && digit(i + 1)) {
      if (!out.empty() && out.back() != '_')
        out += '_';
      out += 'm'; // -1 -> m1
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_')
    out.pop_back();
  return out.empty() ? "empty" : out;
}

// A spec and its tile config ("" = the default config).
inline std::string test_name(std::string_view spec, std::string_view config) {
  return config.empty() ? test_name(spec) : test_name(spec) + "_cfg_" + test_name(config);
}

} // namespace tcjit::test
