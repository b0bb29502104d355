; JavaScript (and JSX) extraction query. Capture convention: see README.md in this folder.

; ---- definitions
(class_declaration
  name: (identifier) @name) @definition.class

; named class expressions (`const A = class B {}`; also what error recovery yields)
(class
  name: (identifier) @name) @definition.class

(function_declaration
  name: (identifier) @name) @definition.function

(generator_function_declaration
  name: (identifier) @name) @definition.function

(class_body
  (method_definition
    name: (_) @name) @definition.method)

; class fields holding a function: `handle = (e) => {...}`
(field_definition
  property: (_) @name
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

;; include: ecmascript
(field_definition
  property: (property_identifier) @name
  value: (new_expression constructor: (_) @type)) @typed.member
