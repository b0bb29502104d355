; Kotlin extraction query. Capture convention: see README.md in this folder.

(package_header (qualified_identifier) @package)

; ---- definitions
; classes, interfaces and enum classes are all `class_declaration`; the adapter
; reads the `interface` keyword and the `enum` modifier to refine the kind
(class_declaration
  name: (identifier) @name) @definition.class

(object_declaration
  name: (identifier) @name) @definition.class

(function_declaration
  name: (identifier) @name) @definition.function

(type_alias
  type: (identifier) @name) @definition.type

; `const val` properties (the adapter checks the modifier)
(property_declaration
  (variable_declaration
    (identifier) @name)) @definition.constant

; ---- calls (constructor calls look like function calls: `Cart()`)
(call_expression
  .
  (identifier) @name
  (value_arguments)? @arguments) @reference.call

(call_expression
  .
  (navigation_expression
    (_) @receiver
    .
    (identifier) @name
    .)
  (value_arguments)? @arguments) @reference.call

; ---- imports: module is the imported name as written ("a.b.C", "a.b.*")
(import) @import.declaration

; ---- declared types: what a call on a name reaches (see README.md); `Foo()` constructs
(class_body
  (property_declaration
    (variable_declaration (identifier) @name [(user_type) (nullable_type)] @type))) @typed.member

(class_body
  (property_declaration
    (variable_declaration (identifier) @name)
    (call_expression . (_) @call))) @typed.member

(class_parameter ["val" "var"] (identifier) @name [(user_type) (nullable_type)] @type) @typed.member

(block
  (property_declaration
    (variable_declaration (identifier) @name [(user_type) (nullable_type)] @type))) @typed.local

(block
  (property_declaration
    (variable_declaration (identifier) @name)
    (call_expression . (_) @call))) @typed.local

(parameter (identifier) @name [(user_type) (nullable_type)] @type) @typed.local

(function_declaration
  (function_value_parameters) . [(user_type) (nullable_type)] @type) @typed.return
