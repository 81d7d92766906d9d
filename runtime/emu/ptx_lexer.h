// Splits PTX text into tokens. Words keep dots and '::' (add.s32, %tid.x, .shared::cta), so one
// token is one opcode with its modifiers, one directive or one operand name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tcjit::emu {

enum class TokenKind {
  Word,   // identifier, opcode, directive (.reg), register (%r1), label, number (12, 0x1F,
          // 0f3F800000)
  String, // "..." (without the quotes)
  Punct,  // one of , ; : { } [ ] ( ) < > + - = | ! @
  End,
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;
  int line = 0;
};

// Throws DeviceError (ModuleLoad) on an unterminated comment or string, or a stray character.
std::vector<Token> lex_ptx(std::string_view text, std::string_view source_name);

} // namespace tcjit::emu
