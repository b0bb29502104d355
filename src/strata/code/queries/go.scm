; Go extraction query. Capture convention: see README.md in this folder.

(package_clause (package_identifier) @package)

; ---- definitions
(function_declaration
  name: (identifier) @name) @definition.function

; `func (s *Server) Handle()`: the adapter reads the receiver for the qualname
(method_declaration
  name: (field_identifier) @name) @definition.method

(type_spec
  name: (type_identifier) @name
  type: (struct_type)) @definition.struct

(type_spec
  name: (type_identifier) @name
  type: (interface_type)) @definition.interface

(type_spec
  name: (type_identifier) @name
  type: [
    (type_identifier) (qualified_type) (generic_type) (pointer_type) (array_type)
    (slice_type) (map_type) (channel_type) (function_type) (negated_type)
  ]) @definition.type

(type_alias
  name: (type_identifier) @name) @definition.type

(interface_type
  (method_elem
    name: (field_identifier) @name) @definition.method)

(source_file
  (const_declaration
    (const_spec
      name: (identifier) @name) @definition.constant))

; ---- calls; composite literals `Foo{...}` count as constructor calls
(call_expression
  function: (identifier) @name @callee
  arguments: (_) @arguments) @reference.call

(call_expression
  function: (selector_expression
    operand: (_) @receiver
    field: (field_identifier) @name) @callee
  arguments: (_) @arguments) @reference.call

; generic calls `Map[int](x)` parse as conversions or index expressions
(type_conversion_expression
  type: (generic_type
    type: [
      (type_identifier) @name
      (qualified_type package: (_) @receiver name: (_) @name)
    ]) @callee) @reference.call

(call_expression
  function: (index_expression
    operand: [
      (identifier) @name
      (selector_expression operand: (_) @receiver field: (field_identifier) @name)
    ]) @callee
  arguments: (_) @arguments) @reference.call

(composite_literal
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
  ] @callee) @reference.call

(composite_literal
  type: [
    (qualified_type package: (_) @receiver name: (_) @name)
    (generic_type type: (qualified_type package: (_) @receiver name: (_) @name))
  ] @callee) @reference.call

; ---- imports: module is the import path, alias the local name ("_" and "." as written)
(import_spec
  name: (_)? @alias
  path: (_) @module) @import

; ---- declared types: what a call on a name reaches (see README.md)
[
  (parameter_declaration name: (identifier) @name type: (_) @type)
  (var_spec name: (identifier) @name type: (_) @type)
] @typed.local

; `x := T{}` / `x := &T{}` / `x, err := NewT()` (the first result)
[
  (short_var_declaration
    left: (expression_list . (identifier) @name)
    right: (expression_list . [
      (composite_literal type: (_) @type)
      (unary_expression operand: (composite_literal type: (_) @type))
    ]))
  (var_spec
    name: (identifier) @name
    value: (expression_list . [
      (composite_literal type: (_) @type)
      (unary_expression operand: (composite_literal type: (_) @type))
    ]))
] @typed.local

[
  (short_var_declaration
    left: (expression_list . (identifier) @name)
    right: (expression_list . (call_expression function: (_) @call)))
  (var_spec
    name: (identifier) @name
    value: (expression_list . (call_expression function: (_) @call)))
] @typed.local

(field_declaration
  name: (field_identifier) @name
  type: (_) @type) @typed.member

; a declared result, or the first of several: `func NewT() (*T, error)`
[
  (function_declaration result: (parameter_list . (parameter_declaration type: (_) @type)))
  (function_declaration result: (_) @type)
  (method_declaration result: (parameter_list . (parameter_declaration type: (_) @type)))
  (method_declaration result: (_) @type)
  (method_elem result: (parameter_list . (parameter_declaration type: (_) @type)))
  (method_elem result: (_) @type)
] @typed.return
