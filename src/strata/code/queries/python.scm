; Python extraction query. Capture convention: see README.md in this folder.

; ---- definitions
(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

; Module-level UPPER_CASE assignments are constants; `X: TypeAlias = ...` and
; `type X = ...` are type aliases.
(module
  (expression_statement
    (assignment
      left: (identifier) @name
      !type)) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

(module
  (expression_statement
    (assignment
      left: (identifier) @name
      type: (type) @_type)) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$")
  (#not-match? @_type "TypeAlias$"))

(module
  (expression_statement
    (assignment
      left: (identifier) @name
      type: (type) @_type)) @definition.type
  (#match? @_type "TypeAlias$"))

(type_alias_statement
  left: (type (identifier) @name)) @definition.type

; ---- calls (the constructor call `Foo()` is an ordinary call)
(call
  function: (identifier) @name @callee
  arguments: (_) @arguments) @reference.call

(call
  function: (attribute
    object: (_) @receiver
    attribute: (identifier) @name) @callee
  arguments: (_) @arguments) @reference.call

; ---- imports (relative modules keep their dots: ".utils", "..pkg.mod")
(import_statement
  name: (dotted_name) @module) @import

(import_statement
  name: (aliased_import
    name: (dotted_name) @module
    alias: (identifier) @alias)) @import

(import_from_statement
  module_name: (_) @module
  name: (dotted_name) @imported) @import

(import_from_statement
  module_name: (_) @module
  name: (aliased_import
    name: (dotted_name) @imported
    alias: (identifier) @alias)) @import

(import_from_statement
  module_name: (_) @module
  (wildcard_import) @wildcard) @import

; `from __future__ import x` has its own node without a module field
(future_import_statement
  "__future__" @module
  name: [
    (dotted_name) @imported
    (aliased_import name: (dotted_name) @imported alias: (identifier) @alias)
  ]) @import

; ---- file-level entrypoint: if __name__ == "__main__":
(module
  (if_statement
    condition: (comparison_operator
      (identifier) @_left
      (string (string_content) @_right))) @entrypoint.script
  (#eq? @_left "__name__")
  (#eq? @_right "__main__"))

; ---- calls of an element: `handlers["a"](...)`, `self.hooks[0](...)` (strata.code.flow
; resolves them through the container's values); the name is the subscripted one.
(call
  function: (subscript
    value: [
      (identifier) @name
      (attribute attribute: (identifier) @name)
    ]) @callee
  arguments: (_) @arguments) @reference.call
