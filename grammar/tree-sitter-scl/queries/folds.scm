; Folds: declarations and every bracketed construct that spans lines.

[
  (env_declaration)
  (fn_declaration)
  (enum_body)
  (block)
  (record)
  (list)
  (list_comprehension)
  (arguments)
  (parameters)
  (map_type)
  (string)
] @fold
