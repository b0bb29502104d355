; C# extraction query. Capture convention: see README.md in this folder.

(file_scoped_namespace_declaration name: (_) @package)
(namespace_declaration name: (_) @package)

; ---- definitions
(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(interface_declaration
  name: (identifier) @name) @definition.interface

(struct_declaration
  name: (identifier) @name) @definition.struct

(enum_declaration
  name: (identifier) @name) @definition.enum

(delegate_declaration
  name: (identifier) @name) @definition.type

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(local_function_statement
  name: (identifier) @name) @definition.function

; `const` and `static readonly` fields (the adapter checks the modifiers)
(field_declaration
  (variable_declaration
    (variable_declarator
      name: (identifier) @name) @definition.constant))

; ---- calls and constructor calls
(invocation_expression
  function: [
    (identifier) @name
    (generic_name (identifier) @name)
  ] @callee
  arguments: (_) @arguments) @reference.call

(invocation_expression
  function: (member_access_expression
    expression: _ @receiver  ; `_`: also the anonymous `this` and `base`
    name: [
      (identifier) @name
      (generic_name (identifier) @name)
    ]) @callee
  arguments: (_) @arguments) @reference.call

(invocation_expression
  function: (conditional_access_expression
    condition: (_) @receiver
    (member_binding_expression
      name: [
        (identifier) @name
        (generic_name (identifier) @name)
      ])) @callee
  arguments: (_) @arguments) @reference.call

(object_creation_expression
  type: [
    (identifier) @name
    (generic_name (identifier) @name)
    (qualified_name qualifier: (_) @receiver name: [
      (identifier) @name
      (generic_name (identifier) @name)
    ])
  ] @callee
  arguments: (_)? @arguments) @reference.call

; ---- imports: `using A.B;`, `using X = A.B;`, `using static A.B;`
(using_directive) @import.directive

; ---- declared types: what a call on a name reaches (see README.md); `var` is no type
(local_declaration_statement
  (variable_declaration
    type: (_) @type
    (variable_declarator name: (identifier) @name))) @typed.local

(local_declaration_statement
  (variable_declaration
    (variable_declarator
      name: (identifier) @name
      (object_creation_expression type: (_) @type)))) @typed.local

(local_declaration_statement
  (variable_declaration
    (variable_declarator
      name: (identifier) @name
      (invocation_expression function: (_) @call)))) @typed.local

[
  (parameter type: (_) @type name: (identifier) @name)
  (foreach_statement type: (_) @type left: (identifier) @name)
] @typed.local

(field_declaration
  (variable_declaration
    type: (_) @type
    (variable_declarator name: (identifier) @name))) @typed.member

(property_declaration
  type: (_) @type
  name: (identifier) @name) @typed.member

(method_declaration
  returns: (_) @type) @typed.return
