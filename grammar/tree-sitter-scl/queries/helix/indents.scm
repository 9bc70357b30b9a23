; Indentation for SCL in Helix (https://docs.helix-editor.com/guides/indent.html):
; one level inside every bracket; the closer goes back. ../indents.scm is the
; same with nvim-treesitter's capture names.

[
  (block)
  (record)
  (enum_body)
  (list)
  (list_comprehension)
  (arguments)
  (parameters)
  (map_type)
  (parenthesized_expression)
] @indent

[
  "}"
  "]"
  ")"
] @outdent
