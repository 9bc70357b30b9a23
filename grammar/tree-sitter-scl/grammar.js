/**
 * @file tree-sitter grammar for SCL (`.env.scl` files).
 *
 * The contract is grammar/scl.ebnf; this grammar accepts exactly the token
 * sequences it accepts. Every token comes from the external scanner
 * (src/scanner.c), which is a C port of crates/scl-syntax/src/lexer.rs: it
 * tracks the bracket and string nesting and the last token, so that it emits
 * a NEWLINE token exactly where the compiler's lexer does (top level and
 * directly inside `{...}`, not after a token that continues the line, not
 * before a line starting with `then`, `else` or `with`), lexes strings with
 * `${...}` interpolation, and turns what the compiler's lexer reports as an
 * error (unknown escape, bad number suffix, stray closer, unknown character)
 * into a token no rule accepts, so the tree has an ERROR node there.
 */

/* eslint-disable arrow-parens, camelcase */

const PREC = {
  if: -1,
  or: 1,
  and: 2,
  compare: 3,
  sum: 4,
  product: 5,
  unary: 6,
  with: 7,
  postfix: 8,
};

/**
 * The separator: the NEWLINE token of the compiler's lexer, which the
 * external scanner emits (a line end at top level or directly inside `{...}`
 * that does not continue the line). It is a visible anonymous node named
 * `newline` (the word the compiler's messages use for it; its text is the
 * line end), so that a separator the parser's error recovery inserts is a
 * `(MISSING "newline")` node that editors, `tree-sitter parse` and the
 * corpus tests see. A hidden `_newline` is inserted as an invisible MISSING
 * node: the tree looks correct where the compiler reports E0001 ("expected
 * newline or end of file", two declarations or items on one line).
 */
const NL = 'newline';

/** `rule { sep rule }` */
const sep1 = (rule, sep) => seq(rule, repeat(seq(sep, rule)));

/**
 * The body of a brace list whose elements are separated by `sep`:
 * `"{" { sep } { element sep { sep } } [ element ] "}"`, which is the EBNF's
 * `"{" { SEP } { item ( SEP | &"}" ) { SEP } } "}"`.
 */
const braced = (element, sep) =>
  seq('{', repeat(sep), repeat(seq(element, repeat1(sep))), optional(element), '}');

module.exports = grammar({
  name: 'scl',

  externals: $ => [
    NL,
    $._dropped_newline,
    $._hidden,
    $._invalid,
    $.comment,
    $.doc_comment,
    $.identifier,
    $.integer,
    $.float,
    $.quantity,
    $.string_content,
    $.escape_sequence,
    '"',
    '"""',
    '${',
    'import', 'as', 'param', 'let', 'fn', 'env', 'enum', 'extends', 'with',
    'if', 'then', 'else', 'for', 'in', 'where', 'true', 'false', 'self',
    '=', '+=', '-=', '==', '!=', '<', '<=', '>', '>=', '+', '-', '*', '/',
    '!', '&&', '||', '.', ',', ':', '?', '->',
    '(', ')', '[', ']', '{', '}',
  ],

  // Whitespace the scanner skipped (the built-in lexer only sees it before
  // the end of the file), comments, invisible characters (error E0010 in the
  // compiler, which skips them too) and newlines that are not separators.
  extras: $ => [/\s/, $.comment, $.doc_comment, $._hidden, $._dropped_newline],

  supertypes: $ => [$._declaration, $._item, $._expression, $._type],

  rules: {
    // module = { NL } { decl ( NL | EOF ) { NL } } EOF
    source_file: $ => seq(
      repeat(NL),
      repeat(seq($._declaration, repeat1(NL))),
      optional($._declaration),
    ),

    _declaration: $ => choice(
      $.import_declaration,
      $.param_declaration,
      $.let_declaration,
      $.enum_declaration,
      $.fn_declaration,
      $.env_declaration,
    ),

    import_declaration: $ => seq(
      'import',
      field('path', alias($._plain_string, $.string)),
      'as',
      field('alias', $.identifier),
    ),

    param_declaration: $ => seq(
      'param',
      field('name', $.identifier),
      ':',
      field('type', $._type),
      '=',
      field('default', $._expression),
      optional(seq('where', field('constraint', $._expression))),
    ),

    let_declaration: $ => seq(
      'let',
      field('name', $.identifier),
      '=',
      field('value', $._expression),
    ),

    enum_declaration: $ => seq(
      'enum',
      field('name', $.identifier),
      field('body', $.enum_body),
    ),

    enum_body: $ => braced(alias($.identifier, $.enum_variant), $._separator),

    fn_declaration: $ => seq(
      'fn',
      field('name', $.identifier),
      field('parameters', $.parameters),
      optional(seq('->', field('return_type', $._type))),
      '=',
      field('body', $._expression),
    ),

    env_declaration: $ => seq(
      'env',
      field('name', $.identifier),
      optional(field('parameters', $.parameters)),
      optional(field('parents', $.extends_clause)),
      field('body', $.block),
    ),

    // parent = postfix: a name, mod.name, or a call
    extends_clause: $ => seq('extends', sep1(field('parent', $._primary), ',')),

    parameters: $ => seq(
      '(',
      optional(seq(sep1($.parameter, ','), optional(','))),
      ')',
    ),

    parameter: $ => seq(
      field('name', $.identifier),
      ':',
      field('type', $._type),
      optional(seq('=', field('default', $._expression))),
    ),

    // ---- types ---------------------------------------------------------------
    _type: $ => choice($.named_type, $.list_type, $.map_type, $.optional_type),

    named_type: $ => sep1($.identifier, '.'),

    list_type: $ => seq('[', field('element', $._type), ']'),

    map_type: $ => seq(
      '{',
      optional(NL),
      field('key', $.identifier),
      ':',
      field('value', $._type),
      optional(NL),
      '}',
    ),

    // T? is optional; T?? is the same as T?
    optional_type: $ => seq(
      field('type', choice($.named_type, $.list_type, $.map_type)),
      repeat1('?'),
    ),

    // ---- blocks and items ------------------------------------------------------
    _separator: $ => choice(NL, ','),

    block: $ => braced($._item, $._separator),

    _item: $ => choice($.assignment, $.nested_block, $.if_item),

    assignment: $ => seq(
      field('path', $.field_path),
      field('operator', choice('=', '+=', '-=')),
      field('value', $._expression),
    ),

    nested_block: $ => seq(
      field('path', $.field_path),
      field('body', $.block),
    ),

    // quoted keys: labels."a.b/c" = "x"; no interpolation
    field_path: $ => sep1(choice($.identifier, alias($._plain_string, $.string)), '.'),

    if_item: $ => seq(
      'if',
      field('condition', $._expression),
      field('consequence', $.block),
      optional(seq('else', field('alternative', choice($.block, $.if_item)))),
    ),

    // ---- expressions -------------------------------------------------------------
    _expression: $ => choice(
      $._primary,
      $.with_expression,
      $.unary_expression,
      $.binary_expression,
      $.if_expression,
    ),

    // if-then-else extends as far right as possible
    if_expression: $ => prec.right(PREC.if, seq(
      'if',
      field('condition', $._expression),
      'then',
      field('consequence', $._expression),
      'else',
      field('alternative', $._expression),
    )),

    binary_expression: $ => {
      const table = [
        [PREC.or, '||'],
        [PREC.and, '&&'],
        [PREC.compare, choice('==', '!=', '<', '<=', '>', '>=')],
        [PREC.sum, choice('+', '-')],
        [PREC.product, choice('*', '/')],
      ];
      return choice(...table.map(([p, op]) => prec.left(p, seq(
        field('left', $._expression),
        field('operator', op),
        field('right', $._expression),
      ))));
    },

    unary_expression: $ => prec(PREC.unary, seq(
      field('operator', choice('!', '-')),
      field('operand', $._expression),
    )),

    // postfix { "with" block }: nothing but another `with` follows a with-block
    with_expression: $ => prec.left(PREC.with, seq(
      field('value', choice($._primary, $.with_expression)),
      'with',
      field('body', $.block),
    )),

    _primary: $ => choice(
      $.identifier,
      $.integer,
      $.float,
      $.quantity,
      $.true,
      $.false,
      $.self,
      $.string,
      $.enum_literal,
      $.parenthesized_expression,
      $.list,
      $.list_comprehension,
      $.record,
      $.call_expression,
      $.field_expression,
      $.index_expression,
    ),

    call_expression: $ => prec(PREC.postfix, seq(
      field('function', $._primary),
      field('arguments', $.arguments),
    )),

    field_expression: $ => prec(PREC.postfix, seq(
      field('value', $._primary),
      '.',
      field('field', $.identifier),
    )),

    index_expression: $ => prec(PREC.postfix, seq(
      field('value', $._primary),
      '[',
      field('index', $._expression),
      ']',
    )),

    // positional arguments first, then named ones
    arguments: $ => seq(
      '(',
      optional(seq(
        choice(
          seq(sep1($._expression, ','), optional(seq(',', sep1($.named_argument, ',')))),
          sep1($.named_argument, ','),
        ),
        optional(','),
      )),
      ')',
    ),

    named_argument: $ => seq(
      field('name', $.identifier),
      '=',
      field('value', $._expression),
    ),

    true: _ => 'true',
    false: _ => 'false',
    self: _ => 'self',

    enum_literal: $ => seq('.', field('name', $.identifier)),

    parenthesized_expression: $ => seq('(', $._expression, ')'),

    list: $ => seq(
      '[',
      optional(seq(sep1($._expression, ','), optional(','))),
      ']',
    ),

    list_comprehension: $ => seq(
      '[',
      'for',
      field('variable', $.identifier),
      'in',
      field('iterable', $._expression),
      optional(seq('if', field('condition', $._expression))),
      ':',
      field('body', $._expression),
      ']',
    ),

    record: $ => braced($._item, $._separator),

    string: $ => choice(
      seq('"', repeat($._string_piece), '"'),
      seq('"""', repeat($._string_piece), '"""'),
    ),

    _string_piece: $ => choice($.string_content, $.escape_sequence, $.interpolation),

    // a string without interpolation (import paths, quoted keys)
    _plain_string: $ => choice(
      seq('"', repeat(choice($.string_content, $.escape_sequence)), '"'),
      seq('"""', repeat(choice($.string_content, $.escape_sequence)), '"""'),
    ),

    interpolation: $ => seq('${', $._expression, '}'),
  },
});
