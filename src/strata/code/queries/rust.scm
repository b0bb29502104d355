; Rust extraction query. Capture convention: see README.md in this folder.

; ---- definitions
(struct_item
  name: (type_identifier) @name) @definition.struct

(union_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(trait_item
  name: (type_identifier) @name) @definition.trait

(function_item
  name: (identifier) @name) @definition.function

(function_signature_item
  name: (identifier) @name) @definition.function

(mod_item
  name: (identifier) @name) @definition.module

(const_item
  name: (identifier) @name) @definition.constant

(static_item
  name: (identifier) @name) @definition.constant

(type_item
  name: (type_identifier) @name) @definition.type

; `impl [Trait for] Type { ... }`: names its methods `Type.method`, is no symbol itself
(impl_item
  trait: (_)? @trait
  type: (_) @name) @scope.impl

; ---- calls; struct literals `Foo { .. }` count as constructor calls
(call_expression
  function: [
    (identifier) @name
    (field_expression value: (_) @receiver field: (field_identifier) @name)
    (scoped_identifier path: (_) @receiver name: (identifier) @name)
    (generic_function function: [
      (identifier) @name
      (field_expression value: (_) @receiver field: (field_identifier) @name)
      (scoped_identifier path: (_) @receiver name: (identifier) @name)
    ])
  ] @callee
  arguments: (arguments) @arguments) @reference.call

(struct_expression
  name: [
    (type_identifier) @name
    (scoped_type_identifier path: (_) @receiver name: (type_identifier) @name)
    (generic_type_with_turbofish type: (type_identifier) @name)
  ] @callee) @reference.call

; calls written inside macro arguments (`assert!(cart.validate())`) are token
; trees, not expressions: an identifier directly followed by a parenthesised
; token tree; the adapter checks the two are adjacent
(token_tree
  (identifier) @name
  .
  (token_tree) @arguments) @reference.token_call

; ---- imports: use trees are flattened by the adapter
(use_declaration
  argument: (_) @tree) @import.use

(extern_crate_declaration
  name: (identifier) @module
  alias: (identifier)? @alias) @import

; ---- declared types: what a call on a name reaches (see README.md)
[
  (let_declaration pattern: (identifier) @name type: (_) @type)
  (let_declaration
    pattern: (identifier) @name
    value: (struct_expression name: (_) @type))
  (let_declaration
    pattern: (identifier) @name
    value: (reference_expression value: (struct_expression name: (_) @type)))
  (parameter pattern: (identifier) @name type: (_) @type)
] @typed.local

(let_declaration
  pattern: (identifier) @name
  value: (call_expression function: (_) @call)) @typed.local

(field_declaration
  name: (field_identifier) @name
  type: (_) @type) @typed.member

(function_item
  return_type: (_) @type) @typed.return

(function_signature_item
  return_type: (_) @type) @typed.return
