; Highlights for SCL, with the capture names of nvim-treesitter (which
; Zed and the tree-sitter CLI understand too). Helix names its scopes
; differently: its queries are in queries/helix/.
;
; Order matters: where several patterns capture the same node, the LAST one
; wins (tree-sitter 0.27's highlighter, Neovim, Zed; Helix too since it
; reversed its order). Where a parent and a child node are both captured,
; the child (innermost) wins. So the generic rules come first and the
; specific ones after them, and a rule captures the leaf it means.
; crates/scl-syntax/tests/tree_sitter.rs checks the winning capture of every
; construct on test/highlight-fixture/all.env.scl.

; ---- generic ------------------------------------------------------------------

(identifier) @variable

[
  "param"
  "let"
  "env"
  "extends"
  "with"
  "where"
] @keyword

"import" @keyword.import
"as" @keyword.import
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

; ---- literals -----------------------------------------------------------------

(string) @string
(escape_sequence) @string.escape
(interpolation
  "${" @punctuation.special
  "}" @punctuation.special)
(integer) @number
(float) @number.float
(quantity) @number
[
  (true)
  (false)
] @boolean
(self) @variable.builtin

; ---- declarations -------------------------------------------------------------

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
  (identifier) @module
  .
  ".")
(map_type
  key: (identifier) @type.builtin)

; ---- fields and values --------------------------------------------------------

(field_path
  (identifier) @property)
(field_path
  (string) @property)
(field_expression
  field: (identifier) @property)
(enum_literal
  "." @constant
  name: (identifier) @constant)

; ---- calls, parents and module members ----------------------------------------

(call_expression
  function: (identifier) @function.call)
((call_expression
  function: (identifier) @function.builtin)
  (#any-of? @function.builtin
    "image" "file" "secret" "huggingface" "url" "len" "join" "split" "replace"
    "lower" "upper" "contains" "keys"))
(call_expression
  function: (field_expression
    value: (identifier) @module
    field: (identifier) @function.call))
(extends_clause
  parent: (identifier) @type)
(extends_clause
  parent: (field_expression
    value: (identifier) @module
    field: (identifier) @type))
(extends_clause
  parent: (call_expression
    function: (identifier) @type))
(extends_clause
  parent: (call_expression
    function: (field_expression
      value: (identifier) @module
      field: (identifier) @type)))

; ---- comments (last: nothing overrides them) -----------------------------------

(comment) @comment
(doc_comment) @comment.documentation
