;; What JavaScript and TypeScript share, at the same place in both (languages/base.py
;; reads an "include:" line as the text of the file it names).

(export_statement
  (export_clause
    (export_specifier
      name: (_) @imported
      alias: (_)? @alias))
  source: (string (string_fragment) @module)) @import

(export_statement
  (namespace_export (_) @alias)
  source: (string (string_fragment) @module)) @import

(export_statement
  "*" @wildcard
  source: (string (string_fragment) @module)) @import

(call_expression
  function: (import)
  arguments: (arguments . (string (string_fragment) @module))) @import

(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @module) .)
  (#eq? @_require "require")) @import.require

; ---- CommonJS exports (symbols and export names)
; `exports.run = function () {}` / `module.exports.run = () => {}`: a function named run
(assignment_expression
  left: (member_expression
    object: (identifier) @_exports
    property: (property_identifier) @name)
  right: [(function_expression) (arrow_function)] @definition.function
  (#eq? @_exports "exports"))

(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @_module
      property: (property_identifier) @_exports)
    property: (property_identifier) @name)
  right: [(function_expression) (arrow_function)] @definition.function
  (#eq? @_module "module")
  (#eq? @_exports "exports"))

; `module.exports = Service` (the module is Service) / `module.exports = { a, b: c }`
(assignment_expression
  left: (member_expression
    object: (identifier) @_module
    property: (property_identifier) @_exports)
  right: [(identifier) @local (class name: (_) @local)]
  (#eq? @_module "module")
  (#eq? @_exports "exports")) @export.module

(assignment_expression
  left: (member_expression
    object: (identifier) @_module
    property: (property_identifier) @_exports)
  right: (object) @object
  (#eq? @_module "module")
  (#eq? @_exports "exports")) @export.object

; `exports.run = start` / `module.exports.run = start`
(assignment_expression
  left: (member_expression
    object: [(identifier) (member_expression)] @_exports
    property: (property_identifier) @exported)
  right: (identifier) @local
  (#match? @_exports "^(module\\.)?exports$")) @export.named

; ES: `export default Service` / `export { a as b }` (no `from`: a local renamed)
(export_statement
  value: (identifier) @local) @export.default

(export_statement
  "default"
  declaration: [(class_declaration name: (_) @local) (function_declaration name: (_) @local)]
  ) @export.default

(export_statement
  (export_clause
    (export_specifier
      name: (_) @local
      alias: (_) @exported))
  !source) @export.named

; `export { a }` / `export { a } from "./m"` / `export { a as b } from "./m"`: the
; module exports that name (a re-export is followed through the import it also is)
(export_statement
  (export_clause
    (export_specifier
      name: (_) @local
      !alias))) @export.named

(export_statement
  (export_clause
    (export_specifier
      alias: (_) @local))
  source: (_)) @export.named

; ---- declared types: what a call on a name reaches (see README.md)
(variable_declarator
  name: (identifier) @name
  value: (new_expression constructor: (_) @type)) @typed.local

(variable_declarator
  name: (identifier) @name
  value: [
    (call_expression function: (_) @call)
    (await_expression (call_expression function: (_) @call))
  ]) @typed.local

(assignment_expression
  left: (member_expression
    object: (this)
    property: (property_identifier) @name)
  right: (new_expression constructor: (_) @type)) @typed.member

