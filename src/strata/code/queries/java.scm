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
