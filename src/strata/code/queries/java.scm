; Java extraction query. Capture convention: see README.md in this folder.

(package_declaration (_) @package)

; ---- definitions
(class_declaration
  name: (identifier) @name) @definition.class

(record_declaration
  name: (identifier) @name) @definition.class

(interface_declaration
  name: (identifier) @name) @definition.interface

(annotation_type_declaration
  name: (identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(method_declaration
  name: (identifier) @name) @definition.method

(constructor_declaration
  name: (identifier) @name) @definition.method

(compact_constructor_declaration
  name: (identifier) @name) @definition.method

; `static final` fields (the adapter checks the modifiers) and interface constants
(field_declaration
  declarator: (variable_declarator
    name: (identifier) @name) @definition.constant)

(constant_declaration
  declarator: (variable_declarator
    name: (identifier) @name) @definition.constant)

; ---- calls and constructor calls
(method_invocation
  object: (_)? @receiver
  name: (identifier) @name
  arguments: (argument_list) @arguments) @reference.call

(object_creation_expression
  type: [
    (type_identifier) @name
    (generic_type (type_identifier) @name)
    (scoped_type_identifier (_) @receiver . (type_identifier) @name .)
    (generic_type (scoped_type_identifier (_) @receiver . (type_identifier) @name .))
  ] @callee
  arguments: (argument_list) @arguments) @reference.call

; ---- imports: module is the imported name as written ("java.util.List", "java.util.*")
(import_declaration) @import.declaration

; ---- declared types: what a call on a name reaches (see README.md); `var` is no type
(local_variable_declaration
  type: (_) @type
  declarator: (variable_declarator name: (identifier) @name)) @typed.local

(local_variable_declaration
  declarator: (variable_declarator
    name: (identifier) @name
    value: (object_creation_expression type: (_) @type))) @typed.local

(local_variable_declaration
  declarator: (variable_declarator
    name: (identifier) @name
    value: (method_invocation) @call)) @typed.local

[
  (formal_parameter type: (_) @type name: (identifier) @name)
  (enhanced_for_statement type: (_) @type name: (identifier) @name)
] @typed.local

(field_declaration
  type: (_) @type
  declarator: (variable_declarator name: (identifier) @name)) @typed.member

(method_declaration
  type: (_) @type) @typed.return
