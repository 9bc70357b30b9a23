; Highlights for SCL. Capture names follow the common tree-sitter set
; (Neovim, Helix and Zed all understand them).

(comment) @comment
(doc_comment) @comment.documentation

[
  "import"
  "as"
  "param"
  "let"
  "env"
  "extends"
  "with"
  "where"
] @keyword

"fn" @keyword.function
"enum" @keyword.type

[
  "if"
  "then"
  "else"
] @keyword.conditional

[
  "for"
  "in"
] @keyword.repeat

[
  "="
  "+="
  "-="
  "=="
  "!="
  "<"
  "<="
  ">"
  ">="
  "+"
  "-"
  "*"
  "/"
  "!"
  "&&"
  "||"
  "->"
  "?"
] @operator

[
  "."
  ","
  ":"
] @punctuation.delimiter

[
  "("
  ")"
  "["
  "]"
  "{"
  "}"
] @punctuation.bracket

(interpolation
  "${" @punctuation.special
  "}" @punctuation.special)

(string) @string
(escape_sequence) @string.escape
(integer) @number
(float) @number.float
(quantity) @number
[
  (true)
  (false)
] @boolean
(self) @variable.builtin

; Declarations
(import_declaration
  path: (string) @string.special.path
  alias: (identifier) @module)
(param_declaration
  name: (identifier) @constant)
(let_declaration
  name: (identifier) @constant)
(fn_declaration
  name: (identifier) @function)
(env_declaration
  name: (identifier) @type)
(enum_declaration
  name: (identifier) @type)
(enum_variant) @constant
(parameter
  name: (identifier) @variable.parameter)
(named_argument
  name: (identifier) @variable.parameter)
(list_comprehension
  variable: (identifier) @variable)

; Types
(named_type
  (identifier) @type)
(map_type
  key: (identifier) @type.builtin)

; Fields and keys
(field_path
  (identifier) @property)
(field_path
  (string) @property)
(field_expression
  field: (identifier) @property)
(enum_literal) @constant

; Calls and parents
(call_expression
  function: (identifier) @function.call)
(call_expression
  function: (field_expression
    field: (identifier) @function.call))
(extends_clause
  parent: (identifier) @type)
(extends_clause
  parent: (field_expression
    field: (identifier) @type))

(identifier) @variable
