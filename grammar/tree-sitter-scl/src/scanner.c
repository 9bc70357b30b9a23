/*
 * External scanner of the SCL tree-sitter grammar: every token of SCL.
 *
 * This is a port of the compiler's lexer (crates/scl-syntax/src/lexer.rs),
 * whose rules grammar/scl.ebnf states. Only the lexer knows where a newline
 * separates items, so the scanner lexes every token itself and keeps the
 * same state the compiler's lexer keeps:
 *
 *  - a stack of open brackets, interpolations and strings: a newline is a
 *    separator only at top level and directly inside `{...}`; inside a
 *    string the scanner lexes string pieces;
 *  - whether the last token lets the line continue (a binary operator, `,`,
 *    `=`, `:`, `->`, an opening bracket, `then else with extends in where
 *    as`, or a NEWLINE): then a newline is dropped;
 *  - before it emits a NEWLINE it reads ahead to the next token: a line that
 *    starts with `then`, `else` or `with` drops it, and a doc comment
 *    (`///`) keeps it, as in the compiler.
 *
 * What the compiler's lexer reports as an error (E0001 unknown character or
 * stray closer, E0002 unterminated string, E0003 newline in an
 * interpolation, E0004 unknown escape, E0005 bad number, E0007 nesting
 * deeper than 256) becomes an `_invalid` token, which no grammar rule
 * accepts, so the tree has an ERROR node there. Invisible characters (E0010)
 * are skipped as the compiler skips them (the `_hidden` extra).
 *
 * The NEWLINE token is the grammar's visible anonymous `newline` node (its
 * text is the line end), so that a separator the parser's error recovery
 * inserts shows as `(MISSING "newline")`; the dropped newline is a hidden
 * extra.
 *
 * The scanner never reads `valid_symbols`: like the compiler's lexer it
 * decides from the text and its own state alone, so the tokens are the same
 * in error recovery as elsewhere.
 */

#include "tree_sitter/alloc.h"
#include "tree_sitter/parser.h"

#include <stdint.h>
#include <string.h>

/* The order of grammar.js `externals`. */
enum TokenType {
  NEWLINE,
  DROPPED_NEWLINE,
  HIDDEN,
  INVALID,
  COMMENT,
  DOC_COMMENT,
  IDENTIFIER,
  INTEGER,
  FLOAT,
  QUANTITY,
  STRING_CONTENT,
  ESCAPE_SEQUENCE,
  QUOTE,
  TRIPLE_QUOTE,
  INTERP_START,
  KW_IMPORT,
  KW_AS,
  KW_PARAM,
  KW_LET,
  KW_FN,
  KW_ENV,
  KW_ENUM,
  KW_EXTENDS,
  KW_WITH,
  KW_IF,
  KW_THEN,
  KW_ELSE,
  KW_FOR,
  KW_IN,
  KW_WHERE,
  KW_TRUE,
  KW_FALSE,
  KW_SELF,
  EQ,
  PLUS_EQ,
  MINUS_EQ,
  EQ_EQ,
  NOT_EQ,
  LT,
  LE,
  GT,
  GE,
  PLUS,
  MINUS,
  STAR,
  SLASH,
  BANG,
  AND_AND,
  OR_OR,
  DOT,
  COMMA,
  COLON,
  QUESTION,
  ARROW,
  LPAREN,
  RPAREN,
  LBRACKET,
  RBRACKET,
  LBRACE,
  RBRACE,
};

/* Frames of the nesting stack. */
enum Frame {
  F_PAREN = 1,
  F_BRACKET,
  F_BRACE,
  F_INTERP1, /* `${` in a one-line string */
  F_INTERP3, /* `${` in a `"""` string */
  F_STR1,    /* inside a `"` string */
  F_STR3,    /* inside a `"""` string */
};

/* scl_syntax::MAX_NESTING: brackets and interpolations nest at most this deep. */
#define MAX_NESTING 256
/* Brackets and interpolations, plus one string frame below each interpolation. */
#define MAX_FRAMES (2 * MAX_NESTING + 2)

typedef struct {
  /* true if the last token lets the line continue (or nothing was lexed yet) */
  bool cont;
  uint16_t len;
  /* brackets and interpolations on the stack (string frames not counted) */
  uint16_t depth;
  uint8_t frames[MAX_FRAMES];
} Scanner;

static inline void advance(TSLexer *lx) { lx->advance(lx, false); }
static inline void skip(TSLexer *lx) { lx->advance(lx, true); }

static inline bool is_digit(int32_t c) { return c >= '0' && c <= '9'; }
static inline bool is_word_start(int32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static inline bool is_word(int32_t c) { return is_word_start(c) || is_digit(c); }

/* scl_diag::is_hidden: characters the compiler refuses as invisible (E0010). */
static bool is_hidden(int32_t c) {
  if (c == '\t' || c == '\n') return false;
  if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  switch (c) {
  case 0x2028: case 0x2029: case 0x61c: case 0x200e: case 0x200f: case 0xfeff:
  case 0xad: case 0x34f: case 0x115f: case 0x1160: case 0x17b4: case 0x17b5:
  case 0x200b: case 0x3164: case 0xffa0:
    return true;
  default:
    break;
  }
  return (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
         (c >= 0x180b && c <= 0x180f) || (c >= 0x2060 && c <= 0x2064) ||
         (c >= 0x206a && c <= 0x206f) || (c >= 0xfff9 && c <= 0xfffb) ||
         (c >= 0x1d173 && c <= 0x1d17a) || (c >= 0xe0000 && c <= 0xe0fff);
}

static inline uint8_t top(const Scanner *s) { return s->len ? s->frames[s->len - 1] : 0; }

static inline bool is_interp(uint8_t f) { return f == F_INTERP1 || f == F_INTERP3; }
static inline bool is_str(uint8_t f) { return f == F_STR1 || f == F_STR3; }

static void pop(Scanner *s) {
  if (!s->len) return;
  uint8_t f = s->frames[--s->len];
  if (!is_str(f) && s->depth) s->depth--;
}

/* Pushes a bracket or interpolation; false past the nesting limit. */
static bool push(Scanner *s, uint8_t f) {
  if (!is_str(f)) {
    if (s->depth >= MAX_NESTING) return false;
    s->depth++;
  }
  if (s->len >= MAX_FRAMES) return false;
  s->frames[s->len++] = f;
  return true;
}

/* The innermost interpolation frame (0 at the top level of the file). */
static uint8_t innermost_interp(const Scanner *s) {
  for (int i = (int)s->len - 1; i >= 0; i--) {
    if (is_interp(s->frames[i])) return s->frames[i];
  }
  return 0;
}

/* TokenKind::continues_line */
static bool continues(enum TokenType t) {
  switch (t) {
  case NEWLINE: case EQ: case PLUS_EQ: case MINUS_EQ: case EQ_EQ: case NOT_EQ:
  case LT: case LE: case GT: case GE: case PLUS: case MINUS: case STAR: case SLASH:
  case BANG: case AND_AND: case OR_OR: case DOT: case COMMA: case COLON: case ARROW:
  case LPAREN: case LBRACKET: case LBRACE: case KW_THEN: case KW_ELSE: case KW_WITH:
  case KW_EXTENDS: case KW_IN: case KW_WHERE: case KW_AS:
    return true;
  default:
    return false;
  }
}

static bool emit(Scanner *s, TSLexer *lx, enum TokenType t) {
  lx->result_symbol = t;
  s->cont = continues(t);
  return true;
}

/* A token that no rule accepts: the compiler reports an error here. */
static bool invalid(Scanner *s, TSLexer *lx) {
  lx->result_symbol = INVALID;
  s->cont = false;
  return true;
}

static const struct {
  const char *word;
  enum TokenType token;
} KEYWORDS[] = {
    {"import", KW_IMPORT}, {"as", KW_AS},         {"param", KW_PARAM},
    {"let", KW_LET},       {"fn", KW_FN},         {"env", KW_ENV},
    {"enum", KW_ENUM},     {"extends", KW_EXTENDS}, {"with", KW_WITH},
    {"if", KW_IF},         {"then", KW_THEN},     {"else", KW_ELSE},
    {"for", KW_FOR},       {"in", KW_IN},         {"where", KW_WHERE},
    {"true", KW_TRUE},     {"false", KW_FALSE},   {"self", KW_SELF},
};

/* Reads a word (at most `cap - 1` characters kept) and returns its length. */
static unsigned read_word(TSLexer *lx, char *buf, unsigned cap) {
  unsigned n = 0;
  while (is_word(lx->lookahead)) {
    if (n + 1 < cap) buf[n] = (char)lx->lookahead;
    n++;
    advance(lx);
  }
  buf[n + 1 < cap ? n : cap - 1] = 0;
  return n;
}

enum Ahead { AHEAD_OTHER, AHEAD_DROP, AHEAD_DOC };

/*
 * After a newline that may separate items: reads ahead (the token's end is
 * already marked) to the next token. `then`, `else`, `with` and the end of
 * the file drop the newline; a doc comment keeps it even then (the
 * compiler's lexer lets a pending newline through before a doc comment).
 */
static enum Ahead read_ahead(TSLexer *lx) {
  for (;;) {
    if (lx->eof(lx)) return AHEAD_DROP;
    int32_t c = lx->lookahead;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || is_hidden(c)) {
      advance(lx);
      continue;
    }
    if (c == '/') {
      advance(lx);
      if (lx->lookahead != '/') return AHEAD_OTHER;
      advance(lx);
      if (lx->lookahead == '/') {
        advance(lx);
        if (lx->lookahead != '/') return AHEAD_DOC;
      }
      while (!lx->eof(lx) && lx->lookahead != '\n') advance(lx);
      continue;
    }
    if (is_word_start(c)) {
      char w[8];
      unsigned n = read_word(lx, w, sizeof w);
      if (n == 4 && (!strcmp(w, "then") || !strcmp(w, "else") || !strcmp(w, "with"))) {
        return AHEAD_DROP;
      }
    }
    return AHEAD_OTHER;
  }
}

static bool scan_number(Scanner *s, TSLexer *lx) {
  const uint64_t max = 9223372036854775807ULL; /* i64::MAX */
  uint64_t value = 0;
  bool overflow = false;
  bool is_float = false;
  while (is_digit(lx->lookahead) || lx->lookahead == '_') {
    if (lx->lookahead != '_') {
      uint64_t d = (uint64_t)(lx->lookahead - '0');
      if (value > (max - d) / 10) overflow = true;
      else value = value * 10 + d;
    }
    advance(lx);
  }
  lx->mark_end(lx);
  if (lx->lookahead == '.') {
    advance(lx);
    if (!is_digit(lx->lookahead)) return emit(s, lx, overflow ? INVALID : INTEGER);
    while (is_digit(lx->lookahead) || lx->lookahead == '_') advance(lx);
    is_float = true;
    lx->mark_end(lx);
  }
  /* suffix: letters, digits and `_` right after the number */
  char suffix[4] = {0};
  unsigned n = 0;
  if (lx->lookahead == 'e') {
    advance(lx);
    lx->mark_end(lx);
    bool sign = lx->lookahead == '+' || lx->lookahead == '-';
    if (sign) advance(lx);
    if (is_digit(lx->lookahead)) {
      while (is_digit(lx->lookahead) || lx->lookahead == '_') advance(lx);
      is_float = true;
      lx->mark_end(lx);
    } else {
      /* `3e`, `3e+`, `3ex`: a malformed exponent or an unknown suffix (E0005) */
      if (!sign) {
        while (is_word(lx->lookahead)) advance(lx);
        lx->mark_end(lx);
      }
      return invalid(s, lx);
    }
  }
  while (is_word(lx->lookahead)) {
    if (n < 3) suffix[n] = (char)lx->lookahead;
    n++;
    advance(lx);
  }
  lx->mark_end(lx);
  if (n == 0) {
    if (is_float) return emit(s, lx, FLOAT);
    return overflow ? invalid(s, lx) : emit(s, lx, INTEGER);
  }
  static const char *SUFFIXES[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "k", "M",
                                   "G",  "T",  "P",  "E",  "m"};
  if (n <= 2) {
    for (unsigned i = 0; i < sizeof SUFFIXES / sizeof *SUFFIXES; i++) {
      if (!strcmp(suffix, SUFFIXES[i])) return emit(s, lx, QUANTITY);
    }
  }
  return invalid(s, lx); /* `4GB`: unknown quantity suffix (E0005) */
}

/* Inside a string: content, an escape, `${` or the closing quotes. */
static bool scan_string(Scanner *s, TSLexer *lx, bool triple) {
  bool content = false; /* content read; its end is marked */
  for (;;) {
    if (lx->eof(lx)) {
      if (content) return emit(s, lx, STRING_CONTENT);
      return false; /* unterminated at the end of the file (E0002) */
    }
    int32_t c = lx->lookahead;
    if (c == '\\') {
      if (content) return emit(s, lx, STRING_CONTENT);
      advance(lx);
      c = lx->lookahead;
      if (c == 'n' || c == 't' || c == '"' || c == '\\' || c == '$') {
        advance(lx);
        return emit(s, lx, ESCAPE_SEQUENCE);
      }
      /* an unknown escape (E0004); before a line end only the backslash */
      if (!lx->eof(lx) && c != '\n') advance(lx);
      return invalid(s, lx);
    }
    if (c == '$') {
      advance(lx);
      if (lx->lookahead == '{') {
        if (content) return emit(s, lx, STRING_CONTENT);
        advance(lx);
        if (!push(s, triple ? F_INTERP3 : F_INTERP1)) return invalid(s, lx);
        lx->result_symbol = INTERP_START;
        s->cont = true;
        return true;
      }
      content = true;
      lx->mark_end(lx);
      continue;
    }
    if (c == '"') {
      if (!triple) {
        if (content) return emit(s, lx, STRING_CONTENT);
        advance(lx);
        pop(s);
        return emit(s, lx, QUOTE);
      }
      advance(lx);
      if (lx->lookahead == '"') {
        advance(lx);
        if (lx->lookahead == '"') {
          if (content) return emit(s, lx, STRING_CONTENT);
          advance(lx);
          pop(s);
          return emit(s, lx, TRIPLE_QUOTE);
        }
      }
      content = true;
      lx->mark_end(lx);
      continue;
    }
    if (c == '\n' && !triple) {
      if (content) return emit(s, lx, STRING_CONTENT);
      /* a `"` string ends at its line: unterminated (E0002) */
      pop(s);
      advance(lx);
      return invalid(s, lx);
    }
    advance(lx);
    content = true;
    lx->mark_end(lx);
  }
}

/* A closing bracket: the innermost matching opener, not looking past an
 * interpolation (Lexer::close). */
static bool scan_closer(Scanner *s, TSLexer *lx, int32_t c) {
  uint8_t want = c == ')' ? F_PAREN : c == ']' ? F_BRACKET : F_BRACE;
  advance(lx);
  int found = -1;
  for (int i = (int)s->len - 1; i >= 0; i--) {
    uint8_t f = s->frames[i];
    if (f == want || (want == F_BRACE && is_interp(f))) {
      found = i;
      break;
    }
    if (is_interp(f)) break;
  }
  if (found < 0) return invalid(s, lx); /* no opener (E0001) */
  /* openers left unclosed inside it (E0006) are dropped: the closer then
   * does not fit the tree, which has an error here */
  while ((int)s->len > found + 1) pop(s);
  uint8_t f = s->frames[found];
  pop(s);
  if (is_interp(f)) {
    lx->result_symbol = RBRACE;
    return true;
  }
  return emit(s, lx, c == ')' ? RPAREN : c == ']' ? RBRACKET : RBRACE);
}

static bool scan_word(Scanner *s, TSLexer *lx) {
  char w[8];
  unsigned n = read_word(lx, w, sizeof w);
  if (n >= sizeof w) return emit(s, lx, IDENTIFIER);
  for (unsigned i = 0; i < sizeof KEYWORDS / sizeof *KEYWORDS; i++) {
    if (strcmp(w, KEYWORDS[i].word) != 0) continue;
    enum TokenType t = KEYWORDS[i].token;
    bool decl = t == KW_IMPORT || t == KW_PARAM || t == KW_LET || t == KW_FN ||
                t == KW_ENV || t == KW_ENUM;
    /* (words are ASCII: the word started n columns back) */
    if (decl && s->len && lx->get_column(lx) == n) {
      /* A declaration keyword at the start of a line while brackets are
       * open: the compiler closes them (E0006) and goes on at top level. */
      bool in_string = false;
      for (unsigned i = 0; i < s->len; i++) in_string |= is_interp(s->frames[i]);
      if (!in_string) {
        s->len = 0;
        s->depth = 0;
      }
    }
    return emit(s, lx, t);
  }
  return emit(s, lx, IDENTIFIER);
}

static bool scan_operator(Scanner *s, TSLexer *lx, int32_t c) {
  advance(lx);
  int32_t n = lx->lookahead;
#define TWO(next, two, one)                                                    \
  if (n == (next)) {                                                           \
    advance(lx);                                                               \
    return emit(s, lx, two);                                                   \
  }                                                                            \
  return emit(s, lx, one);
  switch (c) {
  case '=': TWO('=', EQ_EQ, EQ)
  case '+': TWO('=', PLUS_EQ, PLUS)
  case '!': TWO('=', NOT_EQ, BANG)
  case '<': TWO('=', LE, LT)
  case '>': TWO('=', GE, GT)
  case '-':
    if (n == '=') { advance(lx); return emit(s, lx, MINUS_EQ); }
    if (n == '>') { advance(lx); return emit(s, lx, ARROW); }
    return emit(s, lx, MINUS);
  case '&':
    if (n == '&') { advance(lx); return emit(s, lx, AND_AND); }
    return invalid(s, lx); /* use `&&` */
  case '|':
    if (n == '|') { advance(lx); return emit(s, lx, OR_OR); }
    return invalid(s, lx); /* use `||` */
  case '*': return emit(s, lx, STAR);
  case '.': return emit(s, lx, DOT);
  case ',': return emit(s, lx, COMMA);
  case ':': return emit(s, lx, COLON);
  case '?': return emit(s, lx, QUESTION);
  default: return invalid(s, lx); /* an unexpected character (E0001) */
  }
#undef TWO
}

static bool scan(Scanner *s, TSLexer *lx) {
  uint8_t t = top(s);
  if (is_str(t)) return scan_string(s, lx, t == F_STR3);
  for (;;) {
    if (lx->eof(lx)) return false;
    int32_t c = lx->lookahead;
    if (c == ' ' || c == '\t' || c == '\r') {
      skip(lx);
      continue;
    }
    if (c == '\n') {
      if (innermost_interp(s) == F_INTERP1) {
        /* a newline in the interpolation of a `"` string (E0003): the
         * interpolation and the string end here */
        while (s->len && top(s) != F_STR1) pop(s);
        pop(s);
        advance(lx);
        return invalid(s, lx);
      }
      if ((t != 0 && t != F_BRACE) || s->cont) {
        skip(lx);
        continue;
      }
      advance(lx);
      lx->mark_end(lx);
      enum Ahead a = read_ahead(lx);
      if (a == AHEAD_DROP) {
        lx->result_symbol = DROPPED_NEWLINE;
        return true;
      }
      return emit(s, lx, NEWLINE);
    }
    if (is_hidden(c)) {
      while (!lx->eof(lx) && is_hidden(lx->lookahead) && lx->lookahead != '\r') advance(lx);
      lx->result_symbol = HIDDEN;
      return true;
    }
    if (c == '/') {
      advance(lx);
      if (lx->lookahead != '/') return emit(s, lx, SLASH);
      advance(lx);
      bool doc = false;
      if (lx->lookahead == '/') {
        advance(lx);
        doc = lx->lookahead != '/';
      }
      while (!lx->eof(lx) && lx->lookahead != '\n') advance(lx);
      lx->result_symbol = doc ? DOC_COMMENT : COMMENT;
      return true;
    }
    if (c == '"') {
      advance(lx);
      lx->mark_end(lx);
      bool triple = false;
      if (lx->lookahead == '"') {
        advance(lx);
        if (lx->lookahead == '"') {
          advance(lx);
          lx->mark_end(lx);
          triple = true;
        }
      }
      push(s, triple ? F_STR3 : F_STR1);
      return emit(s, lx, triple ? TRIPLE_QUOTE : QUOTE);
    }
    if (is_digit(c)) return scan_number(s, lx);
    if (is_word_start(c)) return scan_word(s, lx);
    if (c == '(' || c == '[' || c == '{') {
      advance(lx);
      uint8_t f = c == '(' ? F_PAREN : c == '[' ? F_BRACKET : F_BRACE;
      if (!push(s, f)) return invalid(s, lx); /* nested too deeply (E0007) */
      return emit(s, lx, c == '(' ? LPAREN : c == '[' ? LBRACKET : LBRACE);
    }
    if (c == ')' || c == ']' || c == '}') return scan_closer(s, lx, c);
    return scan_operator(s, lx, c);
  }
}

void *tree_sitter_scl_external_scanner_create(void) {
  Scanner *s = ts_calloc(1, sizeof(Scanner));
  s->cont = true;
  return s;
}

void tree_sitter_scl_external_scanner_destroy(void *payload) { ts_free(payload); }

unsigned tree_sitter_scl_external_scanner_serialize(void *payload, char *buffer) {
  Scanner *s = payload;
  buffer[0] = (char)s->cont;
  buffer[1] = (char)(s->len & 0xff);
  buffer[2] = (char)(s->len >> 8);
  memcpy(buffer + 3, s->frames, s->len);
  return 3 + s->len;
}

void tree_sitter_scl_external_scanner_deserialize(void *payload, const char *buffer,
                                                  unsigned length) {
  Scanner *s = payload;
  s->cont = true;
  s->len = 0;
  s->depth = 0;
  if (length < 3) return;
  s->cont = buffer[0] != 0;
  unsigned len = (uint8_t)buffer[1] | ((unsigned)(uint8_t)buffer[2] << 8);
  if (len > MAX_FRAMES || len > length - 3) len = length - 3 < MAX_FRAMES ? length - 3 : MAX_FRAMES;
  memcpy(s->frames, buffer + 3, len);
  s->len = (uint16_t)len;
  for (unsigned i = 0; i < len; i++) {
    if (!is_str(s->frames[i])) s->depth++;
  }
}

bool tree_sitter_scl_external_scanner_scan(void *payload, TSLexer *lexer,
                                           const bool *valid_symbols) {
  (void)valid_symbols;
  return scan((Scanner *)payload, lexer);
}
