; Scopes and definitions for SCL, with nvim-treesitter's capture names
; (`@local.definition.parameter`, `@local.definition.var`, ...). Helix names
; them differently: its version is helix/locals.scm. Module declarations are
; visible in the whole file; template and function parameters in their
; declaration; the variable of a comprehension in the comprehension.

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
  name: (identifier) @local.definition.parameter)
(list_comprehension
  variable: (identifier) @local.definition.var)

(identifier) @local.reference
