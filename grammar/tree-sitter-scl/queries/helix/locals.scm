; Scopes, definitions and references for SCL in Helix
; (https://docs.helix-editor.com/guides/locals.html). A reference that
; resolves to a definition is highlighted with the definition's suffix:
; `@local.definition.variable.parameter` gives `variable.parameter`. Module
; declarations are visible in the whole file; template and function
; parameters in their declaration; the variable of a comprehension in the
; comprehension. ../locals.scm is the same with nvim-treesitter's names.
;
; Later patterns take precedence: the discards (`@_…`) at the end stop
; names that are not references (fields, named arguments, enum literals)
; from resolving to a definition of the same name.

(source_file) @local.scope
(fn_declaration) @local.scope
(env_declaration) @local.scope
(list_comprehension) @local.scope

(import_declaration
  alias: (identifier) @local.definition.namespace)
(param_declaration
  name: (identifier) @local.definition.constant)
(let_declaration
  name: (identifier) @local.definition.constant)
(fn_declaration
  name: (identifier) @local.definition.function)
(env_declaration
  name: (identifier) @local.definition.type)
(enum_declaration
  name: (identifier) @local.definition.type)
(parameter
  name: (identifier) @local.definition.variable.parameter)
(list_comprehension
  variable: (identifier) @local.definition.variable)

(identifier) @local.reference

; not references: field names, named arguments, enum literals
(field_path
  (identifier) @_field)
(field_expression
  field: (identifier) @_field)
(named_argument
  name: (identifier) @_argument)
(enum_literal
  name: (identifier) @_enum_literal)
