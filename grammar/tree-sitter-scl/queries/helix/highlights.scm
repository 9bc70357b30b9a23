; Highlights for SCL in Helix, with Helix's scope names
; (https://docs.helix-editor.com/themes.html#scopes): `constant.numeric`,
; `constant.builtin.boolean`, `variable.other.member`, `namespace`,
; `keyword.control.conditional`, `comment.line`, ... The same patterns as
; ../highlights.scm, which uses nvim-treesitter's names.
;
; Order matters: where several patterns capture the same node, the LAST one
; wins (Helix's rule since it reversed its precedence: "Same span: last match
; wins"); where a parent and a child node are both captured, the child wins.
; So the generic rules come first and a rule captures the leaf it means.
; crates/scl-syntax/tests/tree_sitter.rs checks the winning capture of every
; construct on test/highlight-fixture/all.env.scl.

; ---- generic ------------------------------------------------------------------

(identifier) @variable

[
  "env"
  "extends"
  "with"
  "where"
] @keyword

[
  "param"
  "let"
  "enum"
] @keyword.storage.type

"import" @keyword.control.import
"as" @keyword.control.import
"fn" @keyword.function

[
  "if"
  "then"
  "else"
] @keyword.control.conditional

"for" @keyword.control.repeat
"in" @keyword.operator

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

; ---- literals -----------------------------------------------------------------

(string) @string
(escape_sequence) @constant.character.escape
(interpolation
  "${" @punctuation.special
  "}" @punctuation.special)
(integer) @constant.numeric.integer
(float) @constant.numeric.float
(quantity) @constant.numeric
[
  (true)
  (false)
] @constant.builtin.boolean
(self) @variable.builtin

; ---- declarations -------------------------------------------------------------

(import_declaration
  path: (string) @string.special.path
  alias: (identifier) @namespace)
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
(enum_variant) @type.enum.variant
(parameter
  name: (identifier) @variable.parameter)
(named_argument
  name: (identifier) @variable.parameter)

; ---- types --------------------------------------------------------------------

(named_type
  (identifier) @type)
((named_type
  .
  (identifier) @type.builtin
  .)
  (#any-of? @type.builtin
    "Bool" "Int" "Float" "String" "Path" "Url" "Version" "Image" "Memory" "Cpu"
    "Requirement" "MatchSpec" "File" "Secret"))
; `mod.Type`: the module alias
(named_type
  (identifier) @namespace
  .
  ".")
(map_type
  key: (identifier) @type.builtin)

; ---- fields and values --------------------------------------------------------

(field_path
  (identifier) @variable.other.member)
(field_path
  (string) @variable.other.member)
(field_expression
  field: (identifier) @variable.other.member)
(enum_literal
  "." @type.enum.variant
  name: (identifier) @type.enum.variant)

; ---- calls, parents and module members ----------------------------------------

(call_expression
  function: (identifier) @function)
((call_expression
  function: (identifier) @function.builtin)
  (#any-of? @function.builtin
    "image" "file" "secret" "huggingface" "url" "len" "join" "split" "replace"
    "lower" "upper" "contains" "keys"))
(call_expression
  function: (field_expression
    value: (identifier) @namespace
    field: (identifier) @function))
(extends_clause
  parent: (identifier) @type)
(extends_clause
  parent: (field_expression
    value: (identifier) @namespace
    field: (identifier) @type))
(extends_clause
  parent: (call_expression
    function: (identifier) @type))
(extends_clause
  parent: (call_expression
    function: (field_expression
      value: (identifier) @namespace
      field: (identifier) @type)))

; ---- comments (last: nothing overrides them) -----------------------------------

(comment) @comment.line
(doc_comment) @comment.line.documentation
