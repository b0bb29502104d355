; TypeScript extraction query, shared by the typescript and tsx grammars.
; Capture convention: see README.md in this folder.

; ---- definitions
(class_declaration
  name: (type_identifier) @name) @definition.class

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(enum_declaration
  name: (identifier) @name) @definition.enum

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

(internal_module
  name: (identifier) @name) @definition.module

; named class expressions (`const A = class B {}`; also what error recovery yields)
(class
  name: (type_identifier) @name) @definition.class

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

; overload signatures and `declare function`
(function_signature
  name: (identifier) @name) @definition.function

(class_body
  (method_definition
    name: (_) @name) @definition.method)

(class_body
  (abstract_method_signature
    name: (_) @name) @definition.method)

(class_body
  (method_signature
    name: (_) @name) @definition.method)

(interface_body
  (method_signature
    name: (_) @name) @definition.method)

; class fields holding a function: `handle = (e) => {...}`
(public_field_definition
  name: (_) @name
  value: [(arrow_function) (function_expression)]) @definition.method

; `const f = () => {}` / `const f = function () {}` anywhere
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; module-level UPPER_CASE constants (function values are left to the pattern above)
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: (_)) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(program
  (export_statement
    declaration: (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        value: (_)) @definition.constant))
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

; ---- calls and constructor calls
(call_expression
  function: (identifier) @name @callee
  arguments: (_) @arguments) @reference.call

(call_expression
  function: (member_expression
    object: (_) @receiver
    property: [(property_identifier) (private_property_identifier)] @name) @callee
  arguments: (_) @arguments) @reference.call

(new_expression
  constructor: (identifier) @name @callee
  arguments: (_)? @arguments) @reference.call

(new_expression
  constructor: (member_expression
    object: (_) @receiver
    property: (property_identifier) @name) @callee
  arguments: (_)? @arguments) @reference.call

; ---- imports (module is the specifier as written)
(import_statement
  (import_clause
    (identifier) @default)
  source: (string (string_fragment) @module)) @import

(import_statement
  (import_clause
    (namespace_import (identifier) @alias))
  source: (string (string_fragment) @module)) @import

(import_statement
  (import_clause
    (named_imports
      (import_specifier
        name: (_) @imported
        alias: (_)? @alias)))
  source: (string (string_fragment) @module)) @import

(import_statement
  .
  source: (string (string_fragment) @module)) @import

(import_statement
  (import_require_clause
    (identifier) @alias
    source: (string (string_fragment) @module))) @import

;; include: ecmascript
(variable_declarator
  name: (identifier) @name
  type: (type_annotation (_) @type)) @typed.local

[
  (required_parameter pattern: (identifier) @name type: (type_annotation (_) @type))
  (optional_parameter pattern: (identifier) @name type: (type_annotation (_) @type))
] @typed.local

; `constructor(private svc: Service)`: a parameter that is also a field
[
  (required_parameter
    (accessibility_modifier) pattern: (identifier) @name type: (type_annotation (_) @type))
  (optional_parameter
    (accessibility_modifier) pattern: (identifier) @name type: (type_annotation (_) @type))
] @typed.member

(public_field_definition
  name: (property_identifier) @name
  type: (type_annotation (_) @type)) @typed.member

(public_field_definition
  name: (property_identifier) @name
  value: (new_expression constructor: (_) @type)) @typed.member

[
  (function_declaration return_type: (type_annotation (_) @type))
  (method_definition return_type: (type_annotation (_) @type))
  (arrow_function return_type: (type_annotation (_) @type))
  (function_expression return_type: (type_annotation (_) @type))
  (interface_body (method_signature return_type: (type_annotation (_) @type)))
  (abstract_method_signature return_type: (type_annotation (_) @type))
] @typed.return
