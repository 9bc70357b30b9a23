; Indentation: one level inside every bracket; the closer goes back.

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
] @indent.begin

[
  "}"
  "]"
  ")"
] @indent.branch @indent.end

; A continued line: `then`/`else`/`with` lines and the operand after an operator.
(if_expression
  "then" @indent.begin)
